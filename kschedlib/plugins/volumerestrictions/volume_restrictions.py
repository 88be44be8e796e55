"""VolumeRestrictions: inline GCE PD / AWS EBS / RBD / iSCSI disks conflict with the same disk
mounted on the node, and a ReadWriteOncePod claim can serve a single pod in the cluster."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod, Volume
from kschedlib.api.storage import PersistentVolumeClaim
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
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins.volumebinding.storage_helpers import (
    KIND_PVC,
    READ_WRITE_ONCE_POD,
    pvc_not_found,
)

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)

_DISK_CONFLICT = Status(Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,), NAME)
_RWOP_CONFLICT = Status(Code.Unschedulable, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,), NAME)


@attrs.define(slots=True)
class PreFilterState:
    """The names of the pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    read_write_once_pod_pvcs: frozenset[str] = frozenset()
    conflicting_pvc_ref_count: int = 0

    def conflicts_of(self, pod: Pod) -> int:
        """How many of ``pod``'s PVC volumes name one of our claims (by name only)."""
        names = self.read_write_once_pod_pvcs
        return sum(
            1
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
            and v.persistent_volume_claim.claim_name in names
        )

    def clone(self) -> PreFilterState:
        return PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


def needs_restrictions_check(v: Volume) -> bool:
    return (
        v.gce_persistent_disk is not None
        or v.aws_elastic_block_store is not None
        or v.rbd is not None
        or v.iscsi is not None
    )


def _rbd_identity(src: Mapping[str, Any]) -> tuple[frozenset[str], str, str]:
    """(monitors, pool, image), with the pool defaulted as the API server does."""
    return frozenset(src.get("monitors") or ()), src.get("pool") or "rbd", src.get("image", "")


def _both_read_only(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.get("readOnly") is True and b.get("readOnly") is True


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Whether ``volume`` conflicts with one of ``pod``'s volumes: the same GCE PD unless both
    are read-only, the same EBS volume, the same iSCSI IQN or RBD image unless both read-only."""
    gce, ebs = volume.gce_persistent_disk, volume.aws_elastic_block_store
    iscsi, rbd = volume.iscsi, volume.rbd
    for ev in pod.spec.volumes:
        egce, eebs, eiscsi, erbd = (
            ev.gce_persistent_disk,
            ev.aws_elastic_block_store,
            ev.iscsi,
            ev.rbd,
        )
        if (
            gce is not None
            and egce is not None
            and gce.get("pdName") == egce.get("pdName")
            and not _both_read_only(gce, egce)
        ):
            return True
        if ebs is not None and eebs is not None and ebs.get("volumeID") == eebs.get("volumeID"):
            return True
        if (
            iscsi is not None
            and eiscsi is not None
            and iscsi.get("iqn") == eiscsi.get("iqn")
            and not _both_read_only(iscsi, eiscsi)
        ):
            return True
        if rbd is not None and erbd is not None:
            mon, pool, image = _rbd_identity(rbd)
            emon, epool, eimage = _rbd_identity(erbd)
            if mon & emon and (pool, image) == (epool, eimage) and not _both_read_only(rbd, erbd):
                return True
    return False


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    for v in pod.spec.volumes:
        if not needs_restrictions_check(v):
            continue
        for pi in node_info.pods:
            if is_volume_conflict(v, pi.pod):
                return False
    return True


class VolumeRestrictions:
    """PreFilter counts ReadWriteOncePod conflicts; Filter checks disk conflicts on the node."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return () if volumes_signable(pod) else None

    def _read_write_once_pod_pvcs(self, pod: Pod) -> frozenset[str] | str:
        """The names of the pod's ReadWriteOncePod claims, or the missing claim's error."""
        ns = pod.metadata.namespace
        objects = self._handle.objects
        names: set[str] = set()
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            claim = v.persistent_volume_claim.claim_name
            pvc = objects.get_object(KIND_PVC, f"{ns}/{claim}")
            if not isinstance(pvc, PersistentVolumeClaim):
                return pvc_not_found(claim)
            if READ_WRITE_ONCE_POD in pvc.spec.access_modes:
                names.add(pvc.metadata.name)
        return frozenset(names)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        pvcs = self._read_write_once_pod_pvcs(pod)
        if isinstance(pvcs, str):
            return None, Status(Code.UnschedulableAndUnresolvable, (pvcs,), NAME)
        storage = self._handle.snapshot_shared_lister().storage_infos()
        ns = pod.metadata.namespace
        count = sum(1 for name in pvcs if storage.is_pvc_used_by_pods(f"{ns}/{name}"))
        if not needs_check and count == 0:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pvcs, count))
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', NAME)
        s.conflicting_pvc_ref_count += s.conflicts_of(pod_info_to_add.pod)
        return None

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', NAME)
        s.conflicting_pvc_ref_count -= s.conflicts_of(pod_info_to_remove.pod)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod, node_info):
            return _DISK_CONFLICT
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', NAME)
        return _RWOP_CONFLICT if s.conflicting_pvc_ref_count > 0 else None

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                self.is_schedulable_after_pvc_added,
            ),
        ]

    def is_schedulable_after_pvc_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a claim the pod names was created in its namespace."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError("expected a PersistentVolumeClaim")
        if new_obj.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        for v in pod.spec.volumes:
            pvc = v.persistent_volume_claim
            if pvc is not None and pvc.claim_name == new_obj.metadata.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when the deleted pod held a conflicting disk or shared a claim with the pod."""
        deleted = old_obj if isinstance(old_obj, Pod) else new_obj
        if not isinstance(deleted, Pod):
            raise TypeError("expected a Pod")
        if deleted.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        if not satisfy_volume_conflicts(pod, NodeInfo(Node(), deleted)):
            return QueueingHint.Queue
        claims = {
            v.persistent_volume_claim.claim_name
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
        }
        for v in deleted.spec.volumes:
            if (
                v.persistent_volume_claim is not None
                and v.persistent_volume_claim.claim_name in claims
            ):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def new(args: Any, handle: Any) -> VolumeRestrictions:
    return VolumeRestrictions(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
