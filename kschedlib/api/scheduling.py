"""scheduling.k8s.io/v1alpha1 Workload (GenericWorkload gate, v1.35): named pod groups, each
with a ``basic`` or a ``gang {minCount}`` scheduling policy. Pods join a group through
``spec.workloadRef``."""

from __future__ import annotations

import re
from typing import Any

import attrs

from kschedlib.api.codec import FieldError
from kschedlib.api.meta import KubeObject, ObjectMeta

MAX_POD_GROUPS = 8
"""WorkloadMaxPodGroups: a Workload holds at most 8 pod groups."""

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def dns_label_error(value: str) -> str | None:
    """IsDNS1123Label's first complaint, or None."""
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _DNS_LABEL.match(value):
        return _DNS_LABEL_MSG
    return None


@attrs.define(slots=True, frozen=True, kw_only=True)
class BasicSchedulingPolicy:
    """Pods of the group are scheduled one by one, like pods without a group."""


@attrs.define(slots=True, frozen=True, kw_only=True)
class GangSchedulingPolicy:
    """All-or-nothing: at least ``min_count`` pods must be placeable together."""

    min_count: int = 0

    def __attrs_post_init__(self) -> None:
        if self.min_count <= 0:
            raise FieldError("minCount", f"Invalid value: {self.min_count}: must be greater than zero")


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodGroupPolicy:
    """Exactly one of ``basic`` and ``gang``."""

    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class PodGroup:
    name: str = ""
    policy: PodGroupPolicy = attrs.field(factory=PodGroupPolicy)

    def __attrs_post_init__(self) -> None:
        if not self.name:
            raise FieldError("name", "Required value")
        err = dns_label_error(self.name)
        if err is not None:
            raise FieldError("name", f'Invalid value: "{self.name}": {err}')
        n = (self.policy.basic is not None) + (self.policy.gang is not None)
        if n != 1:
            raise FieldError("policy", "Invalid value: must specify exactly one of: `basic`, `gang`")


@attrs.define(slots=True, frozen=True, kw_only=True)
class TypedLocalObjectReference:
    api_group: str = ""
    kind: str = ""
    name: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class WorkloadSpec:
    """``podGroups`` (1 to 8, unique names) are immutable once created."""

    controller_ref: TypedLocalObjectReference | None = None
    pod_groups: tuple[PodGroup, ...] = ()

    def __attrs_post_init__(self) -> None:
        if not self.pod_groups:
            raise FieldError("podGroups", "Required value")
        if len(self.pod_groups) > MAX_POD_GROUPS:
            raise FieldError(
                "podGroups", f"Too many: {len(self.pod_groups)}: must have at most {MAX_POD_GROUPS} items"
            )
        seen: set[str] = set()
        for i, g in enumerate(self.pod_groups):
            if g.name in seen:
                raise FieldError(f"podGroups[{i}].name", f'Duplicate value: "{g.name}"')
            seen.add(g.name)


@attrs.define(slots=True, frozen=True, kw_only=True)
class Workload(KubeObject):
    label = "workload"

    api_version: str = attrs.field(
        default="scheduling.k8s.io/v1alpha1", metadata={"json": "apiVersion"}
    )
    kind: str = "Workload"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: WorkloadSpec = attrs.field(
        factory=lambda: WorkloadSpec(
            pod_groups=(PodGroup(name="default", policy=PodGroupPolicy(basic=BasicSchedulingPolicy())),)
        )
    )

    def pod_group(self, name: str) -> PodGroup | None:
        for g in self.spec.pod_groups:
            if g.name == name:
                return g
        return None


def validate_workload_update(new: Workload, old: Workload) -> str | None:
    """ValidateWorkloadUpdate: the pod groups cannot change (the message, or None)."""
    if new.spec.pod_groups != old.spec.pod_groups:
        return "spec.podGroups: Invalid value: field is immutable"
    if new.spec.controller_ref != old.spec.controller_ref:
        return "spec.controllerRef: Invalid value: field is immutable"
    return None


def workload_ref_errors(ref: Any) -> list[tuple[str, str]]:
    """Field problems of a pod's spec.workloadRef (path relative to it)."""
    errs: list[tuple[str, str]] = []
    for field, value in (("name", ref.name), ("podGroup", ref.pod_group)):
        if not value:
            errs.append((field, "Required value"))
            continue
        err = dns_label_error(value)
        if err is not None:
            errs.append((field, f'Invalid value: "{value}": {err}'))
    return errs
