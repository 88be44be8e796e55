"""Schedule every pending pod of a scenario through the facade and report throughput."""

from __future__ import annotations

import resource
import sys
import time
from typing import Any

from kschedlib.conformance.scenario import Scenario
from kschedlib.framework.handle import FakeClock
from kschedlib.results import Outcome
from kschedlib.scheduler import Scheduler


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (ru_maxrss is KiB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / (1024 * 1024)


def run(
    path: str | None, limit: int | None = None, out: Any = None, workload: str | None = None
) -> dict[str, float]:
    """Schedule the scenario's pending pods (or a synthetic ``workload`` on its nodes)."""
    out = out or sys.stdout
    t0 = time.perf_counter()
    if workload == "dra-structured-500n":
        from kschedlib.bench.workloads import dra_structured_scenario

        scenario = dra_structured_scenario()
    else:
        if path is None:
            raise ValueError("a scenario file is needed")
        scenario = Scenario.load(path)
    if workload == "anti-affinity-spread":
        from kschedlib.bench.workloads import anti_affinity_spread_pods, with_pending

        scenario = with_pending(scenario, anti_affinity_spread_pods(400, 5))
    sched = Scheduler(scenario.config, clock=FakeClock(), seed=0, explain=False)
    for node in scenario.nodes:
        sched.add_node(node)
    for obj in scenario.other_objects():
        sched.add_object(obj)
    for pod in scenario.pods:
        sched.add_pod(pod)
    pending = scenario.pending[:limit] if limit else scenario.pending
    for pod in pending:
        sched.add_pod(pod)
    setup = time.perf_counter() - t0
    t1 = time.perf_counter()
    results = sched.run()
    wall = time.perf_counter() - t1
    scheduled = sum(1 for r in results if r.outcome == Outcome.Scheduled)
    attempts = len(results)
    pps = attempts / wall if wall > 0 else 0.0
    print(f"scenario: {scenario.name} ({len(scenario.nodes)} nodes, {len(pending)} pending pods)", file=out)
    print(f"setup: {setup:.2f} s", file=out)
    print(f"attempts: {attempts}, scheduled: {scheduled}, unschedulable: {attempts - scheduled}", file=out)
    print(f"wall time: {wall:.2f} s", file=out)
    print(f"peak memory: {peak_rss_mb():.0f} MB", file=out)
    print(f"pods/second: {pps:.1f}", file=out)
    return {"wall": wall, "pods_per_second": pps, "scheduled": scheduled}
