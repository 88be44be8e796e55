"""VolumeBinding: a pod's PVCs must be bound to PVs the node can reach, or be bindable on it
(a matching available PV, or dynamic provisioning the class allows there). Reserve assumes
the chosen bindings in memory; PreBind has no API to call and keeps them."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.quantity import parse_quantity
from kschedlib.api.storage import CSINode, PersistentVolumeClaim, StorageClass
from kschedlib.errors import ConfigError
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import MAX_NODE_SCORE, PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.signature import volumes_signable
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.noderesources.args import MAX_CUSTOM_PRIORITY_SCORE
from kschedlib.plugins.volumebinding import csi_translation as trans
from kschedlib.plugins.volumebinding.args import DEFAULT_STORAGE_CAPACITY_SHAPE, VolumeBindingArgs
from kschedlib.plugins.volumebinding.binder import (
    NO_POD_VOLUMES,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)
from kschedlib.plugins.volumebinding.storage_helpers import (
    CLAIM_LOST,
    KIND_PVC,
    claim_name_of,
    pvc_not_found,
    volume_is_for_pod,
)

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
MAX_UTILIZATION = 100


class StateData:
    """The pod's claims (PreFilter) and its volume decisions per feasible node (Filter).
    Shared, not copied, by clone(), as in kube-scheduler."""

    __slots__ = ("all_bound", "pod_volume_claims", "pod_volumes_by_node", "has_static_bindings")

    def __init__(self, pod_volume_claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.pod_volume_claims = pod_volume_claims
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False

    def clone(self) -> StateData:
        return self


def _not_found() -> Status:
    return Status.error("not found", NAME)


def _state(cs: CycleState) -> StateData | None:
    s = cs.get(STATE_KEY)
    return s if isinstance(s, StateData) else None


Scorer = Callable[[Mapping[str, tuple[int, int]]], int]


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def build_scorer(shape: Sequence[tuple[int, int]]) -> Scorer:
    """buildScorerFunction: per class, the broken-linear shape (scores scaled to 0..100) at
    the requested/capacity percentage; the node gets the rounded mean over classes."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    points = [(u, s * scale) for u, s in shape]

    def raw(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = points[i - 1]
                return ps + _go_div((s - ps) * (p - pu), u - pu)
        return points[-1][1]

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(class_resources: Mapping[str, tuple[int, int]]) -> int:
        if not class_resources:
            return 0
        total = sum(f(r, c) for r, c in class_resources.values())
        return _go_round(total / len(class_resources))

    return scorer


class VolumeBinding:
    """PreFilter/Filter/Score/Reserve/PreBind over an in-memory volume binder."""

    __slots__ = ("binder", "bind_timeout_seconds", "_scorer", "_scoring", "_handle", "_statuses")

    def __init__(
        self, args: VolumeBindingArgs, handle: Any, storage_capacity_scoring: bool = False
    ) -> None:
        self._handle = handle
        self.binder = VolumeBinder(handle)
        self.bind_timeout_seconds = args.bind_timeout_seconds
        self._scoring = storage_capacity_scoring
        self._scorer: Scorer | None = None
        if storage_capacity_scoring:
            shape = args.shape or DEFAULT_STORAGE_CAPACITY_SHAPE
            self._scorer = build_scorer([(p.utilization, p.score) for p in shape])
        self._statuses: dict[tuple[str, ...], Status] = {}

    @property
    def name(self) -> str:
        return NAME

    def clone(self, handle: Any) -> VolumeBinding:
        """A copy bound to ``handle`` with its own assumed PVs/PVCs (scheduler forks)."""
        new = VolumeBinding.__new__(VolumeBinding)
        new._handle = handle
        new.binder = self.binder.clone(handle)
        new.bind_timeout_seconds = self.bind_timeout_seconds
        new._scoring = self._scoring
        new._scorer = self._scorer
        new._statuses = self._statuses
        return new

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return () if volumes_signable(pod) else None

    # --- PreFilter ---

    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str]:
        """podHasPVCs: whether the pod uses PVCs, and why one of them is unusable ("" if none)."""
        has_pvc = False
        ns = pod.metadata.namespace
        objects = self._handle.objects
        for vol in pod.spec.volumes:
            ref = claim_name_of(pod, vol)
            if ref is None:
                continue
            name, ephemeral = ref
            has_pvc = True
            pvc = objects.get_object(KIND_PVC, f"{ns}/{name}")
            if not isinstance(pvc, PersistentVolumeClaim):
                if ephemeral:
                    return True, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return True, pvc_not_found(name)
            if pvc.status.phase == CLAIM_LOST:
                return True, (
                    f'persistentvolumeclaim "{pvc.metadata.name}" bound to non-existent '
                    f'persistentvolume "{pvc.spec.volume_name}"'
                )
            if pvc.metadata.deletion_timestamp is not None:
                return True, f'persistentvolumeclaim "{pvc.metadata.name}" is being deleted'
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    return True, err
        return has_pvc, ""

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        has_pvc, err = self._pod_has_pvcs(pod)
        if err:
            return None, Status(Code.UnschedulableAndUnresolvable, (err,), NAME)
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return None, SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as exc:
            return None, Status.error(exc, NAME)
        if claims.unbound_claims_immediate:
            return None, Status(
                Code.UnschedulableAndUnresolvable, (ERR_REASON_UNBOUND_IMMEDIATE,), NAME
            )
        state.write(STATE_KEY, StateData(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # --- Filter ---

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = _state(state)
        if s is None:
            return _not_found()
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        claims = s.pod_volume_claims
        if claims is None:
            return None
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(claims, node)
        except BinderError as exc:
            return Status.error(exc, NAME)
        if reasons:
            st = self._statuses.get(reasons)
            if st is None:
                st = self._statuses[reasons] = Status(
                    Code.UnschedulableAndUnresolvable, reasons, NAME
                )
            return st
        s.pod_volumes_by_node[node.metadata.name] = pod_volumes
        if pod_volumes.static_bindings:
            s.has_static_bindings = True
        return None

    # --- Score (only with the StorageCapacityScoring gate) ---

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return SKIP
        s = _state(state)
        if s is None:
            return _not_found()
        return None if s.has_static_bindings or self._scoring else SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self._scorer is None:
            return 0, None
        s = _state(state)
        if s is None:
            return 0, _not_found()
        pod_volumes = s.pod_volumes_by_node.get(node_info.name)
        if pod_volumes is None:
            return 0, None
        classes: dict[str, tuple[int, int]] = {}
        # Without storage capacity objects, only static bindings carry sizes to score.
        for b in pod_volumes.static_bindings:
            req, cap = b.storage_resource()
            r0, c0 = classes.get(b.storage_class_name(), (0, 0))
            classes[b.storage_class_name()] = (r0 + req, c0 + cap)
        return self._scorer(classes), None

    def score_extensions(self) -> None:
        return None

    # --- Reserve / Unreserve / PreBind ---

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if s is None:
            return _not_found()
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            s.all_bound = True  # the pod references no PVC
            return None
        try:
            all_bound, assumed = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except BinderError as exc:
            return Status.error(exc, NAME)
        s.all_bound = all_bound
        s.pod_volumes_by_node[node_name] = assumed
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = _state(state)
        if s is None:
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None and pod_volumes is not NO_POD_VOLUMES:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if s is None:
            return _not_found()
        return SKIP if s.all_bound else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Nothing to send: the assumed bindings stand in for the API updates and the PV
        controller's work, and stay visible to later pods."""
        s = _state(state)
        if s is None:
            return _not_found()
        if s.all_bound:
            return None
        if node_name not in s.pod_volumes_by_node:
            return Status.error(f'no pod volumes found for node "{node_name}"', NAME)
        return None

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, add_update),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
                self.is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume, add_update)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, add_update),
                self.is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSIDriver, ActionType.Update),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSIStorageCapacity, add_update),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        ]

    def is_schedulable_after_csi_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue on a new CSINode or a change of its migrated-plugins annotation."""
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            raise TypeError("expected CSINode objects")
        key = trans.MIGRATED_PLUGINS_ANNOTATION
        if old_obj.metadata.annotations.get(key) != new_obj.metadata.annotations.get(key):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pvc_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a claim the pod uses (directly or as an ephemeral volume) changes."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError("expected a PersistentVolumeClaim")
        if new_obj.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        for vol in pod.spec.volumes:
            ref = claim_name_of(pod, vol)
            if ref is not None and ref[0] == new_obj.metadata.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue on a new class, or an update of its allowedTopologies."""
        if not isinstance(new_obj, StorageClass):
            raise TypeError("expected a StorageClass")
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, StorageClass):
            raise TypeError("expected a StorageClass")
        if old_obj.allowed_topologies != new_obj.allowed_topologies:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_driver_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a driver of the pod's inline CSI volumes stops tracking capacity.
        CSIDriver objects are plain mappings (no typed model)."""
        name = _get(new_obj, "metadata", "name")
        for vol in pod.spec.volumes:
            if vol.csi is None or vol.csi.get("driver") != name:
                continue
            if _get(old_obj, "spec", "storageCapacity") is True and (
                _get(new_obj, "spec", "storageCapacity") is not True
            ):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue on new capacity, or when the volume limit grew (plain mappings)."""
        if old_obj is None:
            return QueueingHint.Queue
        old_limit, new_limit = _volume_limit(old_obj), _volume_limit(new_obj)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _volume_limit(cap: Any) -> int | None:
    """volumeLimit: maximumVolumeSize when set, else capacity (bytes, rounded up)."""
    q = _get(cap, "maximumVolumeSize")
    if q is None:
        q = _get(cap, "capacity")
    return None if q is None else parse_quantity(str(q)).value()


def new(args: Any, handle: Any) -> VolumeBinding:
    if args is None:
        args = VolumeBindingArgs()
    if not isinstance(args, VolumeBindingArgs):
        raise ConfigError(f"want args to be of type VolumeBindingArgs, got {type(args).__name__}")
    scoring = features_of(handle).enable_storage_capacity_scoring
    errs = args.validate(storage_capacity_scoring=scoring)
    if errs:
        raise ConfigError("; ".join(f"{p}: {m}" for p, m in errs))
    return VolumeBinding(args, handle, storage_capacity_scoring=scoring)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new, VolumeBindingArgs),)
