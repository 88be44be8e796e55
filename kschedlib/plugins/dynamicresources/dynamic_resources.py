"""DynamicResources: kube-scheduler v1.35's DRA plugin with structured parameters.

PreEnqueue holds pods whose claims do not exist (yet); PreFilter collects the pod's claims,
checks device classes and prepares the structured allocator; Filter allocates per node;
PostFilter deallocates an allocated claim that kept the pod off some nodes; Reserve keeps
the chosen allocation in flight; PreBind writes allocation and ``reservedFor`` into the
scheduler's object store; Score ranks prioritized-list choices. Every rejection is
UnschedulableAndUnresolvable, as in v1.35."""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod
from kschedlib.api.resource import is_extended_resource, pod_requests
from kschedlib.api.resource_v1 import (
    DELETE_PROTECTION_FINALIZER,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    RESERVED_FOR_MAX_SIZE,
    RESOURCE_DEVICE_CLASS_PREFIX,
    AllocationResult,
    DeviceClaim,
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceSlice,
)
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import (
    MAX_NODE_SCORE,
    NodeScore,
    NodeToStatusReader,
    PostFilterResult,
    PreFilterResult,
)
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    CapacityMap,
    DeviceID,
    FailedOnNode,
    Features,
    SliceIndex,
    allocated_capacity,
    allocated_devices,
)
from kschedlib.plugins.dynamicresources.extended import MappingCache, create_requests
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache
from kschedlib.plugins.helper import default_normalize_score, default_normalize_values

NAME = "DynamicResources"
STATE_KEY = NAME
KIND_RESOURCE_CLAIM = "ResourceClaim"
KIND_RESOURCE_SLICE = "ResourceSlice"
KIND_DEVICE_CLASS = "DeviceClass"
KIND_DEVICE_TAINT_RULE = "DeviceTaintRule"
MSG_NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_DELETED = "deletion of ResourceClaim completed"
# The name of the in-memory special claim before PreBind creates it (specialClaimInMemName).
SPECIAL_CLAIM_NAME = "<extended-resources>"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_IN_USE = "resourceclaim in use"
# Kept for callers of the earlier, allocation-less plugin.
MSG_ALLOCATION_UNSUPPORTED = MSG_CANNOT_ALLOCATE
# resourceapi.FirstAvailableDeviceRequestMaxSize: the prioritized-list score base.
FIRST_AVAILABLE_MAX = 8

_NO_CLAIMS = Status(Code.Unschedulable, (MSG_NO_CLAIMS_TO_DEALLOCATE,), NAME)
_STILL_NOT_SCHEDULABLE = Status(Code.Unschedulable, (MSG_STILL_NOT_SCHEDULABLE,), NAME)


def _is_extended(name: str) -> bool:
    """An extended resource name, the implicit ``deviceclass.resource.kubernetes.io/<class>``
    ones included."""
    return name.startswith(RESOURCE_DEVICE_CLASS_PREFIX) or is_extended_resource(name)


def _suffix(seed: str) -> str:
    """Five characters as kube-apiserver's generateName draws them (stable per seed here)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = int(hashlib.sha256(seed.encode()).hexdigest(), 16)
    out = []
    for _ in range(5):
        n, r = divmod(n, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


def _unresolvable(msg: str) -> Status:
    """statusUnschedulable: every DynamicResources rejection is UnschedulableAndUnresolvable."""
    return Status(Code.UnschedulableAndUnresolvable, (msg,), NAME)


class StateData:
    """Per-cycle data (stateData): the pod's claims and what Filter found per node."""

    __slots__ = (
        "claims", "available_on", "allocator", "to_allocate", "node_allocations",
        "unavailable_claims", "allocations", "ext_claim", "ext_resources", "ext_mapping",
        "node_ext_claims", "ext_by_requests", "user_claims",
    )

    def __init__(self, claims: tuple[ResourceClaim, ...] = ()) -> None:
        self.claims = claims
        self.user_claims = len(claims)
        # DRAExtendedResource: the special claim (last in ``claims``), the pod's scalar
        # requests and the resource-to-class mapping; per node the claim Filter built.
        self.ext_claim: ResourceClaim | None = None
        self.ext_resources: dict[str, int] = {}
        self.ext_mapping: dict[str, str] = {}
        self.node_ext_claims: dict[str, ResourceClaim | None] = {}
        self.ext_by_requests: dict[Any, ResourceClaim] = {}
        self.available_on: list[NodeSelectorMatcher | None] = []
        self.allocator: Allocator | None = None
        self.to_allocate: list[ResourceClaim] = []
        self.node_allocations: dict[str, list[AllocationResult]] = {}
        self.unavailable_claims: set[int] = set()
        # Set by Reserve: the allocation chosen for each claim index (None: was allocated).
        self.allocations: list[AllocationResult | None] = []

    def clone(self) -> StateData:
        return self


