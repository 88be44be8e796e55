"""Helpers that write the common sweep shapes as lists of variants."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from kschedlib.errors import InvalidObjectError
from kschedlib.sweep.cluster import BaseCluster, node_zone
from kschedlib.sweep.variant import NodeAddition, PodAddition, Variant


def baseline() -> Variant:
    """The base cluster unchanged: the reference row of a sweep."""
    return Variant(name="baseline", description="no change")


def zones_down(base: BaseCluster) -> list[Variant]:
    """One variant per zone, with every node of that zone gone."""
    zones = base.zones()
    if not zones:
        raise InvalidObjectError("sweep", "zones", "no node has a topology.kubernetes.io/zone label")
    return [Variant(name=f"zone-down:{z}", remove_zones=(z,), description=f"zone {z} lost")
            for z in zones]


def nodes_down(base: BaseCluster, names: Sequence[str] | None = None) -> list[Variant]:
    """One variant per node (all nodes, or ``names``), with that node gone."""
    chosen = [n.metadata.name for n in base.nodes] if names is None else list(names)
    known = {n.metadata.name for n in base.nodes}
    for n in chosen:
        if n not in known:
            raise InvalidObjectError("sweep", "nodes", f"node {n!r} is not in the cluster")
    return [Variant(name=f"node-down:{n}", remove_nodes=(n,), description=f"node {n} lost")
            for n in chosen]


def parse_range(spec: str) -> list[float]:
    """``start:stop:step`` (inclusive, decimal steps without float drift) or a single number."""
    parts = spec.split(":")
    try:
        nums = [Decimal(p) for p in parts]
    except Exception:
        raise InvalidObjectError("sweep", "growth", f"expected START:STOP:STEP, got {spec!r}") from None
    if len(nums) == 1:
        return [float(nums[0])]
    if len(nums) != 3 or nums[2] <= 0 or nums[1] < nums[0]:
        raise InvalidObjectError("sweep", "growth", f"expected START:STOP:STEP with STEP > 0, got {spec!r}")
    start, stop, step = nums
    out = []
    x = start
    while x <= stop:
        out.append(float(x))
        x += step
    return out


def growth(
    factors: Sequence[float] | str,
    *,
    pod: Mapping[str, Any] | None = None,
    replicas: int = 1,
) -> list[Variant]:
    """One variant per growth factor: the cluster's pending pods scaled by the factor, or,
    with ``pod``, ``round(replicas * factor)`` replicas of that pod."""
    values = parse_range(factors) if isinstance(factors, str) else list(factors)
    out = []
    for f in values:
        if pod is None:
            out.append(Variant(name=f"growth:{f:g}", pending_scale=f,
                               description=f"pending pods x{f:g}"))
        else:
            n = round(replicas * f)
            out.append(Variant(name=f"growth:{f:g}", pending_scale=0.0,
                               add_pods=(PodAddition(template=pod, count=n),),
                               description=f"{n} replicas (x{f:g})"))
    return out


def node_pools(
    alternatives: Mapping[str, tuple[Mapping[str, Any] | str, int]],
    *,
    replace: Mapping[str, str] | None = None,
) -> list[Variant]:
    """One variant per node-pool shape: ``name -> (node template, count)`` nodes added; with
    ``replace``, nodes carrying those labels (the current pool) are removed first."""
    return [
        Variant(
            name=f"pool:{name}",
            remove_node_labels=dict(replace or {}),
            add_nodes=(NodeAddition(template=tpl, count=count, prefix=f"pool-{name}"),),
            description=f"{count} x {name}",
        )
        for name, (tpl, count) in alternatives.items()
    ]


def random_failures(
    base: BaseCluster, *, samples: int, nodes: int = 1, seed: int = 0, by_zone: bool = False
) -> list[Variant]:
    """``samples`` variants, each losing ``nodes`` nodes drawn at random (seeded, so the same
    call gives the same sets); with ``by_zone``, nodes of one random zone only."""
    if nodes < 1 or nodes > len(base.nodes):
        raise InvalidObjectError("sweep", "nodes", f"must be between 1 and {len(base.nodes)}")
    rng = random.Random(seed)
    names = sorted(n.metadata.name for n in base.nodes)
    zone_of = {n.metadata.name: node_zone(n) for n in base.nodes}
    out = []
    for i in range(samples):
        pool = names
        if by_zone:
            zone = rng.choice(base.zones())
            pool = [n for n in names if zone_of[n] == zone]
        picked = sorted(rng.sample(pool, min(nodes, len(pool))))
        out.append(Variant(name=f"failure:{i}", remove_nodes=tuple(picked),
                           description=f"{len(picked)} nodes lost (seed {seed})"))
    return out
