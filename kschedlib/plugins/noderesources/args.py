"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs, defaulted and validated as
kube-scheduler v1.35 does (config/v1 defaults, validation_pluginargs.go)."""

from __future__ import annotations

import re
from typing import Any

import attrs

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE = 10
"""config.MaxCustomPriorityScore: the top of a RequestedToCapacityRatio shape's score axis."""


def _default_weight(weight: int) -> int:
    """An unset (or zero) resource weight defaults to 1."""
    return 1 if weight == 0 else weight


@attrs.define(slots=True, frozen=True)
class ResourceSpec:
    """A resource the scoring takes into account, with its weight."""

    name: str = ""
    weight: int = attrs.field(default=1, converter=_default_weight)


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def _default_resources(resources: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
    """An empty resource list defaults to cpu and memory, weight 1 each."""
    return tuple(resources) if resources else DEFAULT_RESOURCES


@attrs.define(slots=True, frozen=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int = 0
    score: int = 0


@attrs.define(slots=True, frozen=True)
class RequestedToCapacityRatioParam:
    shape: tuple[UtilizationShapePoint, ...] = ()


@attrs.define(slots=True, frozen=True)
class ScoringStrategy:
    """How NodeResourcesFit scores nodes. ``type`` has no default once the strategy is given."""

    type: str = ""
    resources: tuple[ResourceSpec, ...] = attrs.field(
        default=DEFAULT_RESOURCES, converter=_default_resources
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


DEFAULT_SCORING_STRATEGY = ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)


@attrs.define(slots=True, frozen=True)
class NodeResourcesFitArgs:
    """Args of NodeResourcesFit: resources the filter ignores and the scoring strategy."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = DEFAULT_SCORING_STRATEGY

    def validate(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        for i, res in enumerate(self.ignored_resources):
            path = f"ignoredResources[{i}]"
            errs.extend((path, invalid(res, msg)) for msg in qualified_name_errors(res))
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                errs.append((path, invalid(group, "resource group name can't contain '/'")))
            errs.extend((path, invalid(group, msg)) for msg in qualified_name_errors(group))
        strategy = self.scoring_strategy
        if strategy.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
            errs.append(
                (
                    "scoringStrategy.type",
                    not_supported(strategy.type, SUPPORTED_SCORING_STRATEGY_TYPES),
                )
            )
        for i, spec in enumerate(strategy.resources):
            if spec.weight <= 0 or spec.weight > 100:
                msg = f"resource weight of {spec.name} not in valid range (0, 100]"
                errs.append((f"scoringStrategy.resources[{i}].weight", invalid(spec.weight, msg)))
        if strategy.requested_to_capacity_ratio is not None:
            # kube-scheduler reports shape errors under scoringStrategy.shape.
            errs.extend(
                validate_function_shape(
                    strategy.requested_to_capacity_ratio.shape, "scoringStrategy.shape"
                )
            )
        return errs


@attrs.define(slots=True, frozen=True)
class NodeResourcesBalancedAllocationArgs:
    """Args of NodeResourcesBalancedAllocation: the resources whose usage is balanced."""

    resources: tuple[ResourceSpec, ...] = attrs.field(
        default=DEFAULT_RESOURCES, converter=_default_resources
    )

    def validate(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        seen: set[str] = set()
        for i, spec in enumerate(self.resources):
            if spec.name in seen:
                errs.append((f"resources[{i}].name", f"Duplicate value: {_go_value(spec.name)}"))
            else:
                seen.add(spec.name)
            if spec.weight != 1:
                errs.append((f"resources[{i}].weight", invalid(spec.weight, "must be 1")))
        return errs


def validate_function_shape(
    shape: tuple[UtilizationShapePoint, ...], path: str
) -> list[tuple[str, str]]:
    """validateFunctionShape: at least one point, utilizations increasing, values in range."""
    if not shape:
        return [(path, "Required value: at least one point must be specified")]
    errs: list[tuple[str, str]] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                (
                    f"{path}[{i}].utilization",
                    invalid(shape[i].utilization, "values must be sorted in increasing order"),
                )
            )
            break
    for i, point in enumerate(shape):
        if point.utilization < 0 or point.utilization > 100:
            errs.append(
                (
                    f"{path}[{i}].utilization",
                    invalid(point.utilization, "not in valid range [0, 100]"),
                )
            )
        if point.score < 0 or point.score > MAX_CUSTOM_PRIORITY_SCORE:
            msg = f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            errs.append((f"{path}[{i}].score", invalid(point.score, msg)))
    return errs


# --- field.Error bodies and apimachinery's IsQualifiedName, with their exact wording ---


def _go_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def invalid(value: Any, detail: str) -> str:
    """The body of a field.Invalid error."""
    return f"Invalid value: {_go_value(value)}: {detail}"


def not_supported(value: Any, supported: tuple[str, ...]) -> str:
    """The body of a field.NotSupported error."""
    quoted = ", ".join(_go_value(s) for s in sorted(supported))
    return f"Unsupported value: {_go_value(value)}: supported values: {quoted}"


_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(_QNAME_FMT)
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix, '/', and a short name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errs.append(
                    "prefix part "
                    + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
                )
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.fullmatch(name):
        errs.append(
            "name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs
