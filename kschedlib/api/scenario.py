"""Scenario files (conformance corpus format v1): a cluster, a configuration, pods to schedule."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

import attrs

from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod, is_terminal
from kschedlib.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
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

_LISTS: dict[str, Any] = {
    "namespaces": Namespace.from_dict,
    "nodes": Node.from_dict,
    "pods": Pod.from_dict,
    "pending": Pod.from_dict,
    "pdbs": PodDisruptionBudget.from_dict,
    "persistentVolumes": PersistentVolume.from_dict,
    "persistentVolumeClaims": PersistentVolumeClaim.from_dict,
    "storageClasses": StorageClass.from_dict,
    "csiNodes": CSINode.from_dict,
    "services": Service.from_dict,
    "replicaSets": ReplicaSet.from_dict,
    "statefulSets": StatefulSet.from_dict,
    "replicationControllers": ReplicationController.from_dict,
    "deviceClasses": DeviceClass.from_dict,
    "resourceSlices": ResourceSlice.from_dict,
    "resourceClaims": ResourceClaim.from_dict,
    "resourceClaimTemplates": ResourceClaimTemplate.from_dict,
    "deviceTaintRules": DeviceTaintRule.from_dict,
}


class _Decoded(list):  # type: ignore[type-arg]
    """A top-level object list already decoded by ``_stream_decode``."""

    __slots__ = ()


_WS = re.compile(r"[ \t\n\r]*")


def _skip(text: str, i: int) -> int:
    """The index of the first non-whitespace character of ``text`` from ``i``."""
    m = _WS.match(text, i)
    return i if m is None else m.end()


def _stream_decode(text: str) -> dict[str, Any] | None:
    """The top-level JSON object of ``text`` with the lists of ``_LISTS`` decoded element by
    element as they are parsed (``_Decoded``); None when ``text`` is not a JSON object."""
    raw = json.JSONDecoder().raw_decode
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        return None
    data: dict[str, Any] = {}
    i = _skip(text, i + 1)
    if text[i] == "}":
        return data if not text[_skip(text, i + 1) :] else None
    while True:
        key, i = raw(text, i)
        if not isinstance(key, str):
            return None
        i = _skip(text, i)
        if text[i] != ":":
            return None
        i = _skip(text, i + 1)
        decode = _LISTS.get(key)
        if decode is not None and text[i] == "[":
            objs = _Decoded()
            i = _skip(text, i + 1)
            if text[i] == "]":
                i += 1
            else:
                while True:
                    obj, i = raw(text, i)
                    objs.append(decode(obj))
                    del obj
                    i = _skip(text, i)
                    sep = text[i]
                    i = _skip(text, i + 1)
                    if sep == "]":
                        break
                    if sep != ",":
                        return None
            data[key] = objs
        else:
            data[key], i = raw(text, i)
        i = _skip(text, i)
        sep = text[i]
        i = _skip(text, i + 1)
        if sep == "}":
            return data if i == len(text) else None
        if sep != ",":
            return None


@attrs.define(slots=True, frozen=True, kw_only=True)
class Scenario:
    name: str
    description: str = ""
    config: Mapping[str, Any] | None = None
    namespaces: tuple[Namespace, ...] = ()
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pending: tuple[Pod, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    persistent_volumes: tuple[PersistentVolume, ...] = ()
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    services: tuple[Service, ...] = ()
    replica_sets: tuple[ReplicaSet, ...] = ()
    stateful_sets: tuple[StatefulSet, ...] = ()
    replication_controllers: tuple[ReplicationController, ...] = ()
    device_classes: tuple[DeviceClass, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()
    resource_claims: tuple[ResourceClaim, ...] = ()
    resource_claim_templates: tuple[ResourceClaimTemplate, ...] = ()
    device_taint_rules: tuple[DeviceTaintRule, ...] = ()
    # --feature-gates of the recording (absent: v1.35 defaults).
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict)

    @property
    def family(self) -> str:
        head, sep, tail = self.name.rpartition("-")
        return head if sep and tail.isdigit() else self.name

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, consume: bool = False) -> Scenario:
        """Decode a scenario; with ``consume`` the object lists of ``data`` are emptied as
        they are decoded, so the raw JSON is freed while the objects are built."""
        if not isinstance(data, Mapping):
            raise InvalidObjectError("scenario", "", "expected an object")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise InvalidObjectError("scenario", "name", "expected string")
        cfg = data.get("config")
        if cfg is not None and not isinstance(cfg, Mapping):
            raise InvalidObjectError(f"scenario {name}", "config", "expected an object or null")
        kwargs: dict[str, Any] = {}
        for key, decode in _LISTS.items():
            raw = data.get(key) or []
            if not isinstance(raw, list):
                raise InvalidObjectError(f"scenario {name}", key, "expected a list")
            objs: list[Any]
            if type(raw) is _Decoded:
                objs = raw
            elif consume:
                raw.reverse()
                objs = []
                while raw:
                    objs.append(decode(raw.pop()))
            else:
                objs = [decode(o) for o in raw]
            if key == "pods":
                objs = [p for p in objs if not is_terminal(p)]
            attr = {
                "persistentVolumes": "persistent_volumes",
                "persistentVolumeClaims": "persistent_volume_claims",
                "storageClasses": "storage_classes",
                "csiNodes": "csi_nodes",
                "replicaSets": "replica_sets",
                "statefulSets": "stateful_sets",
                "replicationControllers": "replication_controllers",
                "deviceClasses": "device_classes",
                "resourceSlices": "resource_slices",
                "resourceClaims": "resource_claims",
                "resourceClaimTemplates": "resource_claim_templates",
                "deviceTaintRules": "device_taint_rules",
            }.get(key, key)
            kwargs[attr] = tuple(objs)
        gates = data.get("featureGates") or {}
        if not isinstance(gates, Mapping) or not all(
            isinstance(k, str) and isinstance(v, bool) for k, v in gates.items()
        ):
            raise InvalidObjectError(
                f"scenario {name}", "featureGates", "expected an object of gate name to boolean"
            )
        return cls(
            name=name, description=str(data.get("description", "")), config=cfg,
            feature_gates=dict(gates), **kwargs,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a scenario file. Each object of the top-level lists is decoded as soon as
        its JSON is parsed, so the raw JSON of all objects never exists at once; any error
        is raised by reading the file the plain way (``from_dict(json.loads(text))``),
        which gives what that gives."""
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        try:
            data = _stream_decode(text)
        except Exception:
            data = None
        if data is None:  # not a well-formed scenario object: the plain way raises its error
            return cls.from_dict(json.loads(text), consume=True)
        del text
        return cls.from_dict(data)

    def other_objects(self) -> list[Any]:
        """Every object besides nodes and pods, for the scheduler's object store."""
        return [
            *self.namespaces,
            *self.pdbs,
            *self.persistent_volumes,
            *self.persistent_volume_claims,
            *self.storage_classes,
            *self.csi_nodes,
            *self.services,
            *self.replica_sets,
            *self.stateful_sets,
            *self.replication_controllers,
            *self.device_classes,
            *self.resource_slices,
            *self.resource_claims,
            *self.resource_claim_templates,
            *self.device_taint_rules,
        ]
