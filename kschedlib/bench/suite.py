"""Run every workload of a bench directory, each in its own process (for its peak memory),
and print one line per workload."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from kschedlib.bench.scheduling import load, peak_rss_mb, schedule


def workload_files(directory: str) -> list[str]:
    """The scenario files of a bench directory, by name."""
    return sorted(
        os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".json")
    )


def measure(path: str, limit: int | None = None) -> dict[str, Any]:
    """Run one workload in this process; the figures of its suite line."""
    b = schedule(load(path), limit)
    return {
        "name": b.scenario.name or os.path.basename(path),
        "nodes": len(b.scenario.nodes),
        "pending": b.pending,
        "attempts": len(b.results),
        "scheduled": b.scheduled,
        "wall": b.wall,
        "pods_per_second": b.pending_per_second,
        "peak_mb": peak_rss_mb(),
    }


def format_line(m: dict[str, Any]) -> str:
    return (
        f"{m['name']:<36} {m['nodes']:>5} nodes {m['pending']:>6} pods "
        f"{m['pods_per_second']:>8.1f} pods/s  wall {m['wall']:>7.2f} s  "
        f"peak {m['peak_mb']:>5.0f} MB  ({m['attempts']} attempts, {m['scheduled']} scheduled)"
    )


def main(directory: str, limit: int | None = None, only: str | None = None, out: Any = None) -> int:
    """Each workload in a child process (``--one``) so peak memory is its own."""
    out = out or sys.stdout
    files = workload_files(directory)
    if only:
        wanted = set(only.split(","))
        files = [f for f in files if os.path.basename(f)[: -len(".json")] in wanted]
    if not files:
        print(f"no workloads in {directory}", file=out)
        return 1
    print("workload                             nodes       pods   pods/s (pending pods / wall "
          "of the scheduling loop), peak RSS of the process", file=out)
    failed = 0
    for path in files:
        cmd = [sys.executable, "-m", "kschedlib.bench", "--one", path]
        if limit:
            cmd += ["--limit", str(limit)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            failed += 1
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{os.path.basename(path):<36} FAILED: {tail}", file=out)
            continue
        m = json.loads(proc.stdout.strip().splitlines()[-1])
        print(format_line(m), file=out, flush=True)
    return 1 if failed else 0
