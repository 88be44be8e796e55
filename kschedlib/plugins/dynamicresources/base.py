"""The DynamicResources plugin's state across cycles and the object-store reads and writes its
extension points share (device classes, slices, allocated devices, claim writes)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from collections.abc import Set as AbstractSet
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.resource import pod_requests
from kschedlib.api.resource_v1 import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kschedlib.plugins.dynamicresources.allocator import (
    CapacityMap,
    DeviceID,
    Features,
    SliceIndex,
    allocated_capacity,
    allocated_devices,
)
from kschedlib.plugins.dynamicresources.claims import pod_claims
from kschedlib.plugins.dynamicresources.extended import MappingCache
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache
from kschedlib.plugins.dynamicresources.state import (
    DEFAULT_BINDING_TIMEOUT,
    KIND_DEVICE_CLASS,
    KIND_DEVICE_TAINT_RULE,
    KIND_RESOURCE_CLAIM,
    KIND_RESOURCE_SLICE,
    NAME,
    _is_extended,
    _seconds,
)


class DynamicResourcesBase:
    """The plugin's state and the accessors every extension point uses."""

    __slots__ = (
        "_handle", "features", "cel", "_in_flight", "_slice_index", "_slice_gen",
        "_alloc_counts", "_alloc_gen", "_request_matches", "_ext_mapping", "binding_timeout",
    )

    def __init__(self, handle: Any, features: Features | None = None) -> None:
        self._handle = handle
        self.features = features if features is not None else Features()
        self.cel = SelectorCache()
        # Claims allocated by Reserve and not yet written by PreBind (inFlightAllocations).
        self._in_flight: dict[str, ResourceClaim] = {}
        self._slice_index: SliceIndex | None = None
        self._slice_gen: tuple[int, ...] = ()
        # Devices held by the stored claims (with how many claims hold each), valid for the
        # object store generation _alloc_gen; the plugin's own claim writes update it in place.
        self._alloc_counts: Counter[DeviceID] = Counter()
        self._alloc_gen: int | None = None
        # Whether a device satisfies a class and request selectors, across cycles.
        self._request_matches: dict[Any, Any] = {}
        # DRAExtendedResource: extended resource name -> DeviceClass name.
        self._ext_mapping = MappingCache()
        # DynamicResourcesArgs.bindingTimeout: how long PreBind waits for binding conditions.
        self.binding_timeout = DEFAULT_BINDING_TIMEOUT

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node (claims, or extended
        resources that DRA may back)."""
        if pod.spec.resource_claims:
            return None
        if self.features.extended_resource and any(_is_extended(n) for n in pod_requests(pod)):
            return None
        return ()

    @property
    def _objects(self) -> Any:
        return self._handle.objects

    def pod_resource_claims(self, pod: Pod) -> tuple[list[ResourceClaim], str]:
        return pod_claims(pod, self._objects)

    def _device_class(self, name: str) -> DeviceClass | None:
        dc = self._objects.get_object(KIND_DEVICE_CLASS, name)
        return dc if isinstance(dc, DeviceClass) else None

    def _slices(self) -> SliceIndex:
        """The ResourceSlices indexed by node, rebuilt when the slice set changed."""
        slices = [s for s in self._objects.list_objects(KIND_RESOURCE_SLICE)
                  if isinstance(s, ResourceSlice)]
        gen = tuple(id(s) for s in slices)
        if self._slice_index is None or gen != self._slice_gen:
            self._slice_index = SliceIndex(slices, self.features)
            self._slice_gen = gen
        return self._slice_index

    def _allocated_state(self) -> AbstractSet[DeviceID]:
        """GatherAllocatedState: devices of allocated claims, in-flight allocations included
        (with DRAConsumableCapacity, shared allocations are left out: see
        ``_allocated_capacity``)."""
        shared = self.features.consumable_capacity
        gen = getattr(self._objects, "generation", None)
        if gen is None or gen != self._alloc_gen:
            counts: Counter[DeviceID] = Counter()
            for c in self._objects.list_objects(KIND_RESOURCE_CLAIM):
                if isinstance(c, ResourceClaim) and c.status.allocation is not None:
                    counts.update(allocated_devices((c,), shared))
            self._alloc_counts = counts
            self._alloc_gen = gen
        if self._in_flight:
            return set(self._alloc_counts) | allocated_devices(self._in_flight.values(), shared)
        return self._alloc_counts.keys()

    def _allocated_capacity(self) -> dict[DeviceID, CapacityMap]:
        """Capacity consumed on shared devices by allocated and in-flight claims."""
        claims = [c for c in self._objects.list_objects(KIND_RESOURCE_CLAIM)
                  if isinstance(c, ResourceClaim) and c.status.allocation is not None
                  and (c.metadata.uid or c.metadata.key) not in self._in_flight]
        return allocated_capacity([*claims, *self._in_flight.values()])

    def _taint_rules(self) -> list[DeviceTaintRule]:
        if not (self.features.device_taints and self.features.device_taint_rules):
            return []
        return [r for r in self._objects.list_objects(KIND_DEVICE_TAINT_RULE)
                if isinstance(r, DeviceTaintRule)]

    def _binding_conditions_on(self) -> bool:
        return self.features.device_binding_conditions and self.features.device_status

    def _claim_timed_out(self, claim: ResourceClaim) -> bool:
        """isClaimTimeout: allocated with binding conditions more than the timeout ago."""
        alloc = claim.status.allocation
        stamp = _seconds(alloc.allocation_timestamp) if alloc is not None else None
        if alloc is None or stamp is None:
            return False
        if not any(r.binding_conditions for r in alloc.devices.results):
            return False
        now: float = self._handle.clock.now()
        return stamp + self.binding_timeout < now

    def _delete_claim(self, claim: ResourceClaim) -> None:
        delete = getattr(self._handle.host, "delete_object", None)
        if callable(delete):
            delete(claim)
        else:
            self._objects.delete(claim)
        self._alloc_gen = None

    def _write_claim(self, claim: ResourceClaim) -> None:
        """Update a claim as the API server would, so that the host and the next cycles see
        it (with the events a claim update triggers)."""
        store = self._objects
        old = store.get_object(KIND_RESOURCE_CLAIM, claim.metadata.key)
        before = getattr(store, "generation", None)
        update = getattr(self._handle.host, "update_object", None)
        if callable(update):
            update(claim)
        else:
            store.upsert(claim)
        after = getattr(store, "generation", None)
        if before is not None and before == self._alloc_gen and after == before + 1:
            # Only this write happened: move the allocated-device counts along.
            counts = self._alloc_counts
            if claim.status.allocation is not None:
                counts.update(allocated_devices((claim,), self.features.consumable_capacity))
            if isinstance(old, ResourceClaim) and old.status.allocation is not None:
                for d in allocated_devices((old,), self.features.consumable_capacity):
                    n = counts[d] - 1
                    if n > 0:
                        counts[d] = n
                    else:
                        counts.pop(d, None)
            self._alloc_gen = after
