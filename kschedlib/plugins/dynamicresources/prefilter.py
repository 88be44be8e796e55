"""PreFilter: collect the pod's claims (and the special claim for DRA-backed extended
resources), check device classes and prepare the structured allocator."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod
from kschedlib.api.resource import pod_requests
from kschedlib.api.resource_v1 import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    RESERVED_FOR_MAX_SIZE,
    ResourceClaim,
)
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.status import SKIP, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.dynamicresources.allocator import Allocator
from kschedlib.plugins.dynamicresources.base import DynamicResourcesBase
from kschedlib.plugins.dynamicresources.claims import (
    claim_ready_for_binding,
    extended_resource_claim,
    is_reserved_for,
)
from kschedlib.plugins.dynamicresources.state import (
    MSG_IN_USE,
    NAME,
    SPECIAL_CLAIM_NAME,
    STATE_KEY,
    StateData,
    _is_extended,
    _unresolvable,
)


class PreFilterMixin(DynamicResourcesBase):
    """PreFilter and its (absent) extensions."""

    __slots__ = ()

    def _validate_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status.error(f"request {request_name}: unsupported request type", NAME)
        if self._device_class(class_name) is None:
            return _unresolvable(
                f"request {request_name}: device class {class_name} does not exist"
            )
        return None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        s = StateData()
        state.write(STATE_KEY, s)
        claims: list[ResourceClaim] = []
        if pod.spec.resource_claims:
            claims, err = self.pod_resource_claims(pod)
            if err:
                return None, _unresolvable(err)
        s.user_claims = len(claims)
        ext = self._pre_filter_extended(pod, s) if self.features.extended_resource else None
        if ext is not None:
            claims = [*claims, ext]
        if not claims:
            return None, SKIP
        available_on: list[NodeSelectorMatcher | None] = []
        to_allocate: list[ResourceClaim] = []
        for claim in claims:
            alloc = claim.status.allocation
            if (
                alloc is not None
                and len(claim.status.reserved_for) >= RESERVED_FOR_MAX_SIZE
                and not is_reserved_for(pod, claim)
            ):
                return None, _unresolvable(MSG_IN_USE)
            if alloc is not None:
                sel = alloc.node_selector
                available_on.append(NodeSelectorMatcher(sel) if sel is not None else None)
                if self._binding_conditions_on():
                    # A binding that failed or timed out: PostFilter may deallocate it.
                    ready, failed = claim_ready_for_binding(claim)
                    if failed or (not ready and self._claim_timed_out(claim)):
                        s.binding_unavailable.add(len(available_on) - 1)
                continue
            available_on.append(None)
            to_allocate.append(claim)
            uid = claim.metadata.uid or claim.metadata.key
            if uid in self._in_flight:
                return None, _unresolvable(
                    f"resource claim {claim.metadata.namespace}/{claim.metadata.name} is in "
                    "the process of being allocated"
                )
            if claim is ext:
                continue  # validated per node by Filter
            for r in claim.spec.devices.requests:
                if r.exactly is not None:
                    st = self._validate_class(r.exactly.device_class_name, r.name)
                    if st is not None:
                        return None, st
                elif r.first_available:
                    if not self.features.prioritized_list:
                        return None, _unresolvable(
                            f"resource claim {claim.metadata.namespace}/{claim.metadata.name}, "
                            f"request {r.name}: has subrequests, but the DRAPrioritizedList "
                            "feature is disabled"
                        )
                    for sr in r.first_available:
                        st = self._validate_class(sr.device_class_name, f"{r.name}/{sr.name}")
                        if st is not None:
                            return None, st
                else:
                    return None, _unresolvable(
                        f"resource claim {claim.metadata.namespace}/{claim.metadata.name}, "
                        f"request {r.name}: unknown request type"
                    )
        s.available_on = available_on
        s.to_allocate = to_allocate
        if to_allocate:
            fts = self.features
            s.allocator = Allocator(
                fts, self._allocated_state(), self._device_class, self._slices(),
                self.cel, self._request_matches,
                allocated_capacity=self._allocated_capacity() if fts.consumable_capacity else None,
                taint_rules=self._taint_rules(),
            )
        s.claims = tuple(claims)
        return None, None

    def _pre_filter_extended(self, pod: Pod, s: StateData) -> ResourceClaim | None:
        """preFilterExtendedResources: the special claim when the pod asks for an extended
        resource a DeviceClass maps: the one an earlier cycle created, else an in-memory one
        without requests."""
        reqs = pod_requests(pod)
        mapping = self._ext_mapping.get(self._objects)
        scalars: dict[str, int] = {}
        has = False
        for name, q in reqs.items():
            if not _is_extended(name) or q.is_zero():
                continue
            scalars[name] = q.value()
            if name in mapping:
                has = True
        if not has:
            return None
        s.ext_mapping = mapping
        s.ext_resources = scalars
        existing = extended_resource_claim(pod, self._objects)
        if existing is None:
            existing = ResourceClaim(
                metadata=ObjectMeta(
                    name=SPECIAL_CLAIM_NAME,
                    namespace=pod.metadata.namespace,
                    uid=f"{SPECIAL_CLAIM_NAME}/{pod.uid}",
                    generate_name=f"{pod.metadata.name}-extended-resources-",
                    owner_references=(OwnerReference(
                        api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.uid,
                        controller=True,
                    ),),
                    annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                ),
            )
        s.ext_claim = existing
        return existing

    def pre_filter_extensions(self) -> None:
        return None
