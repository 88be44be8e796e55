"""GatherAllocatedState: the devices and the shared capacity that allocated claims hold."""

from __future__ import annotations

from collections.abc import Iterable

from kschedlib.api.resource_v1 import ResourceClaim
from kschedlib.plugins.dynamicresources.structured.common import CapacityMap, DeviceID


def allocated_devices(
    claims: Iterable[ResourceClaim], shared_aware: bool = False
) -> set[DeviceID]:
    """GatherAllocatedState: devices of allocated claims, except admin-access results (and,
    with ``shared_aware`` (DRAConsumableCapacity), shared results)."""
    out: set[DeviceID] = set()
    for c in claims:
        alloc = c.status.allocation
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.admin_access or (shared_aware and r.share_id is not None):
                continue
            out.add((r.driver, r.pool, r.device))
    return out


def allocated_capacity(claims: Iterable[ResourceClaim]) -> dict[DeviceID, CapacityMap]:
    """The capacity that shared allocations (results with a share ID) consume, per device."""
    out: dict[DeviceID, CapacityMap] = {}
    for c in claims:
        alloc = c.status.allocation
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.share_id is None or not r.consumed_capacity:
                continue
            cur = out.setdefault((r.driver, r.pool, r.device), {})
            for name, q in r.consumed_capacity.items():
                cur[name] = cur.get(name, 0) + q.as_fraction()
    return out
