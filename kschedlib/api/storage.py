"""Storage objects read by the volume plugins: PV, PVC, StorageClass, CSINode."""

from __future__ import annotations

from typing import Any

import attrs

from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.pod import ResourceRequirements
from kschedlib.api.quantity import Quantity
from kschedlib.api.selectors import LabelSelector, NodeSelector


@attrs.define(slots=True, frozen=True, kw_only=True)
class ObjectReference:
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class VolumeNodeAffinity:
    required: NodeSelector | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeSpec:
    capacity: dict[str, Quantity] = attrs.field(factory=dict)
    access_modes: tuple[str, ...] = ()
    claim_ref: ObjectReference | None = None
    storage_class_name: str = ""
    node_affinity: VolumeNodeAffinity | None = None
    volume_mode: str | None = None
    csi: dict[str, Any] | None = None
    gce_persistent_disk: dict[str, Any] | None = attrs.field(
        default=None, metadata={"json": "gcePersistentDisk"}
    )
    aws_elastic_block_store: dict[str, Any] | None = attrs.field(
        default=None, metadata={"json": "awsElasticBlockStore"}
    )
    azure_disk: dict[str, Any] | None = None
    host_path: dict[str, Any] | None = None
    local: dict[str, Any] | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeStatus:
    phase: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolume(KubeObject):
    label = "persistentvolume"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "PersistentVolume"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: PersistentVolumeSpec = attrs.field(factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = attrs.field(factory=PersistentVolumeStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeClaimSpec:
    access_modes: tuple[str, ...] = ()
    selector: LabelSelector | None = None
    resources: ResourceRequirements = attrs.field(factory=ResourceRequirements)
    volume_name: str = ""
    storage_class_name: str | None = None
    volume_mode: str | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeClaimStatus:
    phase: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeClaim(KubeObject):
    label = "persistentvolumeclaim"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = attrs.field(factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = attrs.field(factory=PersistentVolumeClaimStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class TopologySelectorLabelRequirement:
    key: str = ""
    values: tuple[str, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class TopologySelectorTerm:
    match_label_expressions: tuple[TopologySelectorLabelRequirement, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class StorageClass(KubeObject):
    label = "storageclass"

    api_version: str = attrs.field(default="storage.k8s.io/v1", metadata={"json": "apiVersion"})
    kind: str = "StorageClass"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    parameters: dict[str, str] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class VolumeNodeResources:
    count: int | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class CSINodeDriver:
    name: str = ""
    node_id: str = attrs.field(default="", metadata={"json": "nodeID"})
    topology_keys: tuple[str, ...] = ()
    allocatable: VolumeNodeResources | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class CSINodeSpec:
    drivers: tuple[CSINodeDriver, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class CSINode(KubeObject):
    label = "csinode"

    api_version: str = attrs.field(default="storage.k8s.io/v1", metadata={"json": "apiVersion"})
    kind: str = "CSINode"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: CSINodeSpec = attrs.field(factory=CSINodeSpec)
