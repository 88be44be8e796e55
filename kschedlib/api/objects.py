"""Load Kubernetes objects from JSON/YAML as kubectl prints them: single objects, Lists,
multi-document YAML."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import yaml

from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kschedlib.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kschedlib.api.workloads import (
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from kschedlib.errors import InvalidObjectError

KINDS: dict[str, Callable[[Any], Any]] = {
    "Pod": Pod.from_dict,
    "Node": Node.from_dict,
    "Namespace": Namespace.from_dict,
    "PodDisruptionBudget": PodDisruptionBudget.from_dict,
    "PersistentVolume": PersistentVolume.from_dict,
    "PersistentVolumeClaim": PersistentVolumeClaim.from_dict,
    "StorageClass": StorageClass.from_dict,
    "CSINode": CSINode.from_dict,
    "Service": Service.from_dict,
    "ReplicaSet": ReplicaSet.from_dict,
    "StatefulSet": StatefulSet.from_dict,
    "ReplicationController": ReplicationController.from_dict,
    "DeviceClass": DeviceClass.from_dict,
    "ResourceSlice": ResourceSlice.from_dict,
    "ResourceClaim": ResourceClaim.from_dict,
    "ResourceClaimTemplate": ResourceClaimTemplate.from_dict,
}


def _flatten(doc: Any) -> Iterator[dict[str, Any]]:
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise InvalidObjectError("document", "", f"expected an object, got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        item_kind = kind[: -len("List")]
        for item in doc["items"]:
            if isinstance(item, dict) and "kind" not in item and item_kind in KINDS:
                item = {**item, "kind": item_kind}
            yield from _flatten(item)
        return
    yield doc


def decode_any(doc: dict[str, Any]) -> Any:
    """Decode one object by its ``kind``; unknown kinds are returned as plain dicts."""
    kind = doc.get("kind")
    decoder = KINDS.get(kind) if isinstance(kind, str) else None
    return decoder(doc) if decoder is not None else doc


def load_objects(text: str) -> list[Any]:
    """Parse JSON or (multi-document) YAML into typed objects, expanding ``*List`` kinds."""
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise InvalidObjectError("document", "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InvalidObjectError("document", "", "nested too deeply") from None
    return [decode_any(d) for doc in docs for d in _flatten(doc)]
