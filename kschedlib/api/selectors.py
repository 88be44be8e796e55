"""Label selectors and node selectors with Kubernetes' exact matching rules.

The API types (LabelSelector, NodeSelector, ...) are plain data; ``as_selector()`` and
``NodeSelectorMatcher`` compile them once into matchers that are cheap to run per node.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kschedlib.api.codec import FieldError, one_of

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@attrs.define(slots=True, frozen=True, kw_only=True)
class LabelSelectorRequirement:
    key: str = ""
    operator: str = attrs.field(default="In", validator=one_of(*LABEL_OPERATORS))
    values: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.operator in ("In", "NotIn") and not self.values:
            raise FieldError("values", "must be specified when `operator` is 'In' or 'NotIn'")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise FieldError(
                "values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )


@attrs.define(slots=True, frozen=True, kw_only=True)
class LabelSelector:
    """metav1.LabelSelector; an empty selector matches everything."""

    match_labels: dict[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()
    _compiled: Selector | None = attrs.field(
        default=None, init=False, eq=False, repr=False, metadata={"skip": True}
    )

    def as_selector(self) -> Selector:
        """Compile (once) into a matcher."""
        sel = self._compiled
        if sel is None:
            reqs: list[tuple[str, str, frozenset[str]]] = [
                (k, "In", frozenset((v,))) for k, v in sorted(self.match_labels.items())
            ]
            reqs.extend(
                (r.key, r.operator, frozenset(r.values)) for r in self.match_expressions
            )
            sel = Selector(tuple(reqs))
            object.__setattr__(self, "_compiled", sel)
        return sel

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.as_selector().matches(labels)


@attrs.define(slots=True, frozen=True)
class Selector:
    """A compiled label selector: every requirement must hold. ``Selector(())`` matches all."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, op, values in self.requirements:
            if op == "In":
                v = labels.get(key)
                if v is None or v not in values:
                    return False
            elif op == "NotIn":
                v = labels.get(key)
                if v is not None and v in values:
                    return False
            elif op == "Exists":
                if key not in labels:
                    return False
            elif op == "DoesNotExist":
                if key in labels:
                    return False
            else:
                return False
        return True

    def is_empty(self) -> bool:
        return not self.requirements

    def add(self, *more: tuple[str, str, frozenset[str]]) -> Selector:
        return Selector(self.requirements + more)


EVERYTHING = Selector(())


@attrs.define(slots=True, frozen=True)
class _Nothing:
    def matches(self, labels: Mapping[str, str]) -> bool:
        return False


NOTHING = _Nothing()


def selector_from(sel: LabelSelector | None) -> Selector | _Nothing:
    """LabelSelectorAsSelector: nil matches nothing, empty matches everything."""
    return NOTHING if sel is None else sel.as_selector()


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """labels.SelectorFromSet: every key=value must match; an empty set matches everything."""
    return Selector(tuple((k, "In", frozenset((v,))) for k, v in sorted(labels.items())))


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeSelectorRequirement:
    key: str = ""
    operator: str = attrs.field(default="In", validator=one_of(*NODE_OPERATORS))
    values: tuple[str, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class NodeSelector:
    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class PreferredSchedulingTerm:
    weight: int = 0
    preference: NodeSelectorTerm = attrs.field(factory=NodeSelectorTerm)


def _parse_int64(s: str) -> int | None:
    try:
        v = int(s, 10)
    except ValueError:
        return None
    if s.strip() != s or "_" in s or not (-(2**63) <= v < 2**63):
        return None
    return v


class _CompiledTerm:
    """One NodeSelectorTerm, compiled; ``ok`` is False when it failed to parse (never matches)."""

    __slots__ = ("labels", "fields", "ok")

    def __init__(self, term: NodeSelectorTerm) -> None:
        self.ok = True
        self.labels: list[tuple[str, str, frozenset[str], int]] = []
        self.fields: list[tuple[str, str, frozenset[str]]] = []
        for r in term.match_expressions:
            vals = r.values
            if r.operator in ("In", "NotIn"):
                if not vals:
                    self.ok = False
            elif r.operator in ("Exists", "DoesNotExist"):
                if vals:
                    self.ok = False
            else:  # Gt, Lt
                bound = _parse_int64(vals[0]) if len(vals) == 1 else None
                if bound is None:
                    self.ok = False
                    continue
                self.labels.append((r.key, r.operator, frozenset(), bound))
                continue
            self.labels.append((r.key, r.operator, frozenset(vals), 0))
        for r in term.match_fields:
            if r.key != "metadata.name" or r.operator not in ("In", "NotIn") or len(r.values) != 1:
                self.ok = False
                continue
            self.fields.append((r.key, r.operator, frozenset(r.values)))
        if not self.labels and not self.fields:
            self.ok = False  # an empty term matches no objects

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.ok:
            return False
        for key, op, values, bound in self.labels:
            v = labels.get(key)
            if op == "In":
                if v is None or v not in values:
                    return False
            elif op == "NotIn":
                if v is not None and v in values:
                    return False
            elif op == "Exists":
                if v is None:
                    return False
            elif op == "DoesNotExist":
                if v is not None:
                    return False
            else:
                if v is None:
                    return False
                n = _parse_int64(v)
                if n is None:
                    return False
                if op == "Gt" and not n > bound:
                    return False
                if op == "Lt" and not n < bound:
                    return False
        for _key, op, values in self.fields:
            inside = node_name in values
            if (op == "In") != inside:
                return False
        return True


class NodeSelectorMatcher:
    """Compiled NodeSelector: terms are ORed, requirements within a term ANDed."""

    __slots__ = ("_terms",)

    def __init__(self, selector: NodeSelector) -> None:
        self._terms = [_CompiledTerm(t) for t in selector.node_selector_terms]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self._terms)


class PreferredTermsScorer:
    """Compiled preferred terms: the score is the sum of weights of matching terms."""

    __slots__ = ("_terms",)

    def __init__(self, terms: tuple[PreferredSchedulingTerm, ...]) -> None:
        self._terms = [
            (t.weight, c)
            for t in terms
            if t.weight != 0 and (c := _CompiledTerm(t.preference)).ok
        ]

    def __bool__(self) -> bool:
        return bool(self._terms)

    def score(self, labels: Mapping[str, str], node_name: str) -> int:
        return sum(w for w, c in self._terms if c.matches(labels, node_name))
