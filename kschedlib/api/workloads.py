"""PodDisruptionBudget, the workload controllers (their selectors drive default spreading,
their templates are expanded into pods) and PriorityClass."""

from __future__ import annotations

from typing import Any

import attrs

from kschedlib.api.codec import one_of
from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.pod import PodSpec
from kschedlib.api.selectors import LabelSelector
from kschedlib.api.storage import PersistentVolumeClaim


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
class PodTemplateSpec:
    """The pod a workload controller creates: metadata (labels, annotations) and spec."""

    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: PodSpec = attrs.field(factory=PodSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicationControllerSpec:
    replicas: int | None = None
    selector: dict[str, str] = attrs.field(factory=dict)
    template: PodTemplateSpec | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicationController(KubeObject):
    label = "replicationcontroller"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "ReplicationController"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ReplicationControllerSpec = attrs.field(factory=ReplicationControllerSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class SelectorSpec:
    """A workload spec: replica count, selector and pod template."""

    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ReplicaSet(KubeObject):
    label = "replicaset"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: SelectorSpec = attrs.field(factory=SelectorSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class StatefulSetOrdinals:
    start: int = 0


@attrs.define(slots=True, frozen=True, kw_only=True)
class StatefulSetSpec:
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    service_name: str = ""
    pod_management_policy: str = attrs.field(
        default="OrderedReady", validator=one_of("OrderedReady", "Parallel")
    )
    volume_claim_templates: tuple[PersistentVolumeClaim, ...] = ()
    ordinals: StatefulSetOrdinals | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class StatefulSet(KubeObject):
    label = "statefulset"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "StatefulSet"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: StatefulSetSpec = attrs.field(factory=StatefulSetSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class Deployment(KubeObject):
    label = "deployment"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "Deployment"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: SelectorSpec = attrs.field(factory=SelectorSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DaemonSet(KubeObject):
    label = "daemonset"

    api_version: str = attrs.field(default="apps/v1", metadata={"json": "apiVersion"})
    kind: str = "DaemonSet"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: SelectorSpec = attrs.field(factory=SelectorSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class JobSpec:
    parallelism: int | None = None
    completions: int | None = None
    completion_mode: str = attrs.field(
        default="NonIndexed", validator=one_of("NonIndexed", "Indexed")
    )
    suspend: bool = False
    manual_selector: bool = False
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class JobStatus:
    active: int = 0
    succeeded: int = 0
    failed: int = 0


@attrs.define(slots=True, frozen=True, kw_only=True)
class Job(KubeObject):
    label = "job"

    api_version: str = attrs.field(default="batch/v1", metadata={"json": "apiVersion"})
    kind: str = "Job"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: JobSpec = attrs.field(factory=JobSpec)
    status: JobStatus = attrs.field(factory=JobStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class PriorityClass(KubeObject):
    """scheduling.k8s.io/v1 PriorityClass: read by the Priority admission plugin."""

    label = "priorityclass"

    api_version: str = attrs.field(
        default="scheduling.k8s.io/v1", metadata={"json": "apiVersion"}
    )
    kind: str = "PriorityClass"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(one_of("PreemptLowerPriority", "Never")),
    )
    description: str = ""
