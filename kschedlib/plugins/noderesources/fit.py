"""NodeResourcesFit: filter out nodes without room for the pod's requests and score the rest
with the configured strategy (LeastAllocated, MostAllocated or RequestedToCapacityRatio)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resource,
    is_extended_resource,
    is_scalar_resource,
    pod_requests,
)
from kschedlib.errors import ConfigError
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState, StateNotFoundError
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.status import Code, Status, shared_rejection
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.dynamicresources.extended import MappingCache
from kschedlib.plugins.helper.typed import as_objects
from kschedlib.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from kschedlib.plugins.noderesources.least_allocated import least_resource_scorer
from kschedlib.plugins.noderesources.most_allocated import most_resource_scorer
from kschedlib.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from kschedlib.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    Scorer,
    Term,
)

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME


@attrs.define(slots=True, frozen=True)
class InsufficientResource:
    """A resource the node lacks for the pod; ``unresolvable`` when even an empty node would."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


class PreFilterState:
    """The pod's effective request (init containers, sidecars, overhead, pod-level resources).

    ``scalars`` lists the non-zero scalar requests the filter checks (ignored extended
    resources left out), sorted by name so that reasons come in a stable order.
    """

    __slots__ = (
        "milli_cpu", "memory", "ephemeral_storage", "scalars", "request", "dra", "rejections",
    )

    def __init__(
        self, request: Resource, scalars: tuple[tuple[str, int], ...],
        dra: frozenset[str] = frozenset(),
    ) -> None:
        self.request = request
        # Extended resources a DeviceClass maps (DRAExtendedResource): DRA's business on a
        # node without device-plugin capacity for them.
        self.dra = dra
        self.milli_cpu = request.milli_cpu
        self.memory = request.memory
        self.ephemeral_storage = request.ephemeral_storage
        self.scalars = scalars
        self.rejections: dict[tuple[bool, int, int, int], Status] = {}
        """Filter's verdict per shortage pattern (this request without scalar resources)."""

    def clone(self) -> PreFilterState:
        return self


class PreScoreState:
    """The pod's scoring request per configured resource, and the terms that may count."""

    __slots__ = ("pod_requests", "terms")

    def __init__(self, pod_requests_list: list[int], terms: tuple[Term, ...]) -> None:
        self.pod_requests = pod_requests_list
        self.terms = terms

    def clone(self) -> PreScoreState:
        return self


def compute_pod_resource_request(pod: Pod, pod_level: bool = True) -> Resource:
    """computePodResourceRequest: the pod's requests as a Resource (SetMaxResource of PodRequests);
    pod-level requests count only with the PodLevelResources gate (``pod_level``)."""
    r = Resource()
    r.add_exact(pod_requests(pod, skip_pod_level=not pod_level))
    r.allowed_pod_number = 0
    return r


def _ignored(name: str, ignored: frozenset[str], ignored_groups: frozenset[str]) -> bool:
    if not is_extended_resource(name):
        return False
    return name in ignored or (bool(ignored_groups) and name.split("/")[0] in ignored_groups)


