"""Filter (allocate the pod's claims on one node) and PostFilter (deallocate a claim that
kept the pod off some nodes)."""

from __future__ import annotations

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    AllocationResult,
    DeviceClaim,
    ResourceClaim,
    ResourceClaimSpec,
)
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import NodeToStatusReader, PostFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.dynamicresources.allocator import AllocationError, FailedOnNode
from kschedlib.plugins.dynamicresources.base import DynamicResourcesBase
from kschedlib.plugins.dynamicresources.extended import create_requests
from kschedlib.plugins.dynamicresources.state import (
    _NO_CLAIMS,
    _STILL_NOT_SCHEDULABLE,
    KIND_RESOURCE_CLAIM,
    MSG_CANNOT_ALLOCATE,
    MSG_DEALLOCATED,
    MSG_DELETED,
    MSG_NOT_AVAILABLE,
    NAME,
    SPECIAL_CLAIM_NAME,
    STATE_KEY,
    StateData,
    _not_found,
    _unresolvable,
)


class FilterMixin(DynamicResourcesBase):
    """Filter and PostFilter."""

    __slots__ = ()

    def _filter_extended(
        self, s: StateData, pod: Pod, node_info: NodeInfo
    ) -> tuple[ResourceClaim | None, Status | None]:
        """filterExtendedResources: the special claim with the requests this node needs from
        DRA (resources without device-plugin capacity on it), or None."""
        ext = s.ext_claim
        if ext is None:
            return None, None
        if ext.spec.devices.requests:
            # From an earlier cycle: PostFilter deletes it and the pod tries anew.
            return None, _unresolvable("cannot schedule extended resource claim")
        alloc = node_info.allocatable.scalar_resources
        wanted: list[str] = []
        has = False
        for name in s.ext_resources:
            have = alloc.get(name, 0) > 0
            if name in s.ext_mapping:
                wanted.append(name)
                if not have:
                    has = True
            elif not have:
                return None, _unresolvable("cannot fit resource")
        if s.user_claims == 0 and not has:
            return None, None
        if ext.status.allocation is not None:
            return None, None
        # Requests for the resources this node backs by DRA; a resource with device-plugin
        # capacity here is the device plugin's.
        dra = [n for n in wanted if alloc.get(n, 0) <= 0]
        requests, _ = create_requests(pod, dra, s.ext_mapping)
        key = requests
        claim = s.ext_by_requests.get(key)
        if claim is None:
            claim = attrs.evolve(
                ext, spec=ResourceClaimSpec(devices=DeviceClaim(requests=requests))
            )
            s.ext_by_requests[key] = claim
        return claim, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        if not s.claims:
            return None
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        to_allocate = s.to_allocate
        node_ext: ResourceClaim | None = None
        if s.ext_claim is not None:
            node_ext, st = self._filter_extended(s, pod, node_info)
            if st is not None:
                return st
            if node_ext is None and s.user_claims == 0:
                return None  # the device plugins have it all
            if node_ext is not None:
                to_allocate = [node_ext if c is s.ext_claim else c for c in to_allocate]
        unavailable = [
            i for i, m in enumerate(s.available_on)
            if (m is not None and not m.matches(node.metadata.labels, node.metadata.name))
            or i in s.binding_unavailable
        ]
        allocations: list[AllocationResult] | None = None
        if s.allocator is not None:
            try:
                allocations = s.allocator.allocate(node, to_allocate)
            except FailedOnNode as exc:
                return _unresolvable(str(exc))
            except AllocationError as exc:
                return Status.error(str(exc), NAME)
            except Exception as exc:  # a bug must not lose the pod: an Error for this cycle
                return Status.error(f"allocating devices: {type(exc).__name__}: {exc}", NAME)
            if allocations is None or len(allocations) != len(to_allocate):
                return _unresolvable(MSG_CANNOT_ALLOCATE)
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return _unresolvable(MSG_NOT_AVAILABLE)
        if allocations is not None:
            s.node_allocations[node.metadata.name] = allocations
            if s.ext_claim is not None:
                s.node_ext_claims[node.metadata.name] = node_ext
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return None, _not_found()
        if not s.claims:
            return None, _NO_CLAIMS
        ext = s.ext_claim
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            if claim is ext:
                continue
            rf = claim.status.reserved_for
            if not rf or (len(rf) == 1 and rf[0].uid == pod.uid):
                current = self._objects.get_object(
                    KIND_RESOURCE_CLAIM, claim.metadata.key
                )
                base = current if isinstance(current, ResourceClaim) else claim
                freed = attrs.evolve(
                    base, status=attrs.evolve(base.status, allocation=None, reserved_for=())
                )
                self._write_claim(freed)
                return None, Status(Code.Unschedulable, (MSG_DEALLOCATED,), NAME)
        if ext is not None and ext.metadata.name != SPECIAL_CLAIM_NAME:
            # The special claim of an earlier cycle: deleted, the pod tries anew.
            self._delete_claim(ext)
            return None, Status(Code.Unschedulable, (MSG_DELETED,), NAME)
        return None, _STILL_NOT_SCHEDULABLE
