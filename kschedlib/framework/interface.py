"""Extension points as typing Protocols: a plugin is any object with a ``name`` and the
methods of the points it implements. Success is ``None``; anything else is a Status."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from kschedlib.api.node import Namespace
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ClusterEventWithHint
from kschedlib.framework.status import Status
from kschedlib.framework.types import NodeInfo, PodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1


@attrs.define(slots=True, frozen=True)
class PreFilterResult:
    """The nodes a PreFilter plugin narrowed the cycle to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@attrs.define(slots=True, frozen=True)
class PostFilterResult:
    nominated_node_name: str = ""


@attrs.define(slots=True)
class NodeScore:
    name: str
    score: int


NodeToStatus = Mapping[str, Status]


# --- listers the plugins read (implemented by backend.Snapshot) ---


@runtime_checkable
class NodeInfoLister(Protocol):
    def list(self) -> Sequence[NodeInfo]: ...
    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]: ...
    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]: ...
    def get(self, node_name: str) -> NodeInfo: ...


@runtime_checkable
class StorageInfoLister(Protocol):
    def is_pvc_used_by_pods(self, key: str) -> bool: ...


@runtime_checkable
class SharedLister(Protocol):
    def node_infos(self) -> NodeInfoLister: ...
    def storage_infos(self) -> StorageInfoLister: ...


# --- extension points ---


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfoLike, b: QueuedPodInfoLike) -> bool: ...


class QueuedPodInfoLike(Protocol):
    """What QueueSort sees of a queued pod."""

    @property
    def pod(self) -> Pod: ...
    @property
    def timestamp(self) -> float: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class FilterRejectionsPlugin(FilterPlugin, Protocol):
    """Optional performance extension: after PreFilter, the status ``filter`` gives each node
    of the cycle's snapshot that it rejects, by node name, every other node passing (None
    when it cannot tell). It must agree with ``filter`` node by node for that ``state``; the
    statuses are rejections (never errors) naming the plugin, as the framework records them."""

    def filter_rejections(self, state: CycleState, pod: Pod) -> Mapping[str, Status] | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    """Optional performance extension: score every node in one call. It must give exactly
    what ``score`` gives node by node; the runtime prefers it when present."""

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]: ...


@runtime_checkable
class ScoreValuesExtensions(ScoreExtensions, Protocol):
    """Optional performance extension: NormalizeScore over plain scores in node order, in
    place; it must agree with ``normalize_score``."""

    def normalize_score_values(
        self, state: CycleState, pod: Pod, values: list[int]
    ) -> Status | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class NodeToStatusReader(Protocol):
    """The Filter verdict per node that PostFilter reads (framework.NodeToStatusReader)."""

    def get(self, node_name: str) -> Status: ...
    def nodes_for_status_code(
        self, lister: NodeInfoLister, code: Any
    ) -> list[NodeInfo]: ...


# --- what plugins receive from the framework ---


@runtime_checkable
class WaitingPod(Protocol):
    @property
    def pod(self) -> Pod: ...
    def get_pending_plugins(self) -> list[str]: ...
    def allow(self, plugin_name: str) -> None: ...
    def reject(self, plugin_name: str, msg: str) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...


class Handle(Protocol):
    """framework.Handle: what the framework offers plugins."""

    def snapshot_shared_lister(self) -> SharedLister: ...
    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None: ...
    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...
    def reject_waiting_pod(self, uid: str) -> bool: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def objects(self) -> ObjectStore: ...
    @property
    def host(self) -> HostHooks: ...


class ObjectStore(Protocol):
    """The other cluster objects plugins read (informer listers in kube-scheduler)."""

    def get_namespace(self, name: str) -> Namespace | None: ...
    def list_objects(self, kind: str) -> Iterable[Any]: ...
    def get_object(self, kind: str, key: str) -> Any | None: ...


class HostHooks(Protocol):
    """Side effects plugins ask the host to perform (API calls in kube-scheduler)."""

    def delete_pod(self, pod: Pod, reason: str) -> None: ...
    def clear_nominated_node_name(self, pod: Pod) -> None: ...
    def amend_assumed_pod(self, pod: Pod, annotations: Mapping[str, str]) -> Pod:
        """Reserve only: add ``annotations`` to the pod of the current cycle (a patch of the
        pod in kube-scheduler, e.g. the devices a plugin picked); returns the new object."""
        ...
