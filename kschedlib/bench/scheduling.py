"""Schedule every pending pod of a scenario through the facade and report throughput."""

from __future__ import annotations

import gc
import resource
import sys
import time
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.scenario import Scenario
from kschedlib.framework.handle import FakeClock
from kschedlib.results import Outcome, SchedulingResult
from kschedlib.scheduler import Scheduler


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (ru_maxrss is KiB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / (1024 * 1024)


@attrs.define(slots=True)
class BenchRun:
    """One timed run: the scenario, its results in order, and the timings."""

    scenario: Scenario
    pending: int
    results: list[SchedulingResult]
    setup: float
    wall: float
    cpu: float = 0.0
    """Process CPU time of the timed loop (steadier than wall time on a busy machine)."""

    @property
    def scheduled(self) -> int:
        return sum(1 for r in self.results if r.outcome == Outcome.Scheduled)

    @property
    def pods_per_second(self) -> float:
        """Scheduling attempts per second of the timed loop."""
        return len(self.results) / self.wall if self.wall > 0 else 0.0

    @property
    def pending_per_second(self) -> float:
        """Pending pods per second of the timed loop (a preempting pod counts once)."""
        return self.pending / self.wall if self.wall > 0 else 0.0


def load(path: str | None, workload: str | None = None) -> Scenario:
    """The scenario file, or a synthetic ``workload`` (on its nodes, or on its own)."""
    if workload == "dra-structured-500n":
        from kschedlib.bench.workloads import dra_structured_scenario

        return dra_structured_scenario()
    if workload == "dra-partitionable-500n":
        from kschedlib.bench.workloads import dra_partitionable_scenario

        return dra_partitionable_scenario()
    if workload == "dra-consumable-500n":
        from kschedlib.bench.workloads import dra_consumable_scenario

        return dra_consumable_scenario()
    if path is None:
        raise ValueError("a scenario file is needed")
    scenario = Scenario.load(path)
    if workload == "anti-affinity-spread":
        from kschedlib.bench.workloads import anti_affinity_spread_pods, with_pending

        scenario = with_pending(scenario, anti_affinity_spread_pods(400, 5))
    return scenario


def loaded_scheduler(
    scenario: Scenario, limit: int | None = None, **options: Any
) -> tuple[Scheduler, list[Pod]]:
    """A fresh Scheduler (seed 0, fake clock, no explanations unless ``options`` say so) fed
    the scenario's cluster and its first ``limit`` pending pods, and those pods."""
    options.setdefault("seed", 0)
    options.setdefault("explain", False)
    if scenario.feature_gates:
        options.setdefault("feature_gates", dict(scenario.feature_gates))
    sched = Scheduler(scenario.config, clock=FakeClock(), **options)
    for node in scenario.nodes:
        sched.add_node(node)
    for obj in scenario.other_objects():
        sched.add_object(obj)
    for pod in scenario.pods:
        sched.add_pod(pod)
    pending = list(scenario.pending[:limit] if limit else scenario.pending)
    for pod in pending:
        sched.add_pod(pod)
    return sched, pending


def schedule(
    scenario: Scenario, limit: int | None = None, *, in_file_order: bool = False,
    freeze_gc: bool = True, **options: Any
) -> BenchRun:
    """Feed the scenario to a fresh Scheduler and time ``run()`` over its pending pods, or
    with ``in_file_order`` one ``schedule_pod`` cycle per pending pod in file order (as
    kube-scheduler's placement harness does)."""
    t0 = time.perf_counter()
    sched, pending = loaded_scheduler(scenario, limit, **options)
    # The loaded cluster is long-lived: keep it out of the collector's full passes while
    # timing (as whatif_speed does; ``freeze_gc=False`` leaves the collector as it is).
    # A process that froze objects itself keeps its own freeze (unfreezing is all or nothing).
    freeze_gc = freeze_gc and gc.get_freeze_count() == 0
    if freeze_gc:
        gc.collect()
        gc.freeze()
    setup = time.perf_counter() - t0
    t1 = time.perf_counter()
    c1 = time.process_time()
    try:
        if in_file_order:
            results = []
            for pod in pending:
                r = sched.schedule_pod(pod)
                if r is not None:
                    results.append(r)
        else:
            results = sched.run()
        wall = time.perf_counter() - t1
        cpu = time.process_time() - c1
    finally:
        if freeze_gc:
            gc.unfreeze()
    return BenchRun(scenario, len(pending), results, setup, wall, cpu)


def run(
    path: str | None, limit: int | None = None, out: Any = None, workload: str | None = None,
    feature_gates: str | None = None, freeze_gc: bool = True,
) -> dict[str, float]:
    """Schedule the scenario's pending pods (or a synthetic ``workload`` on its nodes)."""
    out = out or sys.stdout
    b = schedule(load(path, workload), limit, feature_gates=feature_gates, freeze_gc=freeze_gc)
    scheduled = b.scheduled
    attempts = len(b.results)
    print(f"scenario: {b.scenario.name} ({len(b.scenario.nodes)} nodes, {b.pending} pending pods)", file=out)
    print(f"setup: {b.setup:.2f} s", file=out)
    print(f"attempts: {attempts}, scheduled: {scheduled}, unschedulable: {attempts - scheduled}", file=out)
    print(f"wall time: {b.wall:.2f} s (cpu {b.cpu:.2f} s)", file=out)
    print(f"peak memory: {peak_rss_mb():.0f} MB", file=out)
    print(f"pods/second: {b.pods_per_second:.1f}", file=out)
    return {"wall": b.wall, "pods_per_second": b.pods_per_second, "scheduled": scheduled}