def fits_request(
    request: Resource,
    node_info: NodeInfo,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    dra: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """fitsRequest: every resource the node lacks for ``request``, scalar ones by name; a
    resource in ``dra`` (mapped by a DeviceClass) is left to DynamicResources on a node whose
    allocatable has none of it (shouldDelegateResourceToDRA)."""
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource(PODS, "Too many pods", 1, n_pods, alloc.allowed_pod_number))
    if (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalar_resources
    ):
        return out
    for name, req, have, cap in (
        (CPU, request.milli_cpu, used.milli_cpu, alloc.milli_cpu),
        (MEMORY, request.memory, used.memory, alloc.memory),
        (
            EPHEMERAL_STORAGE,
            request.ephemeral_storage,
            used.ephemeral_storage,
            alloc.ephemeral_storage,
        ),
    ):
        if req > 0 and req > cap - have:
            out.append(
                InsufficientResource(name, f"Insufficient {name}", req, have, cap, req > cap)
            )
    for name in sorted(request.scalar_resources):
        req = request.scalar_resources[name]
        if req == 0 or _ignored(name, ignored, ignored_groups):
            continue
        cap = alloc.scalar_resources.get(name, 0)
        if cap <= 0 and name in dra:
            continue
        have = used.scalar_resources.get(name, 0)
        if req > cap - have:
            out.append(
                InsufficientResource(name, f"Insufficient {name}", req, have, cap, req > cap)
            )
    return out


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Fits: whether ``node_info`` has room for ``pod`` (no resources ignored)."""
    return fits_request(compute_pod_resource_request(pod), node_info)


def _status_of(insufficient: Sequence[InsufficientResource]) -> Status:
    """The Filter verdict; one shared object per distinct verdict, named after the plugin
    (as the framework would name it), so nodes rejected alike share one Status."""
    code = Code.Unschedulable
    for r in insufficient:
        if r.unresolvable:
            code = Code.UnschedulableAndUnresolvable
    return shared_rejection(code, tuple(r.reason for r in insufficient), NAME)


def _shortage(request: int, used: int, capacity: int) -> int:
    """0 when ``request`` fits (or is 0), 1 when short on this node, 2 when beyond its
    capacity (fitsRequest's insufficient and unresolvable)."""
    if request <= 0 or request <= capacity - used:
        return 0
    return 2 if request > capacity else 1


def _build_scorer(strategy: ScoringStrategy) -> Scorer:
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_scorer
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scorer
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        rtcr = strategy.requested_to_capacity_ratio
        if rtcr is None or not rtcr.shape:
            raise ConfigError(
                "scoringStrategy.requestedToCapacityRatio: the shape must have at least one point"
            )
        return requested_to_capacity_ratio_scorer(rtcr.shape)
    raise ConfigError(f"scoring strategy {strategy.type} is not supported")


class Fit:
    """The NodeResourcesFit plugin: PreFilter, Filter, PreScore, Score and queueing hints."""

    __slots__ = (
        "_classes", "_dra", "_ignored", "_ignored_groups", "_memo", "_pod_level", "_scorer",
        "handle",
    )

    def __init__(self, args: NodeResourcesFitArgs, handle: Any = None) -> None:
        fts = features_of(handle)
        self._pod_level = fts.enable_pod_level_resources
        self._dra = fts.enable_dra_extended_resource
        self._classes = MappingCache()
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy
        self._scorer = ResourceAllocationScorer(
            strategy.type,
            strategy.resources,
            _build_scorer(strategy),
            use_requested=False,
            pod_level=False,
        )
        self.handle = handle
        # The last pod's request (pods are immutable; a cycle asks several times).
        self._memo: tuple[Pod, Resource] | None = None

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        r = self._request(pod)
        return (
            r.milli_cpu,
            r.memory,
            r.ephemeral_storage,
            tuple(sorted(r.scalar_resources.items())),
            tuple(self._scorer.pod_request_list(pod)),
        )

    # --- PreFilter / Filter ---

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        request = self._request(pod)
        scalars = tuple(
            (name, q)
            for name, q in sorted(request.scalar_resources.items())
            if q != 0 and not _ignored(name, self._ignored, self._ignored_groups)
        )
        dra: frozenset[str] = frozenset()
        if self._dra and scalars:
            objects = getattr(self.handle, "objects", None)
            if objects is not None:
                mapping = self._classes.get(objects)
                dra = frozenset(n for n, _ in scalars if n in mapping)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(request, scalars, dra))
        return None, None

    def _request(self, pod: Pod) -> Resource:
        memo = self._memo
        if memo is not None and memo[0] is pod:
            return memo[1]
        request = compute_pod_resource_request(pod, self._pod_level)
        self._memo = (pod, request)
        return request

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        alloc = node_info.allocatable
        used = node_info.requested
        cpu = s.milli_cpu
        mem = s.memory
        eph = s.ephemeral_storage
        if (
            len(node_info.pods) >= alloc.allowed_pod_number
            or (cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu)
            or (mem > 0 and mem > alloc.memory - used.memory)
            or (eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage)
        ):
            if s.request.scalar_resources:
                return _status_of(
                    fits_request(s.request, node_info, self._ignored, self._ignored_groups, s.dra)
                )
            # Without scalar resources the verdict is a function of which resources are
            # short, and whether beyond the node's capacity: computed once per pattern.
            key = (
                len(node_info.pods) >= alloc.allowed_pod_number,
                _shortage(cpu, used.milli_cpu, alloc.milli_cpu),
                _shortage(mem, used.memory, alloc.memory),
                _shortage(eph, used.ephemeral_storage, alloc.ephemeral_storage),
            )
            st = s.rejections.get(key)
            if st is None:
                st = s.rejections[key] = _status_of(
                    fits_request(s.request, node_info, self._ignored, self._ignored_groups, s.dra)
                )
            return st
        if s.scalars:
            a_sr = alloc.scalar_resources
            u_sr = used.scalar_resources
            dra = s.dra
            for name, q in s.scalars:
                have = a_sr.get(name, 0)
                if dra and have <= 0 and name in dra:
                    continue
                if q > have - u_sr.get(name, 0):
                    return _status_of(fits_request(
                        s.request, node_info, self._ignored, self._ignored_groups, dra
                    ))
        return None

    # --- PreScore / Score ---

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self._pre_score_state(pod))
        return None

    def _pre_score_state(self, pod: Pod) -> PreScoreState:
        reqs = self._scorer.pod_request_list(pod)
        return PreScoreState(reqs, self._scorer.terms(reqs))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = self._pre_score_state(pod)
        return self._scorer.score(node_info, s.terms), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (same result as ``score`` per node)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = self._pre_score_state(pod)
        score, terms = self._scorer.score, s.terms
        return [score(ni, terms) for ni in nodes], None

    def score_extensions(self) -> None:
        return None

    # --- queueing hints ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A deleted scheduled (or nominated) pod, or a scale-down that frees what the pod needs."""
        old_obj, new_obj = as_objects(Pod, old_obj, new_obj)
        if new_obj is None:
            if old_obj is None:
                return QueueingHint.Queue
            if not old_obj.spec.node_name and not old_obj.status.nominated_node_name:
                return QueueingHint.QueueSkip
            return QueueingHint.Queue
        if old_obj is None:
            return QueueingHint.Queue  # not an event Fit registers for: stay conservative
        if is_schedulable_after_pod_scale_down(pod, old_obj, new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """A new node with room for the pod, or more of a resource it requests on a node."""
        old_obj, new_obj = as_objects(Node, old_obj, new_obj)
        if new_obj is None:
            return QueueingHint.Queue
        if not is_fit(pod, new_obj):
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if not have_any_requested_resources_increased(pod, old_obj, new_obj):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


def is_schedulable_after_pod_scale_down(target: Pod, original: Pod, modified: Pod) -> bool:
    """The update is for the pod itself, or a scheduled pod lowered a request it also has."""
    if modified.uid == target.uid:
        return True
    if not modified.spec.node_name:
        return False
    before = compute_pod_resource_request(original)
    after = compute_pod_resource_request(modified)
    for name, q in pod_requests(target).items():
        if q.is_zero():
            continue
        counted = name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)
        if counted and before.get(name) > after.get(name):
            return True
    return False


def is_fit(pod: Pod, node: Node | None) -> bool:
    """Whether ``pod`` fits an empty ``node``."""
    if node is None:
        return False
    return not fits(pod, NodeInfo(node))


def have_any_requested_resources_increased(pod: Pod, original: Node, modified: Node) -> bool:
    """More allowed pods, or more allocatable of a resource the pod requests."""
    request = compute_pod_resource_request(pod)
    before = NodeInfo(original).allocatable
    after = NodeInfo(modified).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalar_resources
    ):
        return False
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        q != 0 and after.scalar_resources.get(name, 0) > before.scalar_resources.get(name, 0)
        for name, q in request.scalar_resources.items()
    )


def new_fit(args: NodeResourcesFitArgs | None, handle: Any) -> Fit:
    """Factory: validates the args as NewFit does."""
    args = args if args is not None else NodeResourcesFitArgs()
    errs = args.validate()
    if errs:
        raise ConfigError("; ".join(f"{path}: {msg}" for path, msg in errs))
    return Fit(args, handle)
