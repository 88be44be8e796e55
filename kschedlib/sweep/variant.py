"""Variants: small, serialisable descriptions of what changes against the base cluster."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kschedlib.errors import InvalidObjectError


def _tuple_of_str(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


def _frozen_map(value: Any) -> dict[str, Any]:
    return dict(value)


def _node_additions(value: Iterable[NodeAddition]) -> tuple[NodeAddition, ...]:
    return tuple(value)


def _pod_additions(value: Iterable[PodAddition]) -> tuple[PodAddition, ...]:
    return tuple(value)


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeAddition:
    """``count`` new nodes shaped like ``template``: the name of a base node, or a Node as a
    Kubernetes dict. New nodes are named ``<prefix>-<i>`` with a matching hostname label."""

    template: str | Mapping[str, Any]
    count: int
    prefix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "count": self.count, "prefix": self.prefix}


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodAddition:
    """``count`` replicas of the pod ``template`` (a Kubernetes dict) to schedule, named and
    labelled as a ReplicaSet's pods would be."""

    template: Mapping[str, Any]
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "count": self.count}


@attrs.define(slots=True, frozen=True, kw_only=True)
class CapacityQuestion:
    """How many more replicas of ``template`` fit (cluster-capacity's question)."""

    template: Mapping[str, Any]
    limit: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "limit": self.limit}


