"""In-tree to CSI translation, reduced to what the scheduler reads (csi-translation-lib):
plugin and driver names, volume handles, and the PV topology a migrated PV gets.

Covered in-tree sources: GCE PD, AWS EBS and Azure Disk (the ones the API models carry).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kschedlib.api.pod import Volume
from kschedlib.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.api.storage import PersistentVolume
from kschedlib.plugins.volumebinding.storage_helpers import LABEL_MULTI_ZONE_DELIMITER

GCE_PD_PLUGIN = "kubernetes.io/gce-pd"
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"
AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk"
AZURE_FILE_PLUGIN = "kubernetes.io/azure-file"
CINDER_PLUGIN = "kubernetes.io/cinder"
VSPHERE_PLUGIN = "kubernetes.io/vsphere-volume"
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"

CSI_DRIVERS: Mapping[str, str] = {
    GCE_PD_PLUGIN: "pd.csi.storage.gke.io",
    AWS_EBS_PLUGIN: "ebs.csi.aws.com",
    AZURE_DISK_PLUGIN: "disk.csi.azure.com",
    AZURE_FILE_PLUGIN: "file.csi.azure.com",
    CINDER_PLUGIN: "cinder.csi.openstack.org",
    VSPHERE_PLUGIN: "csi.vsphere.vmware.com",
    PORTWORX_PLUGIN: "pxd.portworx.com",
}
"""In-tree plugin name -> the CSI driver it migrates to."""

TOPOLOGY_KEYS: Mapping[str, str] = {
    GCE_PD_PLUGIN: "topology.gke.io/zone",
    AWS_EBS_PLUGIN: "topology.ebs.csi.aws.com/zone",
    AZURE_DISK_PLUGIN: "topology.disk.csi.azure.com/zone",
    CINDER_PLUGIN: "topology.cinder.csi.openstack.org/zone",
}

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
UNSPECIFIED = "UNSPECIFIED"


def is_migratable_plugin_name(name: str) -> bool:
    """IsMigratableIntreePluginByName."""
    return name in CSI_DRIVERS


def pv_plugin_name(pv: PersistentVolume) -> str | None:
    """GetInTreePluginNameFromSpec for a PV; None when it is not a migratable in-tree PV."""
    s = pv.spec
    if s.gce_persistent_disk is not None:
        return GCE_PD_PLUGIN
    if s.aws_elastic_block_store is not None:
        return AWS_EBS_PLUGIN
    if s.azure_disk is not None:
        return AZURE_DISK_PLUGIN
    return None


def inline_plugin_name(vol: Volume) -> str | None:
    """GetInTreePluginNameFromSpec for an inline volume (IsInlineMigratable when not None)."""
    if vol.gce_persistent_disk is not None:
        return GCE_PD_PLUGIN
    if vol.aws_elastic_block_store is not None:
        return AWS_EBS_PLUGIN
    if vol.azure_disk is not None:
        return AZURE_DISK_PLUGIN
    return None


def migrated_plugins(csi_node: Any) -> frozenset[str]:
    """The plugins a CSINode's annotation says were migrated to CSI on that node."""
    if csi_node is None:
        return frozenset()
    ann = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return frozenset(ann.split(",")) if ann else frozenset()


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: ``aws://<zone>/<id>`` -> ``<id>``."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    return kubernetes_id[len("aws://") :].partition("/")[2].strip("/")


def _gce_handle(pd_name: str, zones_label: str) -> str:
    zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        region = zones[0].rpartition("-")[0]
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def pv_csi_handle(pv: PersistentVolume, plugin: str) -> str:
    """The volume handle TranslateInTreePVToCSI gives a PV of this plugin."""
    s = pv.spec
    if plugin == GCE_PD_PLUGIN and s.gce_persistent_disk is not None:
        labels = pv.metadata.labels
        zones = labels.get(LABEL_BETA_ZONE) or labels.get(LABEL_TOPOLOGY_ZONE, "")
        return _gce_handle(str(s.gce_persistent_disk.get("pdName", "")), zones)
    if plugin == AWS_EBS_PLUGIN and s.aws_elastic_block_store is not None:
        return _ebs_volume_id(str(s.aws_elastic_block_store.get("volumeID", "")))
    if plugin == AZURE_DISK_PLUGIN and s.azure_disk is not None:
        return str(s.azure_disk.get("diskURI", ""))
    return ""


def inline_csi_handle(vol: Volume, plugin: str) -> str:
    """The volume handle TranslateInTreeInlineVolumeToCSI gives an inline volume."""
    if plugin == GCE_PD_PLUGIN and vol.gce_persistent_disk is not None:
        return _gce_handle(str(vol.gce_persistent_disk.get("pdName", "")), "")
    if plugin == AWS_EBS_PLUGIN and vol.aws_elastic_block_store is not None:
        return _ebs_volume_id(str(vol.aws_elastic_block_store.get("volumeID", "")))
    if plugin == AZURE_DISK_PLUGIN and vol.azure_disk is not None:
        return str(vol.azure_disk.get("diskURI", ""))
    return ""


# --- topology of a translated PV (translateTopologyFromInTreeToCSI) ---


def _terms(pv: PersistentVolume) -> tuple[NodeSelectorTerm, ...]:
    na = pv.spec.node_affinity
    if na is None or na.required is None:
        return ()
    return na.required.node_selector_terms


def _has_key(terms: tuple[NodeSelectorTerm, ...], key: str) -> bool:
    return any(r.key == key for t in terms for r in t.match_expressions)


def _replace_key(
    terms: tuple[NodeSelectorTerm, ...], old: str, new: str
) -> tuple[NodeSelectorTerm, ...]:
    return tuple(
        attrs.evolve(
            t,
            match_expressions=tuple(
                attrs.evolve(r, key=new) if r.key == old else r for r in t.match_expressions
            ),
        )
        for t in terms
    )


def translated_node_affinity(pv: PersistentVolume, plugin: str) -> NodeSelector | None:
    """The required node affinity of the CSI PV a migratable in-tree PV translates to: zone
    keys become the driver's topology key, or the PV's zone label is added as one; a beta
    region key becomes the GA key. None when the result has no affinity."""
    terms = _terms(pv)
    zone_label = LABEL_TOPOLOGY_ZONE if _has_key(terms, LABEL_TOPOLOGY_ZONE) else LABEL_BETA_ZONE
    region_ga = _has_key(terms, LABEL_TOPOLOGY_REGION)
    csi_key = TOPOLOGY_KEYS.get(plugin)
    if csi_key is not None:
        if _has_key(terms, zone_label):
            terms = _replace_key(terms, zone_label, csi_key)
        elif zone_label in pv.metadata.labels:
            zones = sorted(
                {
                    z.strip()
                    for z in pv.metadata.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER)
                }
                - {""}
            )
            if zones:
                req = NodeSelectorRequirement(key=csi_key, operator="In", values=tuple(zones))
                base = terms or (NodeSelectorTerm(),)
                terms = tuple(
                    attrs.evolve(t, match_expressions=(*t.match_expressions, req)) for t in base
                )
    if not region_ga and _has_key(terms, LABEL_BETA_REGION):
        terms = _replace_key(terms, LABEL_BETA_REGION, LABEL_TOPOLOGY_REGION)
    na = pv.spec.node_affinity
    if not terms and (na is None or na.required is None):
        return None
    return NodeSelector(node_selector_terms=terms)
