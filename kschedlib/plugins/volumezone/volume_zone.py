"""VolumeZone: a pod whose bound PVs carry zone/region labels fits only nodes in those zones."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.signature import volumes_signable
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.volumebinding.csi_translation import (
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
)
from kschedlib.plugins.volumebinding.storage_helpers import (
    KIND_PV,
    KIND_PVC,
    WAIT_FOR_FIRST_CONSUMER,
    get_storage_class,
    label_zones_to_set,
    pv_not_found,
    pvc_class,
    pvc_not_found,
    storage_class_not_found,
)

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION)
_GA_LABEL = {LABEL_BETA_REGION: LABEL_TOPOLOGY_REGION, LABEL_BETA_ZONE: LABEL_TOPOLOGY_ZONE}

_CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)


@attrs.define(slots=True, frozen=True)
class PVTopology:
    """One topology label of a bound PV: the key and the zones (or regions) it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


@attrs.define(slots=True, frozen=True)
class StateData:
    pod_pv_topologies: tuple[PVTopology, ...]

    def clone(self) -> StateData:
        return self


def pv_topologies(pv: PersistentVolume) -> tuple[PVTopology, ...]:
    """getPVTopologies: the PV's topology labels that parse."""
    out: list[PVTopology] = []
    labels = pv.metadata.labels
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append(PVTopology(pv.metadata.name, key, zones))
    return tuple(out)


def _claim_names(pod: Pod) -> list[str]:
    return [
        v.persistent_volume_claim.claim_name
        for v in pod.spec.volumes
        if v.persistent_volume_claim is not None
    ]


def _unresolvable(msg: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, (msg,), NAME)


class VolumeZone:
    """PreFilter gathers the topology labels of the pod's bound PVs; Filter matches nodes."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return () if volumes_signable(pod) else None

    def get_pv_by_pod(self, pod: Pod) -> tuple[tuple[PVTopology, ...], Status | None]:
        """getPVbyPod: the topologies of the pod's PVs; unbound WaitForFirstConsumer claims
        are skipped, any other unusable claim is UnschedulableAndUnresolvable."""
        objects = self._handle.objects
        ns = pod.metadata.namespace
        out: list[PVTopology] = []
        for claim in _claim_names(pod):
            if not claim:
                return (), _unresolvable("PersistentVolumeClaim had no name")
            pvc = objects.get_object(KIND_PVC, f"{ns}/{claim}")
            if not isinstance(pvc, PersistentVolumeClaim):
                return (), _unresolvable(pvc_not_found(claim))
            pv_name = pvc.spec.volume_name
            if not pv_name:
                sc_name = pvc_class(pvc)
                if not sc_name:
                    return (), _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = get_storage_class(objects, sc_name)
                if sc is None:
                    return (), _unresolvable(storage_class_not_found(sc_name))
                if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return (), _unresolvable("PersistentVolume had no name")
            pv = objects.get_object(KIND_PV, pv_name)
            if not isinstance(pv, PersistentVolume):
                return (), _unresolvable(pv_not_found(pv_name))
            out.extend(pv_topologies(pv))
        return tuple(out), None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        topologies, status = self.get_pv_by_pod(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, StateData(topologies))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, StateData):
            topologies = s.pod_pv_topologies
        else:
            topologies, status = self.get_pv_by_pod(pod)
            if status is not None:
                return status
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        labels = node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None  # a node without topology labels fits any zone (single-zone clusters)
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_GA_LABEL.get(t.key, t.key))
            if v is None or v not in t.values:
                return _CONFLICT
        return None

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, ActionType.Add),
                self.is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
                self.is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolume, add_update),
                self.is_schedulable_after_pv_change,
            ),
        ]

    def is_schedulable_after_pvc_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a claim the pod uses was created or updated."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError("expected a PersistentVolumeClaim")
        if new_obj.metadata.namespace == pod.metadata.namespace and (
            new_obj.metadata.name in _claim_names(pod)
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a WaitForFirstConsumer class appears."""
        if not isinstance(new_obj, StorageClass):
            raise TypeError("expected a StorageClass")
        if new_obj.volume_binding_mode != WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pv_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue on a new PV, or one whose topology labels changed."""
        if not isinstance(new_obj, PersistentVolume):
            raise TypeError("expected a PersistentVolume")
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, PersistentVolume):
            raise TypeError("expected a PersistentVolume")
        if pv_topologies(old_obj) != pv_topologies(new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def new(args: Any, handle: Any) -> VolumeZone:
    return VolumeZone(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
