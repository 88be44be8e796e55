"""Benchmark: incremental Cache.update_snapshot after one pod change vs. a full snapshot rebuild."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache import Cache
from kschedlib.backend.snapshot import Snapshot

DEFAULT_FILE = "../shared/bench/basic-5000n.json"


def _synthetic_node(i: int) -> dict[str, Any]:
    zone = "abc"[i % 3]
    alloc = {"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "metadata": {
            "name": f"node-{i:04d}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i:04d}",
                "topology.kubernetes.io/region": "r1",
                "topology.kubernetes.io/zone": f"r1{zone}",
            },
        },
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def _synthetic_pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"uid-{i}"},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
            ]
        },
    }


def load_objects(path: str | None, nodes: int, pods: int) -> tuple[list[Node], list[Pod]]:
    """Nodes and (bound) pods from a conformance-format file, or synthesized when absent."""
    node_dicts: list[dict[str, Any]]
    pod_dicts: list[dict[str, Any]]
    if path and Path(path).is_file():
        data = json.loads(Path(path).read_text())
        node_dicts = list(data.get("nodes", []))[:nodes]
        pod_dicts = (list(data.get("pods", [])) + list(data.get("pending", [])))[:pods]
    else:
        node_dicts = [_synthetic_node(i) for i in range(nodes)]
        pod_dicts = [_synthetic_pod(i) for i in range(pods)]
    node_objs = [Node.from_dict(d) for d in node_dicts]
    names = [n.metadata.name for n in node_objs]
    pod_objs = []
    for i, d in enumerate(pod_dicts):
        p = Pod.from_dict(d)
        if not p.spec.node_name or p.spec.node_name not in names:
            p = p.with_node_name(names[i % len(names)])
        pod_objs.append(p)
    return node_objs, pod_objs


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _relabel(pod: Pod, i: int) -> Pod:
    labels = dict(pod.metadata.labels)
    labels["bench-rev"] = str(i)
    return attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels=labels))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kschedlib.bench --snapshot", description=__doc__
    )
    parser.add_argument("scenario", nargs="?", help="scenario JSON (nodes, pods); default --file")
    parser.add_argument("--file", default=DEFAULT_FILE, help="scenario JSON when none is given")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000, help="pods bound round-robin")
    parser.add_argument("--full-runs", type=int, default=5)
    parser.add_argument("--incremental-runs", type=int, default=200)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    nodes, pods = load_objects(args.scenario or args.file, args.nodes, args.pods)
    t_load = time.perf_counter() - t0
    cache = Cache()
    t0 = time.perf_counter()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    t_fill = time.perf_counter() - t0

    full = [_timed(lambda: cache.update_snapshot(Snapshot())) for _ in range(args.full_runs)]
    from_objects = [
        _timed(lambda: Snapshot.from_objects(pods, nodes))
        for _ in range(max(1, args.full_runs // 2))
    ]
    snap = Snapshot()
    cache.update_snapshot(snap)

    unchanged = [_timed(lambda: cache.update_snapshot(snap)) for _ in range(args.incremental_runs)]
    incremental: list[float] = []
    current = {p.uid: p for p in pods}
    keys = list(current)
    for i in range(args.incremental_runs):
        key = keys[(i * 7919) % len(keys)]
        old = current[key]
        new = current[key] = _relabel(old, i)
        cache.update_pod(old, new)
        incremental.append(_timed(lambda: cache.update_snapshot(snap)))
    # The incrementally maintained snapshot must still match a fresh one.
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    assert [n.name for n in snap.list()] == [n.name for n in fresh.list()]

    full_ms = statistics.median(full) * 1e3
    inc_ms = statistics.median(incremental) * 1e3
    print(
        f"cluster: {len(nodes)} nodes, {len(pods)} pods (load {t_load:.2f} s, fill {t_fill:.2f} s)"
    )
    print(
        f"full rebuild (update_snapshot into empty Snapshot), median of {len(full)}: {full_ms:.2f} ms"
    )
    print(
        f"Snapshot.from_objects, median of {len(from_objects)}: "
        f"{statistics.median(from_objects) * 1e3:.2f} ms"
    )
    print(
        f"incremental update_snapshot, nothing changed, median: "
        f"{statistics.median(unchanged) * 1e6:.1f} us"
    )
    print(
        f"incremental update_snapshot after one pod update, median of {len(incremental)}: "
        f"{inc_ms * 1e3:.1f} us (max {max(incremental) * 1e6:.1f} us)"
    )
    print(
        f"ratio incremental/full: {inc_ms / full_ms:.6f} (full is {full_ms / inc_ms:.0f}x slower)"
    )
    return 0
