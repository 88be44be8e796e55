"""What-if benchmarks: fork time and memory, and the batched capacity loop."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.scenario import Scenario
from kschedlib.bench.scheduling import peak_rss_mb
from kschedlib.framework.handle import FakeClock
from kschedlib.scheduler import Scheduler

PROBE: dict[str, Any] = {
    "metadata": {"name": "probe", "namespace": "default", "labels": {"app": "probe"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]},
}


def _load(path: str, pending: bool) -> tuple[Scenario, Scheduler]:
    scenario = Scenario.load(path)
    sched = Scheduler(scenario.config, clock=FakeClock(), seed=0, explain=False)
    for node in scenario.nodes:
        sched.add_node(node)
    for obj in scenario.other_objects():
        sched.add_object(obj)
    for pod in scenario.pods:
        sched.add_pod(pod)
    if pending:
        for pod in scenario.pending:
            sched.add_pod(pod)
    return scenario, sched


def _fork_times(sched: Scheduler, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        sched.fork()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000, min(times) * 1000


def run_fork(path: str, repeat: int = 5, out: Any = None) -> dict[str, float]:
    """Fork a scheduler holding the scenario with its pods pending, then with them bound."""
    out = out or sys.stdout
    scenario, sched = _load(path, pending=True)
    print(f"scenario: {scenario.name} ({len(scenario.nodes)} nodes, "
          f"{len(scenario.pods) + len(scenario.pending)} pods)", file=out)
    med_p, min_p = _fork_times(sched, repeat)
    print(f"fork, {len(sched.pending_pods())} pods pending: median {med_p:.1f} ms, min {min_p:.1f} ms",
          file=out)
    sched.run()
    med_b, min_b = _fork_times(sched, repeat)
    print(f"fork, {len(sched.bound_pods())} pods bound: median {med_b:.1f} ms, min {min_b:.1f} ms",
          file=out)
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    fork = sched.fork()
    after_fork = tracemalloc.take_snapshot()
    for i in range(100):
        p = Pod.from_dict({**PROBE, "metadata": {**PROBE["metadata"], "name": f"probe-{i}"}})
        fork.add_pod(p)
    fork.run()
    after_use = tracemalloc.take_snapshot()
    tracemalloc.stop()
    kib_fork = sum(s.size_diff for s in after_fork.compare_to(base, "filename")) / 1024
    kib_use = sum(s.size_diff for s in after_use.compare_to(after_fork, "filename")) / 1024
    print(f"memory: fork {kib_fork:.0f} KiB, then +{kib_use:.0f} KiB after scheduling 100 pods in it",
          file=out)
    print(f"peak memory: {peak_rss_mb():.0f} MB", file=out)
    return {"fork_pending_ms": med_p, "fork_bound_ms": med_b}


def run_capacity(path: str, replicas: int = 5000, out: Any = None) -> dict[str, float]:
    """capacity() of a 100m/500Mi pod on the scenario's nodes (its pending pods left out)."""
    out = out or sys.stdout
    scenario, sched = _load(path, pending=False)
    probe = Pod.from_dict(PROBE)
    t = time.perf_counter()
    c = time.process_time()
    report = sched.capacity(probe, limit=replicas)
    wall = time.perf_counter() - t
    cpu = time.process_time() - c
    print(f"scenario: {scenario.name} ({len(scenario.nodes)} nodes)", file=out)
    print(f"capacity: {report.count} replicas of 100m/500Mi on {len(report.distribution)} nodes "
          f"({report.batched} batched), stop: {report.stop_reason}", file=out)
    print(f"capacity wall time: {wall:.2f} s (CPU {cpu:.2f} s)", file=out)
    return {"wall": wall, "cpu": cpu, "count": report.count}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench --fork|--capacity")
    ap.add_argument("scenario")
    ap.add_argument("--what", choices=["fork", "capacity"], required=True)
    ap.add_argument("--replicas", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    if args.what == "fork":
        run_fork(args.scenario, args.repeat)
    else:
        run_capacity(args.scenario, args.replicas)
    return 0
