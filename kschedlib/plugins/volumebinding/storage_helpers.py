"""PV/PVC helpers shared by the volume plugins (component-helpers/storage/volume and
storage/ephemeral): classes, binding checks, node affinity, topology terms, lister errors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kschedlib.api.pod import Pod, Volume
from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.api.storage import (
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    StorageClass,
    TopologySelectorTerm,
)

KIND_PV = "PersistentVolume"
KIND_PVC = "PersistentVolumeClaim"
KIND_STORAGE_CLASS = "StorageClass"
KIND_CSI_NODE = "CSINode"

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
CLAIM_LOST = "Lost"
VOLUME_AVAILABLE = "Available"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
FILESYSTEM = "Filesystem"
RESOURCE_STORAGE = "storage"
LABEL_MULTI_ZONE_DELIMITER = "__"

ZERO = parse_quantity("0")


# --- lister errors, worded as client-go's NotFound errors ---


def pvc_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


# --- claims of a pod ---


def ephemeral_claim_name(pod: Pod, vol: Volume) -> str:
    """ephemeral.VolumeClaimName: the PVC a generic ephemeral volume gets."""
    return f"{pod.metadata.name}-{vol.name}"


def claim_name_of(pod: Pod, vol: Volume) -> tuple[str, bool] | None:
    """The PVC name a volume uses and whether it is a generic ephemeral volume; None when the
    volume uses no PVC."""
    if vol.persistent_volume_claim is not None:
        return vol.persistent_volume_claim.claim_name, False
    if vol.ephemeral is not None:
        return ephemeral_claim_name(pod, vol), True
    return None


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: an error message unless the pod controls the PVC."""
    uid = pod.metadata.uid
    for ref in pvc.metadata.owner_references:
        if ref.controller and ref.uid == uid:
            return None
    return (
        f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
        f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
    )


# --- classes, sizes, modes ---


def pvc_class(pvc: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = pvc.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if ann is not None:
        return ann
    return pvc.spec.storage_class_name or ""


def pv_class(pv: PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
    ann = pv.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    return ann if ann is not None else pv.spec.storage_class_name


def storage_request(pvc: PersistentVolumeClaim) -> Quantity:
    return pvc.spec.resources.requests.get(RESOURCE_STORAGE, ZERO)


def storage_capacity(pv: PersistentVolume) -> Quantity:
    return pv.spec.capacity.get(RESOURCE_STORAGE, ZERO)


def volume_mode_mismatch(
    pvc_spec: PersistentVolumeClaimSpec, pv_spec: PersistentVolumeSpec
) -> bool:
    """CheckVolumeModeMismatches: an unset mode means Filesystem."""
    return (pvc_spec.volume_mode or FILESYSTEM) != (pv_spec.volume_mode or FILESYSTEM)


def check_access_modes(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """CheckAccessModes: the PV offers every mode the claim asks for."""
    offered = pv.spec.access_modes
    return all(m in offered for m in pvc.spec.access_modes)


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (and its UID, when the ref has one)."""
    ref = pv.spec.claim_ref
    if ref is None:
        return False
    if ref.name != pvc.metadata.name or ref.namespace != pvc.metadata.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """The binder's isPVCFullyBound: a volume name and the bind-completed annotation."""
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


# --- node affinity and topology ---


def pv_node_affinity_matcher(pv: PersistentVolume) -> NodeSelectorMatcher | None:
    """The PV's required node affinity, compiled; None when the PV has none."""
    na = pv.spec.node_affinity
    if na is None or na.required is None:
        return None
    return NodeSelectorMatcher(na.required)


def check_node_affinity(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: a node with these labels (and no name) satisfies the PV's affinity."""
    m = pv_node_affinity_matcher(pv)
    return m is None or m.matches(labels, "")


def match_topology_selector_terms(
    terms: Iterable[TopologySelectorTerm], labels: Mapping[str, str]
) -> bool:
    """MatchTopologySelectorTerms: no terms match all; a term needs every key's value listed;
    an empty term (or one with an empty value list) matches nothing."""
    terms = tuple(terms)
    if not terms:
        return True
    for term in terms:
        exprs = term.match_label_expressions
        if not exprs or any(not e.values for e in exprs):
            continue
        if all(labels.get(e.key) in e.values for e in exprs):
            return True
    return False


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: the zones of a ``__``-separated label; None when one is empty."""
    zones = [z.strip() for z in value.split(LABEL_MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


# --- storage classes ---


def get_storage_class(objects: Any, name: str) -> StorageClass | None:
    sc = objects.get_object(KIND_STORAGE_CLASS, name)
    return sc if isinstance(sc, StorageClass) else None


def is_delay_binding_mode(objects: Any, pvc: PersistentVolumeClaim) -> bool:
    """IsDelayBindingMode: the claim's class exists and waits for the first consumer."""
    name = pvc_class(pvc)
    if not name:
        return False
    sc = get_storage_class(objects, name)
    return sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER
