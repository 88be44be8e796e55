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


_ATTRS: dict[str, str] = {
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
}

_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is not JSON white space."""
    m = _WS.match(text, i)
    return m.end() if m is not None else i


def _stream_parts(text: str) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    """Parse a scenario object's top level, decoding the elements of its object lists one
    at a time: (the other members, the decoded lists by key). None when the text is not
    a plain JSON object (the caller's whole-file path reports it); raises ValueError on
    bad JSON or an invalid object."""
    scan = json.JSONDecoder().raw_decode
    ws = _skip_ws
    data: dict[str, Any] = {}
    decoded: dict[str, list[Any]] = {}
    i = ws(text, 0)
    if text[i:i + 1] != "{":
        return None
    i = ws(text, i + 1)
    if text[i:i + 1] == "}":
        i += 1
    else:
        while True:
            if text[i:i + 1] != '"':
                return None
            key, i = scan(text, i)
            i = ws(text, i)
            if text[i:i + 1] != ":":
                return None
            i = ws(text, i + 1)
            decode = _LISTS.get(key)
            if decode is not None and text[i:i + 1] == "[":
                objs: list[Any] = []
                i = ws(text, i + 1)
                if text[i:i + 1] == "]":
                    i += 1
                else:
                    while True:
                        raw, i = scan(text, i)
                        objs.append(decode(raw))
                        del raw
                        i = ws(text, i)
                        c = text[i:i + 1]
                        i = ws(text, i + 1)
                        if c == "]":
                            break
                        if c != ",":
                            return None
                decoded[key] = objs
                data.pop(key, None)
            else:
                data[key], i = scan(text, i)
                decoded.pop(key, None)
            i = ws(text, i)
            c = text[i:i + 1]
            i = ws(text, i + 1)
            if c == "}":
                break
            if c != ",":
                return None
    if ws(text, i) != len(text):
        return None
    return data, decoded


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
        return cls._build(data, {}, consume)

    @classmethod
    def _build(
        cls, data: Mapping[str, Any], decoded: Mapping[str, list[Any]], consume: bool
    ) -> Scenario:
        """The scenario from ``data``, whose object lists named in ``decoded`` are already
        decoded objects."""
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
            objs = decoded.get(key)
            if objs is None:
                raw = data.get(key) or []
                if not isinstance(raw, list):
                    raise InvalidObjectError(f"scenario {name}", key, "expected a list")
                if consume:
                    raw.reverse()
                    objs = []
                    while raw:
                        objs.append(decode(raw.pop()))
                else:
                    objs = [decode(o) for o in raw]
            if key == "pods":
                objs = [p for p in objs if not is_terminal(p)]
            kwargs[_ATTRS.get(key, key)] = tuple(objs)
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
        """Read a scenario file. Its object lists are decoded element by element as the text
        is parsed, so the raw JSON of the whole file never exists at once (a large file
        costs little more than its objects); any problem (bad JSON, an invalid object) is
        reported by the whole-file path, exactly as ``from_dict(json.loads(...))`` does."""
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        try:
            parts = _stream_parts(text)
        except (ValueError, TypeError):  # InvalidObjectError is a ValueError
            parts = None
        if parts is not None:
            try:
                return cls._build(parts[0], parts[1], True)
            except (ValueError, TypeError):
                pass
        return cls.from_dict(json.loads(text), consume=True)

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