@attrs.define(slots=True, frozen=True, kw_only=True)
class Variant:
    """One what-if: nodes removed (by name, zone or labels) and added, the pending pods
    scaled, pods added, and optionally a capacity question asked after scheduling.

    Pods bound to a removed node are recreated as pending pods when a controller owns them
    (DaemonSet and mirror pods go with their node; a pod without a controller is lost)."""

    name: str
    remove_nodes: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    remove_zones: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    remove_node_labels: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_map)
    add_nodes: tuple[NodeAddition, ...] = attrs.field(default=(), converter=_node_additions)
    pending_scale: float = 1.0
    add_pods: tuple[PodAddition, ...] = attrs.field(default=(), converter=_pod_additions)
    capacity: CapacityQuestion | None = None
    config: Mapping[str, Any] | None = None
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict, converter=_frozen_map)
    description: str = ""

    def __attrs_post_init__(self) -> None:
        if not self.name:
            raise InvalidObjectError("variant", "name", "must not be empty")
        if not (self.pending_scale >= 0 and math.isfinite(self.pending_scale)):
            raise InvalidObjectError(
                f"variant {self.name}", "pendingScale", f"must be >= 0, got {self.pending_scale}"
            )
        for i, a in enumerate(self.add_nodes):
            if a.count < 0:
                raise InvalidObjectError(
                    f"variant {self.name}", f"addNodes[{i}].count", "must be >= 0"
                )
        for i, p in enumerate(self.add_pods):
            if p.count < 0:
                raise InvalidObjectError(
                    f"variant {self.name}", f"addPods[{i}].count", "must be >= 0"
                )

    def to_dict(self) -> dict[str, Any]:
        """JSON form (camelCase keys, defaults left out), read back by `from_dict`."""
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        if self.remove_nodes:
            out["removeNodes"] = list(self.remove_nodes)
        if self.remove_zones:
            out["removeZones"] = list(self.remove_zones)
        if self.remove_node_labels:
            out["removeNodeLabels"] = dict(self.remove_node_labels)
        if self.add_nodes:
            out["addNodes"] = [a.to_dict() for a in self.add_nodes]
        if self.pending_scale != 1.0:
            out["pendingScale"] = self.pending_scale
        if self.add_pods:
            out["addPods"] = [p.to_dict() for p in self.add_pods]
        if self.capacity is not None:
            out["capacity"] = self.capacity.to_dict()
        if self.config is not None:
            out["config"] = dict(self.config)
        if self.feature_gates:
            out["featureGates"] = dict(self.feature_gates)
        return out

    @classmethod
    def from_dict(cls, data: Any, index: int = 0) -> Variant:
        """Read a variant written by `to_dict` (e.g. from a JSON or YAML variants file)."""
        where = f"variants[{index}]"
        if not isinstance(data, Mapping):
            raise InvalidObjectError(where, "", "expected an object")
        known = {
            "name", "description", "removeNodes", "removeZones", "removeNodeLabels", "addNodes",
            "pendingScale", "addPods", "capacity", "config", "featureGates",
        }
        for key in data:
            if key not in known:
                raise InvalidObjectError(where, str(key), "unknown field")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidObjectError(where, "name", "expected a non-empty string")
        where = f"variant {name}"

        def seq(key: str) -> list[Any]:
            v = data.get(key, [])
            if not isinstance(v, list):
                raise InvalidObjectError(where, key, "expected a list")
            return v

        def mapping(key: str) -> dict[str, Any]:
            v = data.get(key, {})
            if not isinstance(v, Mapping):
                raise InvalidObjectError(where, key, "expected an object")
            return dict(v)

        def count(v: Any, path: str) -> int:
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidObjectError(where, path, "expected an integer")
            return v

        add_nodes = []
        for i, a in enumerate(seq("addNodes")):
            if not isinstance(a, Mapping) or not isinstance(a.get("template"), (str, Mapping)):
                raise InvalidObjectError(where, f"addNodes[{i}].template", "expected a node name or object")
            add_nodes.append(NodeAddition(
                template=a["template"], count=count(a.get("count"), f"addNodes[{i}].count"),
                prefix=str(a.get("prefix", "")),
            ))
        add_pods = []
        for i, p in enumerate(seq("addPods")):
            if not isinstance(p, Mapping) or not isinstance(p.get("template"), Mapping):
                raise InvalidObjectError(where, f"addPods[{i}].template", "expected a pod object")
            add_pods.append(PodAddition(
                template=p["template"], count=count(p.get("count"), f"addPods[{i}].count")
            ))
        capacity = None
        if data.get("capacity") is not None:
            c = data["capacity"]
            if not isinstance(c, Mapping) or not isinstance(c.get("template"), Mapping):
                raise InvalidObjectError(where, "capacity.template", "expected a pod object")
            limit = c.get("limit")
            capacity = CapacityQuestion(
                template=c["template"],
                limit=None if limit is None else count(limit, "capacity.limit"),
            )
        scale = data.get("pendingScale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise InvalidObjectError(where, "pendingScale", "expected a number")
        config = data.get("config")
        if config is not None and not isinstance(config, Mapping):
            raise InvalidObjectError(where, "config", "expected an object")
        gates = mapping("featureGates")
        for k, v in gates.items():
            if not isinstance(v, bool):
                raise InvalidObjectError(where, f"featureGates.{k}", "expected true or false")
        labels = mapping("removeNodeLabels")
        return cls(
            name=name,
            description=str(data.get("description", "")),
            remove_nodes=[str(n) for n in seq("removeNodes")],
            remove_zones=[str(z) for z in seq("removeZones")],
            remove_node_labels={str(k): str(v) for k, v in labels.items()},
            add_nodes=add_nodes,
            pending_scale=float(scale),
            add_pods=add_pods,
            capacity=capacity,
            config=config,
            feature_gates=gates,
        )


def load_variants(text: str) -> list[Variant]:
    """Variants from JSON or YAML text: a list, or an object with a ``variants`` list."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidObjectError("variants", "", f"invalid YAML/JSON: {exc}") from None
    if isinstance(doc, Mapping):
        doc = doc.get("variants")
    if not isinstance(doc, list):
        raise InvalidObjectError("variants", "", "expected a list of variants")
    variants = [Variant.from_dict(d, i) for i, d in enumerate(doc)]
    seen: set[str] = set()
    for i, v in enumerate(variants):
        if v.name in seen:
            raise InvalidObjectError(f"variants[{i}]", "name", f"duplicate name {v.name!r}")
        seen.add(v.name)
    return variants
