"""Validating a run's claims against their device classes and building its (sub)requests and
constraints."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.api.resource_v1 import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    CapacityRequirements,
    DeviceClass,
    DeviceSelector,
)
from kschedlib.plugins.dynamicresources.structured.common import AllocationError, _claim_key, _Req
from kschedlib.plugins.dynamicresources.structured.constraint import (
    _DistinctAttribute,
    _MatchAttribute,
)
from kschedlib.plugins.dynamicresources.structured.matching import device_node_matches
from kschedlib.plugins.dynamicresources.structured.selection import Selection


class Setup(Selection):
    """The request setup of one run."""

    def _check(
        self, ci: int, name: str, selectors: Sequence[DeviceSelector], has_admin: bool,
        capacity: CapacityRequirements | None, what: str = "request",
    ) -> None:
        """validateDeviceRequest's checks before the class lookup."""
        claim = self.claims[ci]
        fts = self.a.features
        if capacity is not None and not fts.consumable_capacity and fts.experimental:
            raise AllocationError(
                f"claim {_claim_key(claim)}, {what} {name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                raise AllocationError(
                    f"claim {_claim_key(claim)}, request {name}, selector #{i}: CEL expression "
                    "empty (unsupported selector type?)"
                )
        if has_admin and not fts.admin_access:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {name}: admin access is requested, but "
                "the feature is disabled"
            )

    def _validate(self, ci: int, ri: int, si: int, req: _Req) -> None:
        claim = self.claims[ci]
        if req.mode == ALLOCATION_MODE_EXACT_COUNT:
            req.num_devices = req.count
        elif req.mode == ALLOCATION_MODE_ALL:
            req.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for d in s.spec.devices:
                        did = (s.spec.driver, s.spec.pool.name, d.name)
                        if not self._selectable(ci, ri, si, req, d, did):
                            continue
                        if s.spec.per_device_node_selection and not device_node_matches(
                            self.node, d
                        ):
                            continue
                        if self.a.features.consumable_capacity and not self._capacity_fits(
                            req, did, d
                        ):
                            continue
                        req.all_devices.append((did, d, s))
            req.num_devices = len(req.all_devices)
        else:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {req.name}: unsupported count mode "
                f"{req.mode}"
            )

    def _class(self, ci: int, request_name: str, class_name: str) -> DeviceClass:
        if not class_name:
            raise AllocationError(
                f"claim {_claim_key(self.claims[ci])}, request {request_name}: missing device "
                "class name (unsupported request type?)"
            )
        dc = self.a.classes(class_name)
        if dc is None:
            raise AllocationError(
                f"claim {_claim_key(self.claims[ci])}, request {request_name}: could not "
                f'retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" '
                "not found"
            )
        return dc

    def _setup(self) -> None:
        cached = self.a.setup_for(self.claims)
        if cached is not None:
            self.requests, self.has_subrequests = cached
        else:
            self._setup_requests()
        for claim in self.claims:
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                if c.match_attribute is not None:
                    cons.append(_MatchAttribute(c.requests, c.match_attribute))
                elif c.distinct_attribute is not None and self.a.features.experimental:
                    cons.append(_DistinctAttribute(c.requests, c.distinct_attribute))
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            self.constraints.append(cons)

    def _setup_requests(self) -> None:
        node_independent = True
        for ci, claim in enumerate(self.claims):
            per_claim = 0
            reqs: list[list[_Req]] = []
            subs: list[bool] = []
            for ri, r in enumerate(claim.spec.devices.requests):
                if r.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {_claim_key(claim)}, request {r.name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    alts: list[_Req] = []
                    for si, sr in enumerate(r.first_available):
                        self._check(ci, sr.name, sr.selectors, False, sr.capacity, "subrequest")
                        req = _Req(
                            sr.name, r.name, self._class(ci, sr.name, sr.device_class_name),
                            sr.selectors, sr.allocation_mode, sr.count, False,
                            tolerations=sr.tolerations, capacity=sr.capacity,
                        )
                        self._validate(ci, ri, si, req)
                        alts.append(req)
                    per_claim += min(x.num_devices for x in alts)
                    reqs.append(alts)
                    subs.append(True)
                elif r.exactly is not None:
                    ex = r.exactly
                    self._check(
                        ci, r.name, ex.selectors, ex.admin_access is not None, ex.capacity
                    )
                    admin = bool(ex.admin_access) and self.a.features.admin_access
                    req = _Req(
                        r.name, "", self._class(ci, r.name, ex.device_class_name),
                        ex.selectors, ex.allocation_mode, ex.count, admin,
                        tolerations=ex.tolerations, capacity=ex.capacity,
                    )
                    self._validate(ci, ri, 0, req)
                    per_claim += req.num_devices
                    reqs.append([req])
                    subs.append(False)
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {r.name}: unsupported request type"
                    )
            if per_claim > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_claim_key(claim)}: number of requested devices {per_claim} "
                    f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.requests.append(reqs)
            self.has_subrequests.append(subs)
            if any(x.mode == ALLOCATION_MODE_ALL for alts in reqs for x in alts):
                node_independent = False
        if node_independent:
            self.a.remember_setup(self.claims, (self.requests, self.has_subrequests))