def _not_found() -> Status:
    """What kube-scheduler reports when the cycle state has no entry (framework.ErrNotFound)."""
    return Status.error("not found", NAME)


def _field(obj: Any, *path: str) -> Any:
    """A nested field of an object given as attrs model or plain mapping."""
    for key in path:
        if obj is None:
            return None
        obj = obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)
    return obj


def claim_name(pod: Pod, claim: Any) -> tuple[str | None, bool, str]:
    """resourceclaim.Name: the ResourceClaim a pod claim refers to (None: no claim needed),
    whether the pod must own it, or why there is none."""
    if claim.resource_claim_name is not None:
        return claim.resource_claim_name, False, ""
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if claim.resource_claim_template_name is not None:
        for st in pod.status.resource_claim_statuses:
            if st.name == claim.name:
                return st.resource_claim_name, True, ""
        return None, False, f'pod "{key}": ResourceClaim not created yet'
    return None, False, (
        f'pod "{key}", spec.resourceClaim "{claim.name}": none of the supported fields are set'
    )


def _controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """metav1.IsControlledBy; a pod written without a uid is matched by name."""
    uid = pod.metadata.uid
    for ref in claim.metadata.owner_references:
        if ref.controller and (ref.uid == uid if uid else ref.name == pod.metadata.name):
            return True
    return False


def is_reserved_for(pod: Pod, claim: ResourceClaim) -> bool:
    """resourceclaim.IsReservedForPod: by UID only."""
    return any(r.uid == pod.uid for r in claim.status.reserved_for)


def pod_claims(pod: Pod, objects: Any) -> tuple[list[ResourceClaim], str]:
    """foreachPodResourceClaim: the pod's claims in spec order, or why one is unusable."""
    out: list[ResourceClaim] = []
    ns = pod.metadata.namespace
    for c in pod.spec.resource_claims:
        name, must_own, err = claim_name(pod, c)
        if err:
            return [], err
        if name is None:
            continue
        obj = objects.get_object(KIND_RESOURCE_CLAIM, f"{ns}/{name}")
        if not isinstance(obj, ResourceClaim):
            return [], f'could not find ResourceClaim "{ns}/{name}"'
        if obj.metadata.deletion_timestamp is not None:
            return [], f'resourceclaim "{name}" is being deleted'
        if must_own and not _controlled_by(obj, pod):
            return [], (
                f"ResourceClaim {ns}/{name} was not created for pod {ns}/{pod.metadata.name} "
                "(pod is not owner)"
            )
        out.append(obj)
    return out, ""


def extended_resource_claim(pod: Pod, objects: Any) -> ResourceClaim | None:
    """findExtendedResourceClaim: the claim the scheduler created for the pod's DRA-backed
    extended resources (annotated, controlled by the pod), if any."""
    for c in objects.list_objects(KIND_RESOURCE_CLAIM):
        if (
            isinstance(c, ResourceClaim)
            and c.metadata.namespace == pod.metadata.namespace
            and c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
            and any(
                r.controller and r.name == pod.metadata.name
                and (r.uid == pod.metadata.uid if pod.metadata.uid else True)
                for r in c.metadata.owner_references
            )
        ):
            return c
    return None


