"""Whether a device can serve a (sub)request (selectors, use, capacity, counters), and taking
it or giving it back during the search."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.api.resource_v1 import Device, DeviceClass, DeviceSelector, ResourceSlice
from kschedlib.plugins.dynamicresources.selector_cache import CELCompileError, CELError
from kschedlib.plugins.dynamicresources.structured.common import (
    AllocationError,
    DeviceID,
    _claim_key,
    _Req,
    _Result,
)
from kschedlib.plugins.dynamicresources.structured.consumable_capacity import (
    _frac,
    capacity_fits,
    consumption,
)
from kschedlib.plugins.dynamicresources.structured.matching import taint_prevents_allocation
from kschedlib.plugins.dynamicresources.structured.state import RunState


class Selection(RunState):
    """Device checks and bookkeeping of one run."""

    def _selectors_match(
        self, ci: int, device: Device, driver: str, dc: DeviceClass | None,
        selectors: Sequence[DeviceSelector],
    ) -> bool:
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                continue
            try:
                ok = self.a.cel.matches(sel.cel.expression, driver, device)
            except CELCompileError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {exc}") from None
            except CELError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {exc}") from None
            if not ok:
                return False
        return True

    def _selectable(
        self, ci: int, ri: int, si: int, req: _Req, device: Device, did: DeviceID
    ) -> bool:
        if device.binding_conditions and not self.a.features.device_binding_conditions:
            return False  # devices with binding conditions need DRADeviceBindingConditions
        key = (self.claim_ids[ci], ri, si, did)
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = self._request_matches(ci, req, device, did[0])
        self.matches[key] = ok
        return ok

    def _request_matches(self, ci: int, req: _Req, device: Device, driver: str) -> bool:
        """The class's selectors, then the request's; memoized across cycles by (class,
        selectors, device) since none of them depends on the claim or the node. Errors are
        not memoized: their message names the claim."""
        dc = req.device_class
        shared = self.a.request_matches
        key = (id(dc), req.selectors, id(device))
        hit = shared.get(key)
        if hit is not None and hit[0] is dc and hit[1] is device:
            return hit[2]
        ok = (
            dc is None or self._selectors_match(ci, device, driver, dc, dc.spec.selectors)
        ) and self._selectors_match(ci, device, driver, None, req.selectors)
        if len(shared) > 200_000:
            shared.clear()
        shared[key] = (dc, device, ok)
        return ok

    def _in_use(self, did: DeviceID) -> bool:
        """deviceInUse: allocated already, or being allocated for any claim of this run."""
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _usable(self, ci: int, req: _Req, did: DeviceID) -> bool:
        """The "in use" check: an admin-access request only avoids devices it is already
        allocating for the same claim."""
        if req.admin_access:
            return ci not in self.allocating.get(did, ())
        return not self._in_use(did)

    def _capacity_fits(self, req: _Req, did: DeviceID, device: Device) -> bool:
        return capacity_fits(
            self.a.allocated_capacity.get(did), req.capacity, device,
            self.allocating_capacity.get(did),
        )

    def _check_counters(self, did: DeviceID, device: Device) -> bool:
        """checkAvailableCounters: add the device's consumption; False (and taken back) when
        some counter of its pool would go below zero."""
        pool = self.pool_of.get((did[0], did[1]))
        if pool is None:
            return False
        avail = self.a.available_counters(pool)
        used = self.consumed_counters.setdefault(pool.name, {})
        for cc in device.consumes_counters:
            cs = used.setdefault(cc.counter_set, {})
            for name, c in cc.counters.items():
                cs[name] = cs.get(name, 0) + _frac(c.value)
        for set_name, counters in avail.items():
            cs = used.get(set_name, {})
            for name, have in counters.items():
                if have < cs.get(name, 0):
                    self._release_counters(did, device)
                    return False
        return True

    def _release_counters(self, did: DeviceID, device: Device) -> None:
        pool = self.pool_of.get((did[0], did[1]))
        if pool is None:
            return
        used = self.consumed_counters.get(pool.name, {})
        for cc in device.consumes_counters:
            cs = used.setdefault(cc.counter_set, {})
            for name, c in cc.counters.items():
                cs[name] = cs.get(name, 0) - _frac(c.value)

    def _take(
        self, ci: int, req: _Req, did: DeviceID, device: Device, s: ResourceSlice, must: bool
    ) -> bool:
        """allocateDevice: check use and constraints, then record the device."""
        if not self.experimental:
            if not self._usable(ci, req, did):
                return False
            if device.consumes_counters:
                return False  # counters need DRAPartitionableDevices
        elif not self._take_experimental(ci, req, did, device):
            return False
        base, sub = req.base_name, req.sub_name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, device, did[0]):
                if must:
                    raise AllocationError(
                        f"claim {_claim_key(self.claims[ci])}, request {req.name}: cannot add "
                        f"device {did[0]}/{did[1]}/{did[2]} because a claim constraint would "
                        "not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return False
        if not self.consumable:
            self.allocating.setdefault(did, set()).add(ci)
            self.results[ci].append(_Result(req, did, s, device))
            return True
        multi = bool(device.allow_multiple_allocations)
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
        if not self._capacity_fits(req, did, device):
            return False  # as in Go, without undoing the steps above (cannot happen here)
        if not multi:
            self.results[ci].append(_Result(req, did, s, device))
            return True
        used = consumption(req.capacity, device)
        cur = self.allocating_capacity.setdefault(did, {})
        for name, value, _total in used.values:
            cur[name] = cur.get(name, 0) + value
        self.results[ci].append(_Result(req, did, s, device, True, used.quantities or None))
        return True

    def _take_experimental(self, ci: int, req: _Req, did: DeviceID, device: Device) -> bool:
        """The experimental allocator's checks before the constraints: use, counters, taints."""
        fts = self.a.features
        multi = fts.consumable_capacity and bool(device.allow_multiple_allocations)
        if req.admin_access:
            if not multi and ci in self.allocating.get(did, ()):
                return False
        elif self._in_use(did):
            return False
        if device.consumes_counters:
            if not fts.partitionable_devices:
                return False
            if not self._check_counters(did, device):
                return False
        # As in v1.35, counters taken above stay taken when a taint or constraint rejects
        # the device afterwards.
        return not (
            fts.device_taints
            and taint_prevents_allocation(self.a.device_taints(did, device), req)
        )

    def _untake(self, ci: int, req: _Req, did: DeviceID, keep: int) -> None:
        """The rollback of _take: results are truncated to what they were before it."""
        for c in self.constraints[ci]:
            c.remove(req.base_name, req.sub_name)
        holders = self.allocating.get(did)
        if holders is not None:
            holders.discard(ci)
        if self.experimental:
            res = self.results[ci][keep] if keep < len(self.results[ci]) else None
            if res is not None and res.shared:
                cur = self.allocating_capacity.get(did)
                if cur is not None and res.consumed:
                    for name, q in res.consumed.items():
                        cur[name] = cur.get(name, 0) - q.as_fraction()
            elif (
                res is not None and res.device is not None and res.device.consumes_counters
                and self.a.features.partitionable_devices
            ):
                self._release_counters(did, res.device)
        del self.results[ci][keep:]
