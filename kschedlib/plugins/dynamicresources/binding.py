"""Reserve, Unreserve and PreBind: keep the chosen allocation in flight, write allocations and
``reservedFor``, and wait for the devices' binding conditions (DRADeviceBindingConditions)."""

from __future__ import annotations

import uuid

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    DELETE_PROTECTION_FINALIZER,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.plugins.dynamicresources.base import DynamicResourcesBase
from kschedlib.plugins.dynamicresources.claims import claim_ready_for_binding, is_reserved_for
from kschedlib.plugins.dynamicresources.state import (
    KIND_RESOURCE_CLAIM,
    MSG_BINDING_TIMEOUT,
    NAME,
    STATE_KEY,
    StateData,
    _not_found,
    _suffix,
    _utc,
)


class BindingMixin(DynamicResourcesBase):
    """Reserve, Unreserve, PreBind and the wait for binding conditions."""

    __slots__ = ()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        s.allocations = [None] * len(s.claims)
        pending = [i for i, c in enumerate(s.claims) if c.status.allocation is None]
        if not pending or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if s.ext_claim is not None and all(s.claims[i] is s.ext_claim for i in pending):
                return None  # only the special claim, and the device plugins have it all
            return Status.error("claim allocation not found for node", NAME)
        if len(allocations) != len(pending):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims "
                f"to allocate, want {len(pending)} claims",
                NAME,
            )
        node_ext = s.node_ext_claims.get(node_name)
        for k, i in enumerate(pending):
            claim = s.claims[i]
            if claim is s.ext_claim and node_ext is not None:
                claim = node_ext
            s.allocations[i] = allocations[k]
            fin = claim.metadata.finalizers
            meta = claim.metadata
            if DELETE_PROTECTION_FINALIZER not in fin:
                meta = attrs.evolve(meta, finalizers=(*fin, DELETE_PROTECTION_FINALIZER))
            assumed = attrs.evolve(
                claim, metadata=meta,
                status=attrs.evolve(claim.status, allocation=allocations[k]),
            )
            self._in_flight[claim.metadata.uid or claim.metadata.key] = assumed
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return None
        for i, claim in enumerate(s.claims):
            if i < len(s.allocations) and s.allocations[i] is not None:
                self._in_flight.pop(claim.metadata.uid or claim.metadata.key, None)
        # A claim that this pod reserved gets its reservation removed again.
        for claim in s.claims:
            current = self._objects.get_object(KIND_RESOURCE_CLAIM, claim.metadata.key)
            if isinstance(current, ResourceClaim) and is_reserved_for(pod, current):
                kept = tuple(r for r in current.status.reserved_for if r.uid != pod.uid)
                self._write_claim(
                    attrs.evolve(current, status=attrs.evolve(current.status, reserved_for=kept))
                )
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        return SKIP if not s.claims else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """bindClaim for every claim: the allocation (if new), the finalizer and the pod in
        reservedFor, written to the scheduler's object store."""
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        s.bound_keys = []
        stamp = self._handle.clock.now() if self._binding_conditions_on() else None
        for i, claim in enumerate(s.claims):
            if claim is s.ext_claim:
                st = self._bind_extended(s, pod, node_name, i, stamp)
                if st is not None:
                    return st
                continue
            key = claim.metadata.key
            uid = claim.metadata.uid or key
            current = self._objects.get_object(KIND_RESOURCE_CLAIM, key)
            base = current if isinstance(current, ResourceClaim) else claim
            allocation = s.allocations[i] if i < len(s.allocations) else None
            status = base.status
            meta = base.metadata
            if allocation is not None:
                if status.allocation is not None:
                    self._in_flight.pop(uid, None)
                    return Status.error(
                        f"claim {key} got allocated elsewhere in the meantime", NAME
                    )
                status = attrs.evolve(status, allocation=allocation)
                if DELETE_PROTECTION_FINALIZER not in meta.finalizers:
                    meta = attrs.evolve(
                        meta, finalizers=(*meta.finalizers, DELETE_PROTECTION_FINALIZER)
                    )
            if not is_reserved_for(pod, base):
                ref = ResourceClaimConsumerReference(
                    resource="pods", name=pod.metadata.name, uid=pod.uid
                )
                status = attrs.evolve(status, reserved_for=(*status.reserved_for, ref))
            if (
                stamp is not None and status.allocation is not None
                and status.allocation.allocation_timestamp is None
            ):
                status = attrs.evolve(
                    status, allocation=attrs.evolve(status.allocation, allocation_timestamp=_utc(stamp))
                )
            self._write_claim(attrs.evolve(base, metadata=meta, status=status))
            self._in_flight.pop(uid, None)
            s.bound_keys.append(key)
        if stamp is None or not self._has_binding_conditions(s):
            return None
        # Wait for the devices' binding conditions: the binding cycle parks the pod and
        # calls pre_bind_wait again until they hold, one fails, or the timeout passes.
        s.binding_deadline = stamp + self.binding_timeout
        return self.pre_bind_wait(state, pod, node_name)

    def _has_binding_conditions(self, s: StateData) -> bool:
        """hasBindingConditions over the claims PreBind wrote."""
        for key in s.bound_keys:
            claim = self._objects.get_object(KIND_RESOURCE_CLAIM, key)
            alloc = claim.status.allocation if isinstance(claim, ResourceClaim) else None
            if alloc is not None and any(r.binding_conditions for r in alloc.devices.results):
                return True
        return False

    def pre_bind_wait(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """One poll of PreBind's wait (isPodReadyForBinding): None when every binding
        condition is True, an error on a failure condition or timeout, else Wait."""
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        for key in s.bound_keys:
            claim = self._objects.get_object(KIND_RESOURCE_CLAIM, key)
            if not isinstance(claim, ResourceClaim):
                return Status.error(f"resourceclaim {key} not found", NAME)
            ready, failed = claim_ready_for_binding(claim)
            if failed:
                return Status.error(failed, NAME)
            if not ready:
                if self._claim_timed_out(claim):
                    return Status.error(f"claim {claim.metadata.name} binding timeout", NAME)
                break
        else:
            return None
        deadline = s.binding_deadline
        if deadline is not None and self._handle.clock.now() >= deadline:
            return Status.error(MSG_BINDING_TIMEOUT, NAME)
        return Status(
            Code.Wait, (f"waiting for binding conditions for device on node {node_name}",), NAME
        )

    def _bind_extended(
        self, s: StateData, pod: Pod, node_name: str, index: int, stamp: float | None = None
    ) -> Status | None:
        """Create the special claim for the pod's DRA-backed extended resources, allocated
        and reserved for the pod (named ``<pod>-extended-resources-<5 characters>``)."""
        ext = s.ext_claim
        assert ext is not None
        allocation = s.allocations[index] if index < len(s.allocations) else None
        self._in_flight.pop(ext.metadata.uid or ext.metadata.key, None)
        node_ext = s.node_ext_claims.get(node_name)
        if allocation is None or node_ext is None:
            return None  # nothing came from DRA on this node
        name = ext.metadata.generate_name + _suffix(pod.uid)
        meta = attrs.evolve(
            node_ext.metadata, name=name, generate_name=ext.metadata.generate_name,
            uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pod.uid}/{name}")),
            finalizers=(DELETE_PROTECTION_FINALIZER,),
        )
        ref = ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=pod.uid)
        if stamp is not None and allocation.allocation_timestamp is None:
            allocation = attrs.evolve(allocation, allocation_timestamp=_utc(stamp))
        claim = attrs.evolve(
            node_ext, metadata=meta,
            status=ResourceClaimStatus(allocation=allocation, reserved_for=(ref,)),
        )
        self._write_claim(claim)
        s.bound_keys.append(claim.metadata.key)
        return None
