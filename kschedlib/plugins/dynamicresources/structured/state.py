"""The allocator's state: per scheduling cycle (classes, allocated devices, slices and the
caches the per-node runs share) and per allocate call (one node's search)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import (
    Device,
    DeviceClass,
    DeviceTaint,
    DeviceTaintRule,
    ResourceClaim,
)
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache
from kschedlib.plugins.dynamicresources.structured.common import (
    CapacityMap,
    DeviceID,
    Features,
    _Req,
    _Result,
)
from kschedlib.plugins.dynamicresources.structured.constraint import _MatchAttribute
from kschedlib.plugins.dynamicresources.structured.consumable_capacity import _frac
from kschedlib.plugins.dynamicresources.structured.matching import device_taints
from kschedlib.plugins.dynamicresources.structured.pools import SliceIndex, _Pool


class AllocatorState:
    """The per-cycle view of the cluster's devices and the caches the per-node runs share."""

    __slots__ = (
        "features", "classes", "allocated", "slices", "cel", "matches", "_setups",
        "request_matches", "allocated_capacity", "taint_rules", "_taints", "_available",
    )

    def __init__(
        self,
        features: Features,
        allocated: AbstractSet[DeviceID],
        classes: Callable[[str], DeviceClass | None],
        slices: SliceIndex,
        cel: SelectorCache,
        request_matches: dict[Any, tuple[Any, Device, bool]] | None = None,
        *,
        allocated_capacity: Mapping[DeviceID, CapacityMap] | None = None,
        taint_rules: Sequence[DeviceTaintRule] = (),
    ) -> None:
        self.features = features
        # Capacity consumed on shared devices by allocated claims (DRAConsumableCapacity).
        self.allocated_capacity: Mapping[DeviceID, CapacityMap] = allocated_capacity or {}
        # DeviceTaintRules (DRADeviceTaintRules): their taints add to the devices' own.
        self.taint_rules = tuple(taint_rules)
        self._taints: dict[DeviceID, tuple[Device, tuple[DeviceTaint, ...]]] = {}
        # Per pool name: counters left after the allocated devices (checkAvailableCounters).
        self._available: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.request_matches = request_matches if request_matches is not None else {}
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self.cel = cel
        # Whether a device fits a (sub)request does not depend on the node: shared by the
        # per-node runs of one cycle (keyed by claim identity and request indices).
        self.matches: dict[tuple[int, int, int, DeviceID], bool] = {}
        # Node-independent request setups (claims without allocationMode All).
        self._setups: dict[tuple[int, ...], tuple[Any, Any]] = {}

    def device_taints(self, did: DeviceID, device: Device) -> tuple[DeviceTaint, ...]:
        """The device's taints, those of matching DeviceTaintRules appended."""
        if not self.taint_rules:
            return device.taints
        hit = self._taints.get(did)
        if hit is not None and hit[0] is device:
            return hit[1]
        taints = device_taints(did, device, self.taint_rules, self.classes, self.cel)
        self._taints[did] = (device, taints)
        return taints

    def available_counters(self, pool: _Pool) -> dict[str, dict[str, Fraction]]:
        """The pool's counter sets minus what its allocated devices consume."""
        hit = self._available.get(pool.name)
        if hit is not None:
            return hit
        avail = {k: dict(v) for k, v in pool.counter_sets().items()}
        for did, device, _s in pool.devices():
            if did not in self.allocated:
                continue
            for cc in device.consumes_counters:
                cs = avail.get(cc.counter_set)
                if cs is None:
                    continue
                for name, c in cc.counters.items():
                    if name in cs:
                        cs[name] -= _frac(c.value)
        self._available[pool.name] = avail
        return avail

    def setup_for(self, claims: Sequence[ResourceClaim]) -> tuple[Any, Any] | None:
        return self._setups.get(tuple(id(c) for c in claims))

    def remember_setup(self, claims: Sequence[ResourceClaim], setup: tuple[Any, Any]) -> None:
        self._setups[tuple(id(c) for c in claims)] = setup


class RunState:
    """One allocate call's state (the Go ``allocator`` struct's fields)."""

    def __init__(self, a: AllocatorState, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools = a.slices.pools_for(node)
        self.requests: list[list[list[_Req]]] = []  # claim -> request -> (sub)requests
        self.has_subrequests: list[list[bool]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        # Devices being allocated in this run, with the claims (indices) they go to.
        self.allocating: dict[DeviceID, set[int]] = {}
        self.matches = a.matches
        self.claim_ids = [id(c) for c in claims]
        fts = a.features
        self.experimental = fts.experimental
        self.consumable = fts.consumable_capacity
        # Capacity being allocated on shared devices in this run.
        self.allocating_capacity: dict[DeviceID, CapacityMap] = {}
        # Counters consumed by devices being allocated: pool name -> set -> counter.
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.pool_of: dict[tuple[str, str], _Pool] = (
            {(p.driver, p.name): p for p in self.pools} if self.experimental else {}
        )
