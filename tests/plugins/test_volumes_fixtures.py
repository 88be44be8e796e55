"""Builders for the storage plugin tests: nodes, pods, PVs, PVCs, classes and CSINodes from
kubectl-style dicts, and a handle over them."""

from __future__ import annotations

from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.handle import BasicHandle, ObjectStore

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def node(
    name: str, labels: dict[str, str] | None = None, allocatable: dict[str, str] | None = None
) -> Node:
    lbl = {HOSTNAME: name, **(labels or {})}
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110", **(allocatable or {})}
    return Node.from_dict(
        {"metadata": {"name": name, "labels": lbl}, "status": {"allocatable": alloc}}
    )


def pod(
    name: str = "p",
    *claims: str,
    ns: str = "default",
    node_name: str = "",
    volumes: list[dict[str, Any]] | None = None,
    uid: str = "",
    resource_claims: list[dict[str, Any]] | None = None,
) -> Pod:
    vols = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    vols.extend(volumes or ())
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "volumes": vols}
    if node_name:
        spec["nodeName"] = node_name
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if uid:
        meta["uid"] = uid
    return Pod.from_dict({"metadata": meta, "spec": spec})


def hostname_affinity(*nodes: str) -> dict[str, Any]:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": list(nodes)}]}
            ]
        }
    }


def pv(
    name: str,
    capacity: str = "10Gi",
    sc: str = "",
    *,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    on_node: str | None = None,
    affinity: dict[str, Any] | None = None,
    claim: str | None = None,
    claim_uid: str = "",
    phase: str = "Available",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    volume_mode: str | None = None,
    csi: tuple[str, str] | None = None,
    source: dict[str, Any] | None = None,
    deleting: bool = False,
) -> PersistentVolume:
    spec: dict[str, Any] = {
        "capacity": {"storage": capacity},
        "accessModes": list(modes),
        "storageClassName": sc,
    }
    if on_node is not None:
        spec["nodeAffinity"] = hostname_affinity(on_node)
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    if claim is not None:
        ns, _, cname = claim.rpartition("/")
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": cname}
        if claim_uid:
            spec["claimRef"]["uid"] = claim_uid
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    spec.update(source or {})
    meta: dict[str, Any] = {"name": name, "labels": labels or {}, "annotations": annotations or {}}
    if deleting:
        meta["deletionTimestamp"] = "2025-09-01T08:00:00Z"
    return PersistentVolume.from_dict({"metadata": meta, "spec": spec, "status": {"phase": phase}})


def pvc(
    name: str,
    sc: str | None = None,
    request: str = "1Gi",
    *,
    ns: str = "default",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    volume_name: str = "",
    bound: bool = False,
    phase: str = "",
    annotations: dict[str, str] | None = None,
    selector: dict[str, Any] | None = None,
    uid: str = "",
    volume_mode: str | None = None,
    owner_uid: str = "",
    deleting: bool = False,
) -> PersistentVolumeClaim:
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
        phase = phase or "Bound"
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": request}},
    }
    if sc is not None:
        spec["storageClassName"] = sc
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    meta: dict[str, Any] = {"name": name, "namespace": ns, "annotations": ann}
    if uid:
        meta["uid"] = uid
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    if deleting:
        meta["deletionTimestamp"] = "2025-09-01T08:00:00Z"
    return PersistentVolumeClaim.from_dict(
        {"metadata": meta, "spec": spec, "status": {"phase": phase or "Pending"}}
    )


def storage_class(
    name: str,
    provisioner: str = "ebs.csi.aws.com",
    mode: str = "WaitForFirstConsumer",
    allowed_zones: tuple[str, ...] | None = None,
) -> StorageClass:
    d: dict[str, Any] = {
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if allowed_zones is not None:
        d["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE, "values": list(allowed_zones)}]}
        ]
    return StorageClass.from_dict(d)


def csi_node(
    name: str, drivers: dict[str, int | None], annotations: dict[str, str] | None = None
) -> CSINode:
    ds: list[dict[str, Any]] = []
    for driver, count in drivers.items():
        d: dict[str, Any] = {"name": driver, "nodeID": f"{name}-{driver}"}
        if count is not None:
            d["allocatable"] = {"count": count}
        ds.append(d)
    return CSINode.from_dict(
        {"metadata": {"name": name, "annotations": annotations or {}}, "spec": {"drivers": ds}}
    )


def make_handle(
    nodes: list[Node], pods: list[Pod] | None = None, objects: list[Any] | None = None
) -> BasicHandle:
    store = ObjectStore()
    for o in objects or ():
        store.upsert(o)
    return BasicHandle(Snapshot.from_objects(pods or [], nodes), store)
