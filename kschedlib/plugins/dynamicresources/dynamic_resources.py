"""DynamicResources (DRA) as far as the default profile needs it: pods without resource
claims pass every point (Score 0; PostFilter says there is nothing to deallocate). Device
allocation is not implemented: a pod with claims is UnschedulableAndUnresolvable."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod, PodResourceClaim
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
from kschedlib.plugins.helper import default_normalize_score, default_normalize_values

NAME = "DynamicResources"
STATE_KEY = NAME
KIND_RESOURCE_CLAIM = "ResourceClaim"
MSG_NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_ALLOCATION_UNSUPPORTED = (
    "kschedlib does not implement dynamic resource allocation: pod has resource claims"
)

_NO_CLAIMS = Status(Code.Unschedulable, (MSG_NO_CLAIMS_TO_DEALLOCATE,), NAME)
_STILL_NOT_SCHEDULABLE = Status(Code.Unschedulable, (MSG_STILL_NOT_SCHEDULABLE,), NAME)


class StateData:
    """The pod's resource claims (names), empty for pods without any."""

    __slots__ = ("claims",)

    def __init__(self, claims: tuple[str, ...] = ()) -> None:
        self.claims = claims

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


def claim_name(pod: Pod, claim: PodResourceClaim) -> tuple[str | None, str]:
    """resourceclaim.Name: the ResourceClaim a pod claim refers to, or why it has none.

    Claims from templates are named in pod.status.resourceClaimStatuses, which the API model
    does not carry: they count as not created yet."""
    if claim.resource_claim_name is not None:
        return claim.resource_claim_name, ""
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if claim.resource_claim_template_name is not None:
        return None, f'pod "{key}": ResourceClaim not created yet'
    return None, f'pod "{key}", spec.resourceClaim "{claim.name}": API unsupported'


class DynamicResources:
    """The DRA plugin's extension points for pods without claims; rejects pods with claims."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return None if pod.spec.resource_claims else ()

    def pod_resource_claims(self, pod: Pod) -> tuple[tuple[str, ...], str]:
        """foreachPodResourceClaim: the names of the pod's claims, or why one is unusable."""
        names: list[str] = []
        ns = pod.metadata.namespace
        for c in pod.spec.resource_claims:
            name, err = claim_name(pod, c)
            if err:
                return (), err
            if name is None:
                continue
            obj = self._handle.objects.get_object(KIND_RESOURCE_CLAIM, f"{ns}/{name}")
            if obj is None:
                return (), f'resourceclaim.resource.k8s.io "{name}" not found'
            if _field(obj, "metadata", "deletion_timestamp") or _field(
                obj, "metadata", "deletionTimestamp"
            ):
                return (), f'resourceclaim "{name}" is being deleted'
            names.append(name)
        return tuple(names), ""

    # --- PreEnqueue ---

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.resource_claims:
            return None
        _, err = self.pod_resource_claims(pod)
        return Status(Code.UnschedulableAndUnresolvable, (err,), NAME) if err else None

    # --- PreFilter / Filter ---

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(STATE_KEY, StateData())
        if not pod.spec.resource_claims:
            return None, SKIP
        claims, err = self.pod_resource_claims(pod)
        if err:
            return None, Status(Code.UnschedulableAndUnresolvable, (err,), NAME)
        if not claims:
            return None, SKIP
        return None, Status(Code.UnschedulableAndUnresolvable, (MSG_ALLOCATION_UNSUPPORTED,), NAME)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
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
        return None, _STILL_NOT_SCHEDULABLE

    # --- Score ---

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return 0, _not_found()
        return 0, None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once: 0 everywhere (no claims are allocated here)."""
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return [], _not_found()
        return [0] * len(nodes), None

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
        return None if isinstance(s, StateData) else _not_found()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return _not_found()
        return SKIP if not s.claims else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        return None if isinstance(s, StateData) else _not_found()

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
        """Queue when a claim got deallocated, or one the pod uses appeared or changed status."""
        claims, err = self.pod_resource_claims(pod)
        if err:
            return QueueingHint.QueueSkip
        if (
            old_obj is not None
            and _field(old_obj, "status", "allocation") is not None
            and _field(new_obj, "status", "allocation") is None
        ):
            return QueueingHint.Queue
        uses = _field(new_obj, "metadata", "namespace") == pod.metadata.namespace and (
            _field(new_obj, "metadata", "name") in claims
        )
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
    return DynamicResources(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
