"""Pod and the parts of its spec and status the scheduler reads."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from kschedlib.api.codec import FieldError, json_name, one_of
from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.quantity import Quantity
from kschedlib.api.selectors import LabelSelector, NodeSelector, PreferredSchedulingTerm

ResourceList = dict[str, Quantity]


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimRef:
    """A container's use of one of the pod's resource claims (resources.claims)."""

    name: str = ""
    request: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceRequirements:
    requests: ResourceList = attrs.field(factory=dict)
    limits: ResourceList = attrs.field(factory=dict)
    claims: tuple[ResourceClaimRef, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerPort:
    name: str = ""
    container_port: int = 0
    host_port: int = 0
    host_ip: str = attrs.field(default="", metadata={"json": "hostIP"})
    protocol: str = attrs.field(default="TCP", validator=one_of("TCP", "UDP", "SCTP"))


def _required_one_of(*allowed: str) -> Any:
    """attrs validator: a required field whose value must be one of ``allowed``."""
    check = one_of(*allowed)

    def validate(inst: Any, attribute: Any, value: Any) -> None:
        if value == "":
            raise FieldError(attribute.metadata.get("json", json_name(attribute.name)),
                             "Required value")
        check(inst, attribute, value)

    return validate


def _unique_exit_codes(_inst: Any, _attribute: Any, values: tuple[int, ...]) -> None:
    seen: set[int] = set()
    for i, v in enumerate(values):
        if v in seen:
            raise FieldError(f"values[{i}]", f"Duplicate value: {v}")
        seen.add(v)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerRestartRuleOnExitCodes:
    """The exit codes a container restart rule applies to (In or NotIn ``values``)."""

    operator: str = attrs.field(default="", validator=_required_one_of("In", "NotIn"))
    values: tuple[int, ...] = attrs.field(default=(), validator=_unique_exit_codes)


def _exit_codes_required(_inst: Any, _attribute: Any, value: Any) -> None:
    if value is None:
        raise FieldError("exitCodes", "Required value")


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerRestartRule:
    """One of a container's restartPolicyRules (ContainerRestartRules, beta in v1.35): the
    action to take when the container exits with matching codes."""

    action: str = attrs.field(
        default="", validator=_required_one_of("Restart", "RestartAllContainers")
    )
    exit_codes: ContainerRestartRuleOnExitCodes | None = attrs.field(
        default=None, validator=_exit_codes_required
    )


@attrs.define(slots=True, frozen=True, kw_only=True)
class Container:
    name: str = ""
    image: str = ""
    ports: tuple[ContainerPort, ...] = ()
    resources: ResourceRequirements = attrs.field(factory=ResourceRequirements)
    restart_policy: str | None = None
    restart_policy_rules: tuple[ContainerRestartRule, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class Toleration:
    key: str = ""
    operator: str = attrs.field(default="", validator=one_of("", "Equal", "Exists", "Gt", "Lt"))
    value: str = ""
    effect: str = attrs.field(
        default="", validator=one_of("", "NoSchedule", "PreferNoSchedule", "NoExecute")
    )
    toleration_seconds: int | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeAffinity:
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: tuple[PreferredSchedulingTerm, ...] = ()

    @property
    def required(self) -> NodeSelector | None:
        return self.required_during_scheduling_ignored_during_execution

    @property
    def preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        return self.preferred_during_scheduling_ignored_during_execution


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class WeightedPodAffinityTerm:
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = attrs.field(factory=PodAffinityTerm)


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodAffinity:
    required_during_scheduling_ignored_during_execution: tuple[PodAffinityTerm, ...] = ()
    preferred_during_scheduling_ignored_during_execution: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def required(self) -> tuple[PodAffinityTerm, ...]:
        return self.required_during_scheduling_ignored_during_execution

    @property
    def preferred(self) -> tuple[WeightedPodAffinityTerm, ...]:
        return self.preferred_during_scheduling_ignored_during_execution


@attrs.define(slots=True, frozen=True, kw_only=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class TopologySpreadConstraint:
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = attrs.field(
        default="DoNotSchedule", validator=one_of("DoNotSchedule", "ScheduleAnyway")
    )
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(one_of("Honor", "Ignore"))
    )
    node_taints_policy: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(one_of("Honor", "Ignore"))
    )
    match_label_keys: tuple[str, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class PersistentVolumeClaimVolumeSource:
    claim_name: str = ""
    read_only: bool = False


@attrs.define(slots=True, frozen=True, kw_only=True)
class EphemeralVolumeSource:
    volume_claim_template: dict[str, Any] | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class Volume:
    """A pod volume; only the sources the scheduler looks at are typed, the rest kept raw."""

    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    gce_persistent_disk: dict[str, Any] | None = attrs.field(
        default=None, metadata={"json": "gcePersistentDisk"}
    )
    aws_elastic_block_store: dict[str, Any] | None = attrs.field(
        default=None, metadata={"json": "awsElasticBlockStore"}
    )
    rbd: dict[str, Any] | None = None
    iscsi: dict[str, Any] | None = None
    csi: dict[str, Any] | None = None
    azure_disk: dict[str, Any] | None = None
    host_path: dict[str, Any] | None = None
    empty_dir: dict[str, Any] | None = None
    config_map: dict[str, Any] | None = None
    secret: dict[str, Any] | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodSchedulingGate:
    name: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodResourceClaim:
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class WorkloadReference:
    """spec.workloadRef (GenericWorkload): the Workload, its pod group and the replica key
    that splits one group into independent gangs."""

    name: str = ""
    pod_group: str = ""
    pod_group_replica_key: str = ""

    def __attrs_post_init__(self) -> None:
        from kschedlib.api.codec import FieldError
        from kschedlib.api.scheduling import dns_label_error, workload_ref_errors

        errs = workload_ref_errors(self)
        if self.pod_group_replica_key:
            err = dns_label_error(self.pod_group_replica_key)
            if err is not None:
                errs.append(
                    ("podGroupReplicaKey", f'Invalid value: "{self.pod_group_replica_key}": {err}')
                )
        if errs:
            raise FieldError(*errs[0])


def _scheduler_name(value: str) -> str:
    return value or "default-scheduler"


_T = TypeVar("_T")
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _shallow_copy(obj: _T) -> _T:
    """A new instance of ``obj``'s attrs class with the same field values (no converter or
    validator runs: the values are already converted and valid)."""
    cls = type(obj)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(a.name for a in attrs.fields(cls))  # type: ignore[arg-type]
    new = object.__new__(cls)
    for name in names:
        object.__setattr__(new, name, getattr(obj, name))
    return new


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodSpec:
    node_name: str = ""
    # The API server defaults an empty schedulerName to default-scheduler.
    scheduler_name: str = attrs.field(default="default-scheduler", converter=_scheduler_name)
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(one_of("PreemptLowerPriority", "Never")),
    )
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    resources: ResourceRequirements | None = None
    overhead: ResourceList = attrs.field(factory=dict)
    node_selector: dict[str, str] = attrs.field(factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    volumes: tuple[Volume, ...] = ()
    scheduling_gates: tuple[PodSchedulingGate, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    host_network: bool = False
    termination_grace_period_seconds: int | None = None
    workload_ref: WorkloadReference | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodCondition:
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerStatus:
    """What the kubelet reports of a container; allocated/actual resources matter for
    in-place resize accounting."""

    name: str = ""
    allocated_resources: ResourceList = attrs.field(factory=dict)
    resources: ResourceRequirements | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodResourceClaimStatus:
    """The ResourceClaim generated for a pod claim from a template (null: none needed)."""

    name: str = ""
    resource_claim_name: str | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ContainerExtendedResourceRequest:
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodExtendedResourceClaimStatus:
    """The claim the scheduler created for DRA-backed extended resources (DRAExtendedResource)."""

    request_mappings: tuple[ContainerExtendedResourceRequest, ...] = ()
    resource_claim_name: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodStatus:
    phase: str = ""
    reason: str = ""
    message: str = ""
    qos_class: str = attrs.field(default="", metadata={"json": "qosClass"})
    nominated_node_name: str = ""
    start_time: _dt.datetime | None = None
    conditions: tuple[PodCondition, ...] = ()
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class Pod(KubeObject):
    label = "pod"

    api_version: str = attrs.field(default="v1", metadata={"json": "apiVersion"})
    kind: str = "Pod"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: PodSpec = attrs.field(factory=PodSpec)
    status: PodStatus = attrs.field(factory=PodStatus)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def uid(self) -> str:
        """The pod's UID, or its key when the object carries none (as in hand-written YAML)."""
        return self.metadata.uid or self.key


    def with_node_name(self, node_name: str) -> Pod:
        """What ``attrs.evolve`` gives with ``spec.node_name`` set (the other fields are
        already converted and valid, so they are copied as they are: once per binding)."""
        spec = _shallow_copy(self.spec)
        object.__setattr__(spec, "node_name", node_name)
        pod = _shallow_copy(self)
        object.__setattr__(pod, "spec", spec)
        return pod

    def with_annotations(self, annotations: Mapping[str, str]) -> Pod:
        """A copy with ``annotations`` added to (or replacing) the pod's annotations."""
        merged = {**self.metadata.annotations, **annotations}
        return attrs.evolve(self, metadata=attrs.evolve(self.metadata, annotations=merged))

    def with_nominated_node_name(self, node_name: str) -> Pod:
        return attrs.evolve(
            self, status=attrs.evolve(self.status, nominated_node_name=node_name)
        )


def pod_priority(pod: Pod) -> int:
    """corev1helpers.PodPriority: spec.priority, or 0 when unset."""
    p = pod.spec.priority
    return 0 if p is None else p


def is_terminal(pod: Pod) -> bool:
    return pod.status.phase in ("Succeeded", "Failed")


def host_ports(pod: Pod) -> list[ContainerPort]:
    """Ports with a hostPort of the app containers and of restartable (sidecar) init
    containers, which run for the pod's whole life (schedutil.GetHostPorts)."""
    ports = [
        p
        for c in pod.spec.init_containers
        if c.restart_policy == "Always"
        for p in c.ports
        if p.host_port > 0
    ]
    ports.extend(p for c in pod.spec.containers for p in c.ports if p.host_port > 0)
    return ports
