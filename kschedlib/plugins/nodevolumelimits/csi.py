"""NodeVolumeLimits (CSILimits): the CSI volumes a pod would attach, plus those the node's pods
already use, must stay within each driver's attach limit (CSINode allocatable count, or the
node's ``attachable-volumes-csi-<driver>`` allocatable).

In-tree volumes (GCE PD, AWS EBS, Azure Disk) count under their CSI driver on nodes with a
CSINode, as CSI migration does; VolumeAttachment objects are not modelled.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
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
from kschedlib.plugins.volumebinding import csi_translation as trans
from kschedlib.plugins.volumebinding.storage_helpers import (
    KIND_CSI_NODE,
    KIND_PV,
    KIND_PVC,
    claim_name_of,
    get_storage_class,
    pvc_class,
    pvc_not_found,
    volume_is_for_pod,
)

NAME = "NodeVolumeLimits"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
RESOURCE_NAME_LENGTH_LIMIT = 63

_ALWAYS_MIGRATED = frozenset(
    (trans.AWS_EBS_PLUGIN, trans.GCE_PD_PLUGIN, trans.AZURE_DISK_PLUGIN, trans.CINDER_PLUGIN)
)
_EXCEEDED = Status(Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), NAME)

Volumes = dict[str, str]
"""volume unique name (``<driver>/<handle>``) -> attach limit key."""


class _VolumeError(Exception):
    def __init__(self, msg: str, not_found: bool = False) -> None:
        super().__init__(msg)
        self.not_found = not_found


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the node allocatable name of a driver's attach limit."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def migration_on(csi_node: CSINode | None) -> frozenset[str]:
    """The in-tree plugins whose volumes count as CSI on this node (isCSIMigrationOn)."""
    if csi_node is None:
        return frozenset()
    if trans.PORTWORX_PLUGIN in trans.migrated_plugins(csi_node):
        return _ALWAYS_MIGRATED | {trans.PORTWORX_PLUGIN}
    return _ALWAYS_MIGRATED


def volume_limits(node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: attachable-volume allocatables, overridden by CSINode counts."""
    limits = {
        k: v
        for k, v in node_info.allocatable.scalar_resources.items()
        if k.startswith(ATTACHABLE_VOLUMES_PREFIX)
    }
    if csi_node is not None:
        for d in csi_node.spec.drivers:
            if d.allocatable is not None and d.allocatable.count is not None:
                limits[csi_attach_limit_key(d.name)] = d.allocatable.count
    return limits


@attrs.define(slots=True)
class PreFilterState:
    """The pod's own attachable volumes, per set of migrated plugins (nodes differ only so)."""

    new_volumes: dict[frozenset[str], Volumes | _VolumeError] = attrs.field(factory=dict)

    def clone(self) -> PreFilterState:
        return self


