"""What the API server validates in the fields the scheduler reads (apimachinery and
pkg/apis/core/validation rules), applied when objects are decoded from JSON: an object the
API server would reject raises InvalidObjectError naming the object and the field path."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import attrs

from kschedlib.api.codec import FieldError, decode, object_label
from kschedlib.api.quantity import Quantity
from kschedlib.api.selectors import LabelSelector
from kschedlib.errors import InvalidObjectError

T = TypeVar("T")

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


class ValidationProblem(ValueError):
    """One invalid field: its path and the API server's wording."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL.match(value):
        errs.append(DNS1123_LABEL_MSG)
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(DNS1123_SUBDOMAIN_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} characters")
    if not _LABEL_VALUE.match(value):
        errs.append(LABEL_VALUE_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key: an optional DNS subdomain prefix and a name part."""
    prefix, sep, name = value.rpartition("/")
    errs = []
    if sep:
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += [f"prefix part {e}" for e in is_dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if name and not _QUALIFIED_NAME.match(name):
        errs.append(QUALIFIED_NAME_MSG)
    return errs


def _invalid(path: str, value: Any, errs: list[str]) -> ValidationProblem:
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return ValidationProblem(path, f"Invalid value: {shown}: {'; '.join(errs)}")


# --------------------------------------------------------------------------- checks


def _check_name(
    name: str, path: str, subdomain: bool = True, generate_name: str = ""
) -> Iterator[ValidationProblem]:
    if not name:
        if not generate_name:  # with generateName the API server picks the name
            yield ValidationProblem(path, "Required value: name or generateName is required")
        return
    errs = is_dns1123_subdomain(name) if subdomain else is_dns1123_label(name)
    if errs:
        yield _invalid(path, name, errs)


def _check_resources(rl: Mapping[str, Quantity], path: str) -> Iterator[ValidationProblem]:
    for name, q in rl.items():
        if q.sign() < 0:
            yield _invalid(f"{path}[{name}]", str(q), ["must be greater than or equal to 0"])


def _check_labels(labels: Mapping[str, str], path: str) -> Iterator[ValidationProblem]:
    for k, v in labels.items():
        errs = is_qualified_name(k)
        if errs:
            yield _invalid(path, k, errs)
        errs = is_valid_label_value(v)
        if errs:
            yield _invalid(f"{path}[{k}]", v, errs)


def check_label_selector(sel: LabelSelector | None, path: str) -> Iterator[ValidationProblem]:
    """ValidateLabelSelector: keys are qualified names, values valid label values."""
    if sel is None:
        return
    yield from _check_labels(sel.match_labels, f"{path}.matchLabels")
    for i, req in enumerate(sel.match_expressions):
        rpath = f"{path}.matchExpressions[{i}]"
        errs = is_qualified_name(req.key)
        if errs:
            yield _invalid(f"{rpath}.key", req.key, errs)
        for j, v in enumerate(req.values):
            errs = is_valid_label_value(v)
            if errs:
                yield _invalid(f"{rpath}.values[{j}]", v, errs)


def _check_pod_affinity_term(term: Any, path: str) -> Iterator[ValidationProblem]:
    if not term.topology_key:
        yield ValidationProblem(f"{path}.topologyKey", "Required value: can not be empty")
    yield from check_label_selector(term.label_selector, f"{path}.labelSelector")
    yield from check_label_selector(term.namespace_selector, f"{path}.namespaceSelector")


def _check_affinity(aff: Any, path: str) -> Iterator[ValidationProblem]:
    for field, pa in (("podAffinity", aff.pod_affinity), ("podAntiAffinity", aff.pod_anti_affinity)):
        if pa is None:
            continue
        base = f"{path}.{field}"
        for i, t in enumerate(pa.required_during_scheduling_ignored_during_execution):
            yield from _check_pod_affinity_term(
                t, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
            )
        for i, w in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
            wpath = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not 1 <= w.weight <= 100:
                yield _invalid(f"{wpath}.weight", w.weight, ["must be in the range 1-100"])
            yield from _check_pod_affinity_term(w.pod_affinity_term, f"{wpath}.podAffinityTerm")


def _check_containers(containers: Any, path: str) -> Iterator[ValidationProblem]:
    for i, c in enumerate(containers):
        cpath = f"{path}[{i}]"
        yield from _check_resources(c.resources.requests, f"{cpath}.resources.requests")
        yield from _check_resources(c.resources.limits, f"{cpath}.resources.limits")
        for j, port in enumerate(c.ports):
            ppath = f"{cpath}.ports[{j}]"
            if not 1 <= port.container_port <= 65535:
                yield _invalid(f"{ppath}.containerPort", port.container_port,
                               ["must be between 1 and 65535, inclusive"])
            if port.host_port and not 1 <= port.host_port <= 65535:
                yield _invalid(f"{ppath}.hostPort", port.host_port,
                               ["must be between 1 and 65535, inclusive"])


def pod_problems(pod: Any) -> Iterator[ValidationProblem]:
    meta = pod.metadata
    yield from _check_name(meta.name, "metadata.name", generate_name=meta.generate_name)
    if meta.namespace:
        errs = is_dns1123_label(meta.namespace)
        if errs:
            yield _invalid("metadata.namespace", meta.namespace, errs)
    else:
        yield ValidationProblem("metadata.namespace", "Required value")
    yield from _check_labels(meta.labels, "metadata.labels")
    spec = pod.spec
    yield from _check_containers(spec.containers, "spec.containers")
    yield from _check_containers(spec.init_containers, "spec.initContainers")
    if spec.resources is not None:
        yield from _check_resources(spec.resources.requests, "spec.resources.requests")
        yield from _check_resources(spec.resources.limits, "spec.resources.limits")
    yield from _check_resources(spec.overhead, "spec.overhead")
    if spec.priority is not None and not INT32_MIN <= spec.priority <= INT32_MAX:
        yield _invalid("spec.priority", spec.priority,
                       [f"must be between {INT32_MIN} and {INT32_MAX}, inclusive"])
    for i, c in enumerate(spec.topology_spread_constraints):
        cpath = f"spec.topologySpreadConstraints[{i}]"
        if c.max_skew <= 0:
            yield _invalid(f"{cpath}.maxSkew", c.max_skew, ["must be greater than zero"])
        if not c.topology_key:
            yield ValidationProblem(f"{cpath}.topologyKey", "Required value: can not be empty")
        if c.min_domains is not None and c.min_domains <= 0:
            yield _invalid(f"{cpath}.minDomains", c.min_domains, ["must be greater than zero"])
        yield from check_label_selector(c.label_selector, f"{cpath}.labelSelector")
    if spec.affinity is not None:
        yield from _check_affinity(spec.affinity, "spec.affinity")


def meta_problems(obj: Any, namespaced: bool) -> Iterator[ValidationProblem]:
    """Every object needs a name; a namespace, when given, must be a DNS label."""
    meta = obj.metadata
    if not meta.name and not getattr(meta, "generate_name", ""):
        yield ValidationProblem("metadata.name", "Required value: name or generateName is required")
    if namespaced and meta.namespace:
        errs = is_dns1123_label(meta.namespace)
        if errs:
            yield _invalid("metadata.namespace", meta.namespace, errs)


def node_problems(node: Any) -> Iterator[ValidationProblem]:
    yield from _check_name(
        node.metadata.name, "metadata.name", generate_name=node.metadata.generate_name
    )
    yield from _check_labels(node.metadata.labels, "metadata.labels")
    yield from _check_resources(node.status.capacity, "status.capacity")
    yield from _check_resources(node.status.allocatable, "status.allocatable")


def default_namespace(obj: Any) -> Any:
    """A namespaced object read from a manifest without a namespace goes to "default", as
    kubectl puts it there."""
    meta = obj.metadata
    if meta.namespace:
        return obj
    return attrs.evolve(obj, metadata=attrs.evolve(meta, namespace="default"))


# --------------------------------------------------------------------------- PodInfo parsing


def _requirement_errors(key: str, op: str, values: tuple[str, ...]) -> list[str]:
    """labels.NewRequirement's errors (field paths relative to the requirement)."""
    errs = []
    kerrs = is_qualified_name(key)
    if kerrs:
        errs.append(f'key: Invalid value: "{key}": {"; ".join(kerrs)}')
    for i, v in enumerate(values):
        verrs = is_valid_label_value(v)
        if verrs:
            errs.append(f'values[{i}][{key}]: Invalid value: "{v}": {"; ".join(verrs)}')
    return errs


def _aggregate(errs: list[str]) -> str:
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def label_selector_error(sel: LabelSelector | None) -> str | None:
    """metav1.LabelSelectorAsSelector's error text for a selector kube-scheduler cannot
    parse (invalid keys or values), or None."""
    if sel is None:
        return None
    for k in sorted(sel.match_labels):
        errs = _requirement_errors(k, "=", (sel.match_labels[k],))
        if errs:
            return _aggregate(errs)
    for req in sel.match_expressions:
        errs = _requirement_errors(req.key, req.operator, req.values)
        if errs:
            return _aggregate(errs)
    return None


def pod_info_parse_error(pod: Any) -> str | None:
    """framework.NewPodInfo's error for a pod whose pod (anti-)affinity terms have selectors
    that do not parse (an object the API server would have rejected), or None."""
    aff = pod.spec.affinity
    if aff is None:
        return None
    errs: list[str] = []
    groups = []
    for label, pa, preferred in (
        ("requiredAffinityTerms", aff.pod_affinity, False),
        ("requiredAntiAffinityTerms", aff.pod_anti_affinity, False),
        ("preferredAffinityTerms", aff.pod_affinity, True),
        ("preferredAntiAffinityTerms", aff.pod_anti_affinity, True),
    ):
        if pa is None:
            continue
        if preferred:
            terms = [w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution]
        else:
            terms = list(pa.required_during_scheduling_ignored_during_execution)
        groups.append((label, terms))
    for label, terms in groups:
        for term in terms:
            err = label_selector_error(term.label_selector) or label_selector_error(
                term.namespace_selector
            )
            if err is not None:
                errs.append(f"{label}: {err}")
                break
    return _aggregate(errs) if errs else None


# ------------------------------------------------------------------ decoding with validation


def decode_object(cls: type[T], kind: str, data: Any, *, validate: bool = True) -> T:
    """Decode a top-level Kubernetes object, turning field errors into InvalidObjectError.

    A ``kind`` naming another kind is an error. With ``validate`` the object is then checked
    as the API server would (every object: a name, valid labels; Pods and Nodes also
    non-negative quantities, ports, priority, spread constraints, affinity selectors), and a
    namespaced object without a namespace goes to "default" (as kubectl puts it).
    """
    want = _default_kind(cls)
    if isinstance(data, dict) and want:
        got = data.get("kind")
        if got is not None and got != want:
            raise InvalidObjectError(
                object_label(kind, data), "kind", f'expected "{want}", got {got!r}'
            )
    try:
        obj = decode(cls, data)
    except FieldError as exc:
        raise InvalidObjectError(object_label(kind, data), exc.path, exc.problem) from None
    except RecursionError:
        raise InvalidObjectError(
            object_label(kind, data), "", "nested too deeply to decode"
        ) from None
    if not validate or not hasattr(obj, "metadata"):
        return obj
    if want in _NAMESPACED:
        obj = default_namespace(obj)
    if want == "Pod":
        problems = pod_problems(obj)
    elif want == "Node":
        problems = node_problems(obj)
    else:
        problems = meta_problems(obj, namespaced=want in _NAMESPACED)
    key = getattr(obj, "key", "")
    label = f"{kind} {key}" if key else object_label(kind, data)
    for problem in problems:
        raise InvalidObjectError(label, problem.path, problem.problem)
    if want in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
        from kschedlib.api.cel.validation import selector_problems

        for path, text in selector_problems(want, obj):
            raise InvalidObjectError(label, path, text)
    return obj


# Namespaced kinds: kubectl puts one read from a manifest without a namespace in "default".
_NAMESPACED = frozenset({
    "Pod", "PersistentVolumeClaim", "PodDisruptionBudget", "Service", "ReplicaSet",
    "StatefulSet", "ReplicationController",
})


def _default_kind(cls: type) -> str:
    """The ``kind`` an attrs object class defaults to ("" when it has none)."""
    if not attrs.has(cls):
        return ""
    f = getattr(attrs.fields(cls), "kind", None)
    default = getattr(f, "default", None)
    return default if isinstance(default, str) else ""
