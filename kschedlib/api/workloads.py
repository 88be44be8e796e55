"""PodDisruptionBudget and the controllers whose selectors drive default spreading."""

from __future__ import annotations

from typing import Any

import attrs

from kschedlib.api.codec import one_of
from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.selectors import LabelSelector


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodDisruptionBudgetSpec:
    selector: LabelSelector | None = None
    min_available: int | str | None = attrs.field(default=None, metadata={"intorstr": True})
    max_unavailable: int | str | None = attrs.field(default=None, metadata={"intorstr": True})
    unhealthy_pod_eviction_policy: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(one_of("IfHealthyBudget", "AlwaysAllow")),
    )


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodDisruptionBudgetStatus:
    observed_generation: int = 0
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    disrupted_pods: dict[str, Any] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodDisruptionBudget(KubeObject):
    label = "poddisruptionbudget"

    api_version: str = attrs.field(default="policy/v1", metadata={"json": "apiVersion"})
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = attrs.field(factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = attrs.field(factory=PodDisruptionBudgetStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ServiceSpec:
    selector: dict[str, str] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class Service(KubeObject):
    label = "service"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "Service"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ServiceSpec = attrs.field(factory=ServiceSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicationControllerSpec:
    selector: dict[str, str] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicationController(KubeObject):
    label = "replicationcontroller"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "ReplicationController"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ReplicationControllerSpec = attrs.field(factory=ReplicationControllerSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class SelectorSpec:
    selector: LabelSelector | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicaSet(KubeObject):
    label = "replicaset"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: SelectorSpec = attrs.field(factory=SelectorSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class StatefulSet(KubeObject):
    label = "statefulset"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "StatefulSet"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: SelectorSpec = attrs.field(factory=SelectorSpec)
