"""Input loading benchmark: how long a big kubectl dump takes to load, and its peak memory.

``python -m kschedlib.bench.load_bench --make 50 pods.json --from DUMP`` writes a ``kind: List``
of about 50 MB (kubectl's 4-space JSON, or YAML as kubectl writes it for a ``.yaml`` name) by
repeating the pods of a real dump under new names; ``python -m kschedlib.bench.load_bench
FILE...`` (or ``python -m kschedlib.bench --load FILE...``) loads each file in a fresh process
and prints objects, size, CPU and wall time, and peak resident memory; a YAML file once with
each reader installed (libfyaml of ``kschedlib[fastyaml]``, and PyYAML).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence

DEFAULT_SOURCE = os.path.join("tests", "data", "realdata", "describecluster__pods.json")

# Peak memory is the process's own high-water mark (VmHWM): ru_maxrss would carry over the
# parent's peak across fork on Linux.
_CHILD = """
import resource, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from kschedlib.api import load_objects, loader
objs = load_objects(sys.argv[1])
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
try:
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
except OSError:
    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
yaml = sys.argv[1].endswith((".yaml", ".yml"))
reader = "json" if not yaml else "libfyaml" if loader._libfyaml is not None else "pyyaml"
print(len(objs), f"{cpu:.2f}", f"{wall:.2f}", hwm // 1024, reader)
"""


def make_list(megabytes: float, out: str, source: str) -> int:
    """Write a List of about ``megabytes`` MB from the pods of ``source``; returns the count."""
    with open(source, encoding="utf-8") as fh:
        items = json.load(fh)["items"]
    as_yaml = out.endswith((".yaml", ".yml"))
    target = megabytes * 1_000_000
    pods: list[dict[str, object]] = []
    size = 0.0
    i = 0
    while size < target:
        for p in items:
            q = copy.deepcopy(p)
            q["metadata"]["name"] = f"{p['metadata']['name']}-{i}"
            q["metadata"]["uid"] = f"{p['metadata'].get('uid', 'uid')}-{i}"
            i += 1
            pods.append(q)
            # kubectl's indented JSON is about 2.35x the compact form; its YAML about 1.05x
            size += len(json.dumps(q, separators=(",", ":"))) * (1.05 if as_yaml else 2.35)
            if size >= target:
                break
    doc = {"apiVersion": "v1", "items": pods, "kind": "List", "metadata": {"resourceVersion": ""}}
    with open(out, "w", encoding="utf-8") as fh:
        if as_yaml:
            import yaml

            text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                             default_flow_style=False, width=1 << 30)
            fh.write(re.sub(r"'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)'", r"\1", text))
        else:
            json.dump(doc, fh, indent=4)
    return len(pods)


def measure(path: str, reader: str = "") -> str:
    """One load of ``path`` in a fresh process; ``reader="pyyaml"`` forces PyYAML."""
    env = dict(os.environ, KSCHEDLIB_YAML=reader) if reader else None
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, path], check=True, capture_output=True, text=True, env=env
    ).stdout.split()
    n, cpu, wall, rss, used = out
    mb = os.path.getsize(path) / 1e6
    return (
        f"load {os.path.basename(path)} [{used}]: {n} objects, {mb:.1f} MB, {cpu} s CPU, "
        f"{wall} s wall, peak RSS {rss} MB"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench.load_bench", description=__doc__)
    ap.add_argument("files", nargs="*", help="dumps to load")
    ap.add_argument("--make", nargs=2, metavar=("MB", "OUT"), help="write a List of MB megabytes")
    ap.add_argument("--from", dest="source", default=DEFAULT_SOURCE, help="real pod dump to repeat")
    args = ap.parse_args(argv)
    if args.make:
        n = make_list(float(args.make[0]), args.make[1], args.source)
        print(f"wrote {args.make[1]}: {n} pods, {os.path.getsize(args.make[1]) / 1e6:.1f} MB")
    for path in args.files:
        line = measure(path)
        print(line, flush=True)
        if "[libfyaml]" in line:
            print(measure(path, "pyyaml"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