class DynamicResources:
    """DRA with structured parameters (v1.35 default feature set)."""

    __slots__ = (
        "_handle", "features", "cel", "_in_flight", "_slice_index", "_slice_gen",
        "_alloc_counts", "_alloc_gen", "_request_matches", "_ext_mapping",
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

    @property
    def name(self) -> str:
        return NAME

    def clone(self, handle: Any) -> DynamicResources:
        """A copy bound to ``handle`` for a scheduler fork: its own in-flight allocations and
        device counts; the pure memo of selector results is shared."""
        new = DynamicResources(handle, self.features)
        new.cel = self.cel
        new._in_flight = dict(self._in_flight)
        new._alloc_counts = Counter(self._alloc_counts)
        new._alloc_gen = self._alloc_gen
        return new

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

    # --- PreEnqueue ---

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.resource_claims:
            return None
        _, err = self.pod_resource_claims(pod)
        return _unresolvable(err) if err else None

    # --- PreFilter / Filter ---

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

    def pre_filter_extensions(self) -> None:
        return None

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
            if m is not None and not m.matches(node.metadata.labels, node.metadata.name)
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

    # --- PostFilter ---

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

    # --- Score ---

    def _score_node(self, s: StateData, node_name: str) -> tuple[int, Status | None]:
        if s.allocator is None:
            return 0, None
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return 0, None
        if len(allocations) < len(s.claims):
            return 0, Status.error(
                f"number of allocations {len(allocations)} is smaller than number of claims",
                NAME,
            )
        score = 0
        for i, claim in enumerate(s.claims):
            results = allocations[i].devices.results
            for r in claim.spec.devices.requests:
                if not r.first_available:
                    continue
                for res in results:
                    parent, _, sub = res.request.partition("/")
                    if parent != r.name or not sub:
                        continue
                    for j, sr in enumerate(r.first_available):
                        if sr.name == sub:
                            score += FIRST_AVAILABLE_MAX - j
                            break
                    break
        return score, None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return 0, _not_found()
        return self._score_node(s, node_info.name)

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (0 everywhere for pods without claims to allocate)."""
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return [], _not_found()
        if s.allocator is None:
            return [0] * len(nodes), None
        out: list[int] = []
        for ni in nodes:
            v, st = self._score_node(s, ni.name)
            if st is not None:
                return [], st
            out.append(v)
        return out, None

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score_values(
        self, state: CycleState, pod: Pod, values: list[int]
    ) -> Status | None:
        """normalize_score over plain scores in node order (in place)."""
        default_normalize_values(MAX_NODE_SCORE, False, values)
        return None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # --- Reserve / PreBind ---

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
        for i, claim in enumerate(s.claims):
            if claim is s.ext_claim:
                st = self._bind_extended(s, pod, node_name, i)
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
            self._write_claim(attrs.evolve(base, metadata=meta, status=status))
            self._in_flight.pop(uid, None)
        return None

    def _bind_extended(
        self, s: StateData, pod: Pod, node_name: str, index: int
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
        claim = attrs.evolve(
            node_ext, metadata=meta,
            status=ResourceClaimStatus(allocation=allocation, reserved_for=(ref,)),
        )
        self._write_claim(claim)
        return None

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

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        node_actions = (
            ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
        )
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ResourceClaim, add_update),
                self.is_schedulable_after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, add_update)),
        ]

    def is_schedulable_after_claim_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a claim got deallocated, or one the pod uses appeared or changed status.
        Objects other than ResourceClaims are an error (the queue then requeues the pod)."""
        if not isinstance(new_obj, ResourceClaim) or (
            old_obj is not None and not isinstance(old_obj, ResourceClaim)
        ):
            bad = new_obj if not isinstance(new_obj, ResourceClaim) else old_obj
            raise TypeError(f"expected ResourceClaim, got {type(bad).__name__}")
        claims, err = self.pod_resource_claims(pod)
        if err:
            return QueueingHint.QueueSkip
        new_uid = _field(new_obj, "metadata", "uid")
        new_key = (_field(new_obj, "metadata", "namespace"), _field(new_obj, "metadata", "name"))
        uses = any(
            c.metadata.uid == new_uid if new_uid else
            (c.metadata.namespace, c.metadata.name) == new_key
            for c in claims
        )
        if (
            old_obj is not None
            and _field(old_obj, "status", "allocation") is not None
            and _field(new_obj, "status", "allocation") is None
        ):
            return QueueingHint.Queue
        if not uses:
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if _field(old_obj, "status") == _field(new_obj, "status"):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when this very pod got the ResourceClaims it waited for."""
        if not isinstance(new_obj, Pod):
            raise TypeError("expected a Pod")
        if new_obj.uid != pod.uid:
            return QueueingHint.QueueSkip
        _, err = self.pod_resource_claims(new_obj)
        return QueueingHint.QueueSkip if err else QueueingHint.Queue


def new(args: Any, handle: Any) -> DynamicResources:
    """Factory: the allocator's features from the handle's feature gates."""
    fts = features_of(handle)
    return DynamicResources(
        handle,
        Features(
            admin_access=fts.enable_dra_admin_access,
            prioritized_list=fts.enable_dra_prioritized_list,
            partitionable_devices=fts.enable_dra_partitionable_devices,
            device_taints=fts.enable_dra_device_taints,
            consumable_capacity=fts.enable_dra_consumable_capacity,
            device_binding_conditions=fts.enable_dra_device_binding_conditions,
            device_taint_rules=fts.enable_dra_device_taint_rules,
            extended_resource=fts.enable_dra_extended_resource,
            device_status=fts.enable_dra_resource_claim_device_status,
        ),
    )


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