class CSILimits:
    """Counts the CSI volumes a node would attach and compares with the drivers' limits."""

    __slots__ = ("_handle", "random_volume_id_prefix", "_existing", "_existing_gen")

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.random_volume_id_prefix = secrets.token_hex(16)
        # Existing pods' volumes, valid while the object store is unchanged.
        self._existing: dict[tuple[str, frozenset[str]], tuple[Pod, Volumes]] = {}
        self._existing_gen: Any = None

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return () if volumes_signable(pod) else None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        for v in pod.spec.volumes:
            if (
                v.persistent_volume_claim is not None
                or v.ephemeral is not None
                or trans.inline_plugin_name(v) is not None
            ):
                state.write(PRE_FILTER_STATE_KEY, PreFilterState())
                return None, None
        return None, SKIP

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        objects = self._handle.objects
        csi_node = objects.get_object(KIND_CSI_NODE, node.metadata.name)
        if not isinstance(csi_node, CSINode):
            csi_node = None
        migrated = migration_on(csi_node)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            s = PreFilterState()
        new = s.new_volumes.get(migrated)
        if new is None:
            try:
                new = self.attachable_volumes(pod, migrated, new_pod=True)
            except _VolumeError as exc:
                new = exc
            s.new_volumes[migrated] = new
        if isinstance(new, _VolumeError):
            if new.not_found:
                return Status(Code.UnschedulableAndUnresolvable, (str(new),), NAME)
            return Status.error(str(new), NAME)
        if not new:
            return None
        limits = volume_limits(node_info, csi_node)
        if not limits:
            return None
        attached: Volumes = {}
        for pi in node_info.pods:
            if not pi.pod.spec.volumes:
                continue
            try:
                attached.update(self._existing_volumes(pi.pod, migrated))
            except _VolumeError as exc:
                return Status.error(str(exc), NAME)
        attached_count: dict[str, int] = {}
        for key in attached.values():
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for unique, key in new.items():
            if unique not in attached:  # a volume shared with a pod on the node counts once
                new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return _EXCEEDED
        return None

    def _existing_volumes(self, pod: Pod, migrated: frozenset[str]) -> Volumes:
        gen = getattr(self._handle.objects, "generation", None)
        if gen is None:
            return self.attachable_volumes(pod, migrated, new_pod=False)
        if gen != self._existing_gen:
            self._existing.clear()
            self._existing_gen = gen
        key = (pod.uid, migrated)
        hit = self._existing.get(key)
        if hit is not None and hit[0] is pod:
            return hit[1]
        vols = self.attachable_volumes(pod, migrated, new_pod=False)
        self._existing[key] = (pod, vols)
        return vols

    # --- volume resolution (filterAttachableVolumes) ---

    def attachable_volumes(self, pod: Pod, migrated: frozenset[str], new_pod: bool) -> Volumes:
        """The pod's volumes that attach through a CSI driver on a node where ``migrated``
        plugins count as CSI. Raises _VolumeError where kube-scheduler fails the pod."""
        objects = self._handle.objects
        ns = pod.metadata.namespace
        result: Volumes = {}
        for vol in pod.spec.volumes:
            ref = claim_name_of(pod, vol)
            if ref is None:
                plugin = trans.inline_plugin_name(vol)
                if plugin is None or plugin not in migrated:
                    continue
                handle = trans.inline_csi_handle(vol, plugin)
                driver = trans.CSI_DRIVERS[plugin]
                result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
                continue
            name, ephemeral = ref
            if not name:
                raise _VolumeError("PersistentVolumeClaim had no name")
            pvc = objects.get_object(KIND_PVC, f"{ns}/{name}")
            if not isinstance(pvc, PersistentVolumeClaim):
                if new_pod:
                    raise _VolumeError(
                        f"looking up PVC {ns}/{name}: {pvc_not_found(name)}", not_found=True
                    )
                continue
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise _VolumeError(err)
            driver, handle = self._csi_driver_info(pvc, migrated)
            if driver and handle:
                result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
        return result

    def _csi_driver_info(
        self, pvc: PersistentVolumeClaim, migrated: frozenset[str]
    ) -> tuple[str, str]:
        """getCSIDriverInfo: the PV's CSI driver and handle (translated for migrated in-tree
        PVs), or the class's driver with a per-claim handle when the PV is unknown."""
        pv_name = pvc.spec.volume_name
        pv = self._handle.objects.get_object(KIND_PV, pv_name) if pv_name else None
        if not isinstance(pv, PersistentVolume):
            return self._csi_driver_info_from_sc(pvc, migrated)
        csi = pv.spec.csi
        if csi is not None:
            return str(csi.get("driver", "")), str(csi.get("volumeHandle", ""))
        plugin = trans.pv_plugin_name(pv)
        if plugin is None or plugin not in migrated:
            return "", ""
        return trans.CSI_DRIVERS[plugin], trans.pv_csi_handle(pv, plugin)

    def _csi_driver_info_from_sc(
        self, pvc: PersistentVolumeClaim, migrated: frozenset[str]
    ) -> tuple[str, str]:
        sc_name = pvc_class(pvc)
        if not sc_name:
            return "", ""
        sc = get_storage_class(self._handle.objects, sc_name)
        if sc is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.metadata.namespace}/{pvc.metadata.name}"
        provisioner = sc.provisioner
        if trans.is_migratable_plugin_name(provisioner):
            if provisioner not in migrated:
                return "", ""
            return trans.CSI_DRIVERS[provisioner], handle
        return provisioner, handle

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, ActionType.Update),
                self.is_schedulable_after_csi_node_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.AssignedPod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                self.is_schedulable_after_pvc_added,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete)),
        ]

    def is_schedulable_after_csi_node_updated(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a driver appears or its attach limit grows."""
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            raise TypeError("expected CSINode objects")

        def count(d: Any) -> int:
            return d.allocatable.count if d.allocatable and d.allocatable.count is not None else 0

        old = {d.name: count(d) for d in old_obj.spec.drivers}
        for d in new_obj.spec.drivers:
            if d.name not in old or count(d) > old[d.name]:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when an assigned pod that may have attached volumes goes away."""
        deleted = old_obj if isinstance(old_obj, Pod) else new_obj
        if not isinstance(deleted, Pod):
            raise TypeError("expected a Pod")
        if not deleted.spec.volumes or not deleted.spec.node_name:
            return QueueingHint.QueueSkip
        for v in deleted.spec.volumes:
            if (
                v.persistent_volume_claim is not None
                or v.ephemeral is not None
                or trans.inline_plugin_name(v) is not None
            ):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pvc_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a claim the pod uses was created."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError("expected a PersistentVolumeClaim")
        if new_obj.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        for v in pod.spec.volumes:
            ref = claim_name_of(pod, v)
            if ref is not None and ref[0] == new_obj.metadata.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def new(args: Any, handle: Any) -> CSILimits:
    return CSILimits(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
