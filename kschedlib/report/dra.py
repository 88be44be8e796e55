"""The DRA part of ``kschedlib simulate``: devices allocated per pod and device utilization
per node (devices of node-local ResourceSlices; network-attached pools per pool)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.plugins.dynamicresources import extended_resource_claim, pod_claims
from kschedlib.plugins.dynamicresources.allocator import allocated_devices


def pod_devices(objects: Any, pods: Iterable[Pod]) -> list[dict[str, Any]]:
    """Per pod with claims: each claim (the one kube-scheduler created for extended resources
    backed by DRA included) and the devices of its allocation, with the consumed capacity of
    shared devices."""
    rows: list[dict[str, Any]] = []
    has_ext = any(
        c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
        for c in objects.list_objects("ResourceClaim") if isinstance(c, ResourceClaim)
    )
    for pod in pods:
        claims: list[ResourceClaim] = []
        if pod.spec.resource_claims:
            claims, _ = pod_claims(pod, objects)
        ext = extended_resource_claim(pod, objects) if has_ext else None
        if ext is not None:
            claims.append(ext)
        for c in claims:
            alloc = c.status.allocation
            rows.append({
                "pod": pod.key,
                "claim": c.metadata.key,
                "devices": [] if alloc is None else [_device(r) for r in alloc.devices.results],
            })
    return rows


def _device(r: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device,
    }
    if r.admin_access:
        out["adminAccess"] = True
    if r.consumed_capacity:
        out["consumedCapacity"] = {k: str(q) for k, q in r.consumed_capacity.items()}
    return out


def device_utilization(objects: Any) -> list[dict[str, Any]]:
    """Allocated / published devices per node (node-local slices) and per network-attached
    pool, counting the current generation of each pool only."""
    slices = [s for s in objects.list_objects("ResourceSlice") if isinstance(s, ResourceSlice)]
    if not slices:
        return []
    claims = [c for c in objects.list_objects("ResourceClaim") if isinstance(c, ResourceClaim)]
    used = allocated_devices(claims)
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        key = (s.spec.driver, s.spec.pool.name)
        newest[key] = max(newest.get(key, s.spec.pool.generation), s.spec.pool.generation)
    per: dict[str, list[int]] = {}
    for s in sorted(slices, key=lambda s: s.metadata.name):
        if s.spec.pool.generation != newest[(s.spec.driver, s.spec.pool.name)]:
            continue
        where = s.spec.node_name or f"pool {s.spec.driver}/{s.spec.pool.name}"
        row = per.setdefault(where, [0, 0])
        for d in s.spec.devices:
            row[1] += 1
            if (s.spec.driver, s.spec.pool.name, d.name) in used:
                row[0] += 1
    return [{"node": k, "devicesAllocated": v[0], "devicesPublished": v[1]}
            for k, v in sorted(per.items())]


def write_text(objects: Any, pods: Iterable[Pod], out: TextIO) -> None:
    """The two DRA tables, when the cluster has resource claims or slices."""
    rows = pod_devices(objects, pods)
    if rows:
        out.write("\nAllocated devices (resource claims)\n")
        for r in rows:
            devs = ", ".join(
                f"{d['driver']}/{d['pool']}/{d['device']} ({d['request']}"
                f"{', admin' if d.get('adminAccess') else ''}"
                + "".join(f", {k} {v}" for k, v in d.get("consumedCapacity", {}).items())
                + ")" for d in r["devices"]
            ) or "(not allocated)"
            out.write(f"  {r['pod']}  {r['claim']}: {devs}\n")
    util = device_utilization(objects)
    if util:
        out.write("\nDevice utilization (allocated / published DRA devices)\n")
        for u in util:
            a, t = u["devicesAllocated"], u["devicesPublished"]
            pct = f"{100 * a / t:5.1f}%" if t else "   n/a"
            out.write(f"  {u['node']:<20} {a:>4}/{t:<4} {pct}\n")


__all__ = ["device_utilization", "pod_devices", "write_text"]
