"""Node and Namespace."""

from __future__ import annotations

import attrs

from kschedlib.api.codec import one_of
from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.quantity import Quantity

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@attrs.define(slots=True, frozen=True, kw_only=True)
class Taint:
    key: str = ""
    value: str = ""
    effect: str = attrs.field(default="NoSchedule", validator=one_of(*TAINT_EFFECTS))

    def __str__(self) -> str:
        """Taint.ToString: ``key=value:effect``."""
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerImage:
    names: tuple[str, ...] = ()
    size_bytes: int = 0


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeCondition:
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeSpec:
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    pod_cidr: str = attrs.field(default="", metadata={"json": "podCIDR"})
    provider_id: str = attrs.field(default="", metadata={"json": "providerID"})


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeStatus:
    capacity: dict[str, Quantity] = attrs.field(factory=dict)
    allocatable: dict[str, Quantity] = attrs.field(factory=dict)
    images: tuple[ContainerImage, ...] = ()
    conditions: tuple[NodeCondition, ...] = ()
    declared_features: tuple[str, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class Node(KubeObject):
    label = "node"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "Node"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: NodeSpec = attrs.field(factory=NodeSpec)
    status: NodeStatus = attrs.field(factory=NodeStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class Namespace(KubeObject):
    label = "namespace"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "Namespace"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
