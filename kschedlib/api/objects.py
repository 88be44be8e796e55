"""The kind registry: which Kubernetes kinds kschedlib decodes, and how.

``KINDS`` maps a ``kind`` to the decoder of its typed model. Other parts of kschedlib (and
users) add kinds with :func:`register_kind`; everything that reads input (``load_objects``,
``load_cluster``, ``kschedlib simulate``) consults this one table, so a new kind is picked up
everywhere. Kinds not in the table are reported as ignored, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kschedlib.api.scheduling import Workload
from kschedlib.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kschedlib.api.workloads import (
    DaemonSet,
    Deployment,
    Job,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)

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
    "Deployment": Deployment.from_dict,
    "DaemonSet": DaemonSet.from_dict,
    "Job": Job.from_dict,
    "PriorityClass": PriorityClass.from_dict,
    "Workload": Workload.from_dict,
    "DeviceClass": DeviceClass.from_dict,
    "ResourceSlice": ResourceSlice.from_dict,
    "ResourceClaim": ResourceClaim.from_dict,
    "ResourceClaimTemplate": ResourceClaimTemplate.from_dict,
    "DeviceTaintRule": DeviceTaintRule.from_dict,
}


def register_kind(kind: str, decoder: Callable[[Any], Any]) -> None:
    """Make ``kind`` known to every loader: ``decoder(camelCase dict)`` returns the typed
    object (usually ``Model.from_dict``)."""
    KINDS[kind] = decoder


def decode_any(doc: dict[str, Any]) -> Any:
    """Decode one object by its ``kind``; unknown kinds are returned as plain dicts."""
    kind = doc.get("kind")
    decoder = KINDS.get(kind) if isinstance(kind, str) else None
    return decoder(doc) if decoder is not None else doc


def as_object(obj: Any, expected: type[Any] | None = None) -> Any:
    """A typed object from a typed object, a Kubernetes JSON dict or an object of a Python
    client (the official ``kubernetes`` client, lightkube, kr8s): what every method taking an
    object accepts. With ``expected`` (e.g. ``Pod``) anything else raises InvalidObjectError;
    without it so does a dict or client object of a kind not in :data:`KINDS`."""
    from collections.abc import Mapping

    from kschedlib.api.clients import as_api_dict, is_client_object
    from kschedlib.errors import InvalidObjectError

    if expected is not None and isinstance(obj, expected):
        return obj
    if isinstance(obj, Mapping) or is_client_object(obj):
        if expected is not None:
            return expected.from_dict(obj if is_client_object(obj) else dict(obj))
        data = as_api_dict(dict(obj) if isinstance(obj, Mapping) else obj)
        kind = data.get("kind") if isinstance(data, dict) else None
        decoder = KINDS.get(kind) if isinstance(kind, str) else None
        if decoder is None:
            raise InvalidObjectError(
                str(kind or type(obj).__name__), "kind",
                "not a kind kschedlib decodes (register_kind() adds one)",
            )
        return decoder(data)
    if expected is not None:
        name = expected.__name__
        raise InvalidObjectError(
            type(obj).__name__, "",
            f"expected a {name} or a {name}'s Kubernetes JSON as a dict (or a client object)",
        )
    return obj
