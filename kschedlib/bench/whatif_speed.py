"""``python -m kschedlib.bench --whatif SCENARIO.json``: what-if at interactive speed.

One line per target: a one-pod ``transaction()`` round trip (median and p99), ``removable_nodes()``
over the candidates, and ``capacity()`` of templates with topology spread and with pod
(anti-)affinity. CPU times are printed beside wall times: the CPU time is the steadier figure on
a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

from kschedlib.api.objects import decode_any
from kschedlib.api.pod import Pod
from kschedlib.bench.whatif_bench import PROBE, _load
from kschedlib.scheduler import Scheduler

SPREAD: dict[str, Any] = {
    "metadata": {"name": "spread", "namespace": "default", "labels": {"app": "spread"}},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}],
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}},
        }],
    },
}
ANTI: dict[str, Any] = {
    "metadata": {"name": "anti", "namespace": "default", "labels": {"app": "anti"}},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app": "anti"}},
        }]}},
    },
}

PREFERRED: dict[str, Any] = {
    "metadata": {"name": "preferred", "namespace": "default", "labels": {"app": "preferred"}},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}],
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "preferred"}},
        }],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "preferred"}},
            },
        }]}},
    },
}
"""A Deployment's usual soft rules: ScheduleAnyway zone spreading and preferred hostname
anti-affinity (scores that are not node-local)."""

DEFAULT_SPREAD: dict[str, Any] = {
    "metadata": {"name": "service", "namespace": "default", "labels": {"app": "service"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m",
                                                                    "memory": "100Mi"}}}]},
}
"""Pods a Service selects: PodTopologySpread's system-default constraints (ScheduleAnyway,
hostname and zone) score them."""

NODE_PREFERRED: dict[str, Any] = {
    "metadata": {"name": "nodepref", "namespace": "default", "labels": {"app": "nodepref"}},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}],
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 50, "preference": {"matchExpressions": [{
                "key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"],
            }]},
        }]}},
    },
}
"""Preferred node affinity (a zone): a normalized node-local score."""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def transaction_round_trips(
    sched: Scheduler, rounds: int
) -> tuple[list[float], list[float], int]:
    """Wall and CPU seconds of ``rounds`` one-pod transactions (add, schedule, roll back),
    and how many of the pods were scheduled inside."""
    walls: list[float] = []
    cpus: list[float] = []
    placed = 0
    for i in range(rounds):
        pod = Pod.from_dict({**PROBE, "metadata": {**PROBE["metadata"], "name": f"txn-{i}"}})
        t, c = time.perf_counter(), time.process_time()
        with sched.transaction():
            sched.add_pod(pod)
            results = sched.run()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        placed += sum(1 for r in results if r.node)
    return walls, cpus, placed


def _replicated(sched: Scheduler) -> Scheduler:
    """A fork whose bound pods belong to a ReplicaSet (so cluster-autoscaler's rules let them
    move): what a scale-down simulation of a real cluster mostly sees."""
    from kschedlib.api.workloads import ReplicaSet

    work = sched.fork()
    namespaces = {p.metadata.namespace for p in work.bound_pods()}
    for ns in sorted(namespaces):
        work.add_object(ReplicaSet.from_dict({
            "metadata": {"name": "bench", "namespace": ns, "uid": f"rs-{ns}"},
            "spec": {"selector": {"matchLabels": {"app": "bench"}}},
        }))
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "bench",
              "controller": True}]
    for p in work.bound_pods():
        refs = [{**owner[0], "uid": f"rs-{p.metadata.namespace}"}]
        work.update_pod(Pod.from_dict({**p.to_dict(), "metadata": {
            **p.to_dict()["metadata"], "ownerReferences": refs}}))
    return work


def main(argv: list[str], out: Any = None) -> int:
    out = out or sys.stdout
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench --whatif")
    ap.add_argument("scenario")
    ap.add_argument("--rounds", type=int, default=200, help="transaction round trips")
    ap.add_argument("--candidates", type=int, default=None,
                    help="removable_nodes() over the first N nodes (default: all)")
    ap.add_argument("--replicas", type=int, default=5000, help="capacity() replicas per template")
    ap.add_argument("--only", default="txn,removable,capacity",
                    help="comma-separated subset of txn,removable,removable-fit,capacity")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    t = time.perf_counter()
    scenario, sched = _load(args.scenario, pending=True)
    sched.run()
    gc.collect()
    frozen = gc.get_freeze_count() == 0  # leave a freeze the caller made alone
    if frozen:
        gc.freeze()  # the loaded cluster is long-lived: keep it out of the collector's passes
    try:
        print(f"whatif scenario: {scenario.name} ({len(scenario.nodes)} nodes, "
              f"{len(sched.bound_pods())} pods bound), loaded in {time.perf_counter() - t:.1f} s",
              file=out)
        if "txn" in only:
            transaction_round_trips(sched, 3)  # warm-up
            walls, cpus, placed = transaction_round_trips(sched, args.rounds)
            print(f"whatif transaction round trip (1 pod, {placed}/{args.rounds} placed): median "
                  f"{statistics.median(walls) * 1000:.2f} ms, p99 {_pct(walls, 0.99) * 1000:.2f} ms "
                  f"wall; CPU median {statistics.median(cpus) * 1000:.2f} ms, p99 "
                  f"{_pct(cpus, 0.99) * 1000:.2f} ms (target: median < 5 ms, p99 < 20 ms)", file=out)
        for mode in ("schedule", "fit"):
            if ("removable" if mode == "schedule" else "removable-fit") not in only:
                continue
            work = _replicated(sched)
            names = sorted(work.cache.node_names())
            if args.candidates is not None:
                names = names[: args.candidates]
            t, c = time.perf_counter(), time.process_time()
            report = work.removable_nodes(names, mode=mode)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            removable = len(report.removable)
            label = "" if mode == "schedule" else ', mode="fit"'
            print(f"whatif removable_nodes (pods of a ReplicaSet{label}): {len(names)} candidates "
                  f"({removable} removable) in "
                  f"{cpu:.2f} s CPU ({wall:.2f} s wall), {cpu / max(len(names), 1) * 1000:.1f} ms "
                  "CPU per candidate (target: 5000 candidates < 15 s)", file=out)
        if "capacity" in only:
            serviced = sched.fork()
            serviced.add_object(decode_any({
                "kind": "Service", "metadata": {"name": "service", "namespace": "default"},
                "spec": {"selector": {"app": "service"}},
            }))
            for label, template, where in (
                ("topology spread", SPREAD, sched), ("pod anti-affinity", ANTI, sched),
                ("preferred spread and anti-affinity", PREFERRED, sched),
                ("system-default spreading of a Service", DEFAULT_SPREAD, serviced),
                ("preferred node affinity", NODE_PREFERRED, sched),
            ):
                pod = Pod.from_dict(template)
                t, c = time.perf_counter(), time.process_time()
                cap = where.capacity(pod, limit=args.replicas)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                print(f"whatif capacity ({label}): {cap.count} replicas ({cap.batched} batched) "
                      f"in {cpu:.2f} s CPU "
                      f"({wall:.2f} s wall): {cap.count / max(cpu, 1e-9):.0f} replicas/s CPU "
                      f"(target: >= 5000/s), stop: {cap.stop_reason}", file=out)
    finally:
        if frozen:
            gc.unfreeze()
    return 0
