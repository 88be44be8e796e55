"""python -m kschedlib.bench --explain-cost SCENARIO.json [--limit N] [--rounds N]
python -m kschedlib.bench --html-cost SCENARIO.json [--limit N]

``--explain-cost``: the CPU time per pod of scheduling the scenario's pending pods with
explanations on (the default) and off, each on a fresh Scheduler, alternated ``--rounds``
times (the best of each is kept: the machine may be shared), and their ratio. As the
scheduling bench does, the loaded cluster is kept out of the collector's full passes while
timing (``gc.freeze()``; ``--gc-as-is`` leaves the collector as it is).

``--html-cost``: ``kschedlib simulate SCENARIO --quiet`` with and without ``--html``, each in
a child process, and the ratio of their CPU times (loading included, as a user waits for it).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from kschedlib.api.scenario import Scenario
from kschedlib.bench.scheduling import loaded_scheduler


def _cpu_per_pod(
    scenario: Scenario, limit: int | None, explain: bool, freeze_gc: bool = True
) -> tuple[float, int]:
    """CPU seconds per attempt of run() over the first ``limit`` pending pods, and attempts
    (the loaded cluster frozen for the collector while timing, as bench.scheduling does)."""
    sched, _ = loaded_scheduler(scenario, limit, explain=explain)
    gc.collect()
    freeze_gc = freeze_gc and gc.get_freeze_count() == 0
    if freeze_gc:
        gc.freeze()
    try:
        c0 = time.process_time()
        results = sched.run()
        cpu = time.process_time() - c0
    finally:
        if freeze_gc:
            gc.unfreeze()
    return cpu / max(len(results), 1), len(results)


def explain_cost(path: str, limit: int | None, rounds: int, freeze_gc: bool = True) -> int:
    scenario = Scenario.load(path)
    on: list[float] = []
    off: list[float] = []
    attempts = 0
    for _ in range(rounds):
        t, attempts = _cpu_per_pod(scenario, limit, False, freeze_gc)
        off.append(t)
        t, attempts = _cpu_per_pod(scenario, limit, True, freeze_gc)
        on.append(t)
    best_on, best_off = min(on), min(off)
    gc_note = "" if freeze_gc else ", collector as is"
    print(f"explain cost: {scenario.name}, {attempts} attempts, best of {rounds}{gc_note}: "
          f"{best_on * 1e3:.3f} ms/pod with explanations, {best_off * 1e3:.3f} ms/pod without "
          f"(ratio {best_on / best_off:.2f}, +{(best_on / best_off - 1) * 100:.0f}%)")
    return 0


def _child_cpu(argv: Sequence[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and peak RSS (MB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "w") as devnull:
        subprocess.run(argv, check=True, stdout=devnull)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024


def html_cost(path: str) -> int:
    base = [sys.executable, "-m", "kschedlib", "simulate", path, "--quiet", "--summary"]
    with tempfile.TemporaryDirectory() as tmp:
        plain, _ = _child_cpu(base)
        out = os.path.join(tmp, "r.html")
        html, _ = _child_cpu([*base, "--html", out])
        size = os.path.getsize(out) / (1 << 20)
    print(f"html cost: simulate {os.path.basename(path)}: {plain:.1f} s CPU, with --html "
          f"{html:.1f} s CPU ({size:.1f} MiB page): ratio {html / plain:.2f}")
    return 0


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench --explain-cost|--html-cost",
                                 description=__doc__)
    ap.add_argument("scenario", help="scenario JSON (conformance format)")
    ap.add_argument("--what", choices=["explain-cost", "html-cost"], required=True)
    ap.add_argument("--limit", type=int, default=2000,
                    help="--explain-cost: the first N pending pods (default 2000)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="--explain-cost: runs of each kind (the best is kept; default 2)")
    ap.add_argument("--gc-as-is", action="store_true",
                    help="--explain-cost: do not gc.freeze() the loaded cluster while timing")
    args = ap.parse_args(list(argv))
    if args.what == "html-cost":
        return html_cost(args.scenario)
    return explain_cost(
        args.scenario, args.limit or None, max(args.rounds, 1), freeze_gc=not args.gc_as_is
    )
