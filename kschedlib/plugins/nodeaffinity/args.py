"""NodeAffinityArgs: node affinity the scheduler adds to every pod, and its validation."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs

from kschedlib.api.pod import NodeAffinity as NodeAffinitySpec
from kschedlib.api.selectors import NodeSelectorRequirement, NodeSelectorTerm

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


@attrs.define(slots=True, kw_only=True)
class NodeAffinityArgs:
    """kubescheduler.config.k8s.io/v1 NodeAffinityArgs."""

    added_affinity: NodeAffinitySpec | None = None

    def validate(self) -> list[tuple[str, str]]:
        """ValidateNodeAffinityArgs: every added term must parse as kube-scheduler parses it."""
        aff = self.added_affinity
        if aff is None:
            return []
        errs: list[tuple[str, str]] = []
        base = "addedAffinity"
        req = aff.required
        if req is not None:
            p = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            for i, term in enumerate(req.node_selector_terms):
                errs.extend(term_errors(term, f"{p}[{i}]"))
        p = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, pref in enumerate(aff.preferred):
            if pref.weight == 0:
                continue
            errs.extend(term_errors(pref.preference, f"{p}[{i}]"))
        return errs


def _go_value(value: object) -> str:
    """A bad value as apimachinery's field errors print it (%q for strings, %#v for lists)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]string(nil)"
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return str(value)


def _invalid(value: object, detail: str) -> str:
    return f"Invalid value: {_go_value(value)}: {detail}"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    ex = ",  or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {ex}, regex used for validation is '{fmt}')"


_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE_MSG = (
    "a valid label value must be an empty string or consist of alphanumeric characters, '-', "
    "'_' or '.', and must start and end with an alphanumeric character"
)


def _label_key_error(key: str) -> str | None:
    """validation.IsQualifiedName, first problem only."""
    parts = key.split("/")
    if len(parts) > 2:
        return (
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253:
            return "prefix part must be no more than 253 characters"
        if not _DNS_SUBDOMAIN.match(prefix):
            return "prefix part " + _regex_error(
                _DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"
            )
    else:
        name = parts[0]
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME.match(name):
        return "name part " + _regex_error(
            _QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
        )
    return None


def _label_value_error(value: str) -> str | None:
    """validation.IsValidLabelValue, first problem only."""
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE.match(value):
        return _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
    return None


def _parses_as_int64(s: str) -> bool:
    body = s[1:] if s[:1] in ("+", "-") else s
    return body.isdigit() and body.isascii() and -(2**63) <= int(s) < 2**63


_MSG_IN_EMPTY = "for 'in', 'notin' operators, values set can't be empty"
_MSG_EXISTS_VALUES = "values set must be empty for exists and does not exist"
_MSG_GT_ONE = "for 'Gt', 'Lt' operators, exactly one value is required"
_MSG_GT_INT = "for 'Gt', 'Lt' operators, the value must be an integer"
_MSG_FIELD_ONE = "must have one element"


def term_errors(term: NodeSelectorTerm, path: str) -> list[tuple[str, str]]:
    """The parse errors kube-scheduler's nodeaffinity helpers report for a term (an empty
    term selects nothing and is not an error)."""
    errs: list[tuple[str, str]] = []
    for i, r in enumerate(term.match_expressions):
        errs.extend(_label_requirement_errors(r, f"{path}.matchExpressions[{i}]"))
    for i, r in enumerate(term.match_fields):
        p = f"{path}.matchFields[{i}]"
        if r.operator not in ("In", "NotIn"):
            msg = f'Unsupported value: "{r.operator}": supported values: "In", "NotIn"'
            errs.append((f"{p}.operator", msg))
        elif len(r.values) != 1:
            errs.append((f"{p}.values", _invalid(list(r.values), _MSG_FIELD_ONE)))
    return errs


def _label_requirement_errors(r: NodeSelectorRequirement, path: str) -> list[tuple[str, str]]:
    """labels.NewRequirement's checks: key syntax, value count per operator, integer bounds
    for Gt/Lt, and label-value syntax."""
    errs: list[tuple[str, str]] = []
    key_err = _label_key_error(r.key)
    if key_err is not None:
        errs.append((f"{path}.key", _invalid(r.key, key_err)))
    vals: Sequence[str] = r.values
    vp = f"{path}.values"
    if r.operator in ("In", "NotIn"):
        if not vals:
            errs.append((vp, _invalid([], _MSG_IN_EMPTY)))
    elif r.operator in ("Exists", "DoesNotExist"):
        if vals:
            errs.append((vp, _invalid(list(vals), _MSG_EXISTS_VALUES)))
    else:
        if len(vals) != 1:
            errs.append((vp, _invalid(list(vals), _MSG_GT_ONE)))
        errs.extend(
            (f"{vp}[{i}]", _invalid(v, _MSG_GT_INT))
            for i, v in enumerate(vals)
            if not _parses_as_int64(v)
        )
    for i, v in enumerate(vals):
        value_err = _label_value_error(v)
        if value_err is not None:
            errs.append((f"{vp}[{i}]", _invalid(v, value_err)))
    return errs
