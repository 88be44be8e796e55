"""The structured allocator of k8s.io/dynamic-resource-allocation (v1.35): which devices a
node can give to a pod's claims. With the default feature set it is the "stable" variant;
with any alpha feature on (``Features.experimental``) it also checks shared counters
(partitionable devices), per-device node selection, device taints, consumable capacity of
``allowMultipleAllocations`` devices and binding conditions, as the "experimental" one does.

Search order, as in Go: claims in pod order, requests in claim order (a request with
``firstAvailable`` tries its subrequests in order), then for each device needed the pools
(here: in the order their first slice appears), each pool's slices in list order (the
scheduler lists them by name) and each slice's devices in order, backtracking over earlier
choices when a later request or a ``matchAttribute`` constraint cannot be satisfied.

The allocator's parts, as Go's ``structured`` package splits them: :mod:`.pools` (GatherPools),
:mod:`.allocated` (GatherAllocatedState), :mod:`.constraint`, :mod:`.matching` (taints, CEL,
node selection), :mod:`.consumable_capacity`; one allocate call is a run built from
:mod:`.setup` (requests), :mod:`.selection` (devices), :mod:`.results` on :mod:`.state`, and
this module searches."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    DeviceAllocationResult,
    ResourceClaim,
)
from kschedlib.plugins.dynamicresources.structured.common import FailedOnNode, _TooMany
from kschedlib.plugins.dynamicresources.structured.matching import device_node_matches
from kschedlib.plugins.dynamicresources.structured.results import Results, _device_result
from kschedlib.plugins.dynamicresources.structured.setup import Setup
from kschedlib.plugins.dynamicresources.structured.state import AllocatorState


class Allocator(AllocatorState):
    """structured.Allocator for one scheduling cycle: the claims' view of the cluster's
    devices (slices, classes, devices in use). ``allocate`` is called per node."""

    __slots__ = ()

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[AllocationResult] | None:
        """One AllocationResult per claim, or None when the node cannot satisfy them all.
        AllocationError when something is wrong with a claim, class or pool."""
        return _Run(self, node, claims).run()


class _Run(Setup, Results):
    """One Allocate call (the Go ``allocator`` struct)."""

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: satisfy device ``di`` of (sub)request (ci, ri, si), then the rest.
        _TooMany when the claim would exceed the result limit (more aggressive backtracking)."""
        if ci >= len(self.claims):
            return True
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _TooMany:
                return False
        alts = reqs[ri]
        if not in_sub and self.has_subrequests[ci][ri]:
            all_too_many = True
            for sub in range(len(alts)):
                try:
                    if self._one(ci, ri, sub, 0, True):
                        return True
                except _TooMany:
                    continue
                all_too_many = False
            if all_too_many:
                raise _TooMany
            return False
        req = alts[si]
        do_all = req.mode == ALLOCATION_MODE_ALL
        if do_all and not req.all_devices:
            return False
        if di >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooMany
        if do_all:
            assert req.all_devices is not None
            did, device, s = req.all_devices[di]
            keep = len(self.results[ci])
            if not self._take(ci, req, did, device, s, True):
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except _TooMany:
                self._untake(ci, req, did, keep)
                raise
            if not done:
                self._untake(ci, req, did, keep)
            return done
        allocated, allocating, admin = self.a.allocated, self.allocating, req.admin_access
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue  # never allocated from, but other pools may do
            for did, device, s in pool.devices():
                # The "in use" check, inlined from _usable (hot loop).
                if admin:
                    holders = allocating.get(did)
                    if holders and ci in holders:
                        continue
                elif did in allocated or allocating.get(did):
                    continue
                if not self._selectable(ci, ri, si, req, device, did):
                    continue
                if self.experimental:
                    if s.spec.per_device_node_selection and not device_node_matches(
                        self.node, device
                    ):
                        continue
                    if self.a.features.consumable_capacity and not self._capacity_fits(
                        req, did, device
                    ):
                        continue
                keep = len(self.results[ci])
                if not self._take(ci, req, did, device, s, False):
                    continue
                try:
                    done = self._one(ci, ri, si, di + 1, in_sub)
                except _TooMany:
                    self._untake(ci, req, did, keep)
                    raise
                if done:
                    return True
                self._untake(ci, req, did, keep)
        return False

    def run(self) -> list[AllocationResult] | None:
        self._setup()
        try:
            done = self._one(0, 0, 0, 0, False)
        except _TooMany:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        out: list[AllocationResult] = []
        for ci, claim in enumerate(self.claims):
            if self.experimental:
                results = tuple(self._full_result(claim, i, r)
                                for i, r in enumerate(self.results[ci]))
                node_selector = self._node_selector(self.results[ci], self.node.metadata.name)
            else:
                results = tuple(_device_result(r.req.full_name, r.id, r.req.admin_access)
                                for r in self.results[ci])
                node_selector = self._node_selector(self.results[ci])
            config = self._config(claim, self.results[ci])
            out.append(
                AllocationResult(
                    devices=DeviceAllocationResult(results=results, config=config),
                    node_selector=node_selector,
                )
            )
        return out
