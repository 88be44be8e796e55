"""NodeAffinity: Filter on nodeSelector, required node affinity and the scheduler-enforced
affinity; Score by the weights of the matching preferred terms."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.selectors import (
    NodeSelector,
    NodeSelectorMatcher,
    PreferredSchedulingTerm,
    PreferredTermsScorer,
    Selector,
    selector_from_set,
)
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore, PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Code, Status, unresolvable
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.helper import default_normalize_score
from kschedlib.plugins.nodeaffinity.args import NodeAffinityArgs, term_errors

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
OBJECT_NAME_FIELD = "metadata.name"

_REJECT_POD = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,), NAME)
_REJECT_ENFORCED = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_ENFORCED,), NAME)


def _lazy_matcher(ns: NodeSelector) -> tuple[NodeSelectorMatcher, bool]:
    """A matcher over the terms that parse (a term that doesn't never matches), and whether
    any term failed to parse (LazyErrorNodeSelector)."""
    good = tuple(t for t in ns.node_selector_terms if not term_errors(t, ""))
    broken = len(good) != len(ns.node_selector_terms)
    return NodeSelectorMatcher(NodeSelector(node_selector_terms=good)), broken


@attrs.define(slots=True, frozen=True)
class RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity, compiled
    (nodeaffinity.GetRequiredNodeAffinity)."""

    label_selector: Selector | None
    node_selector: NodeSelectorMatcher | None
    parse_errors: bool = False

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        sel = pod.spec.node_selector
        label_selector = selector_from_set(sel) if sel else None
        aff = pod.spec.affinity
        req = aff.node_affinity.required if aff and aff.node_affinity else None
        if req is None:
            return cls(label_selector, None)
        matcher, broken = _lazy_matcher(req)
        return cls(label_selector, matcher, broken)

    def match(self, node: Node) -> bool:
        labels = node.metadata.labels
        if self.label_selector is not None and not self.label_selector.matches(labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(labels, node.metadata.name)
        return True

    def match_lazy(self, node: Node) -> bool | None:
        """Like match, but None where kube-scheduler reports a parse error: the nodeSelector
        matched, no term did, and some term failed to parse."""
        if self.match(node):
            return True
        if self.parse_errors and (
            self.label_selector is None or self.label_selector.matches(node.metadata.labels)
        ):
            return None
        return False

    def clone(self) -> RequiredNodeAffinity:
        return self


@attrs.define(slots=True, frozen=True)
class PreScoreState:
    """The pod's preferred terms, compiled; None when the pod has none."""

    preferred_node_affinity: PreferredTermsScorer | None

    def clone(self) -> PreScoreState:
        return self


def _format_errors(errs: list[tuple[str, str]]) -> str:
    msgs = [f"{p}: {m}" for p, m in errs]
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def _preferred_scorer(
    terms: tuple[PreferredSchedulingTerm, ...], path: str
) -> PreferredTermsScorer:
    """PreferredTermsScorer, raising ValueError on any term kube-scheduler fails to parse."""
    errs: list[tuple[str, str]] = []
    for i, t in enumerate(terms):
        if t.weight != 0:
            errs.extend(term_errors(t.preference, f"{path}[{i}]"))
    if errs:
        raise ValueError(_format_errors(errs))
    return PreferredTermsScorer(terms)


def get_pod_preferred_node_affinity(pod: Pod) -> PreferredTermsScorer | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None or not aff.node_affinity.preferred:
        return None
    return _preferred_scorer(aff.node_affinity.preferred, "")


def _pre_filter_node_names(ns: NodeSelector) -> frozenset[str] | None:
    """The node names the required terms' ``metadata.name In`` fields allow, or None when
    some term allows any node."""
    node_names: set[str] | None = None
    for term in ns.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                s = set(r.values)
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        node_names = term_names if node_names is None else node_names | term_names
    return None if node_names is None else frozenset(node_names)


class NodeAffinity:
    """Filters nodes by the pod's nodeSelector/required affinity and the added affinity;
    scores them by the matching preferred terms."""

    __slots__ = ("_added_node_selector", "_added_pref_sched_terms")

    def __init__(self, args: NodeAffinityArgs) -> None:
        self._added_node_selector: NodeSelectorMatcher | None = None
        self._added_pref_sched_terms: PreferredTermsScorer | None = None
        added = args.added_affinity
        if added is None:
            return
        errs = args.validate()
        if errs:
            raise ConfigError(f"NodeAffinityArgs: {_format_errors(errs)}")
        if added.required is not None:
            self._added_node_selector = NodeSelectorMatcher(added.required)
        if added.preferred:
            self._added_pref_sched_terms = PreferredTermsScorer(added.preferred)

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        aff = pod.spec.affinity
        return (
            tuple(sorted(pod.spec.node_selector.items())),
            aff.node_affinity if aff is not None else None,
        )

    # --- Filter ---

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        aff = pod.spec.affinity
        required = aff.node_affinity.required if aff and aff.node_affinity else None
        if required is None and self._added_node_selector is None and not pod.spec.node_selector:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.node_selector_terms:
            return None, None
        names = _pre_filter_node_names(required)
        if names is None:
            return None, None
        if not names:
            return None, unresolvable(ERR_REASON_CONFLICT, plugin=NAME)
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        added = self._added_node_selector
        if added is not None and not added.matches(node.metadata.labels, node.metadata.name):
            return _REJECT_ENFORCED
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, RequiredNodeAffinity):
            s = RequiredNodeAffinity.of(pod)
        return None if s.match(node) else _REJECT_POD

    # --- Score ---

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = get_pod_preferred_node_affinity(pod)
        except ValueError as exc:
            return Status.error(exc, NAME)
        if preferred is None and self._added_pref_sched_terms is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        if node is None:
            return 0, Status.error("node not found", NAME)
        labels = node.metadata.labels
        name = node.metadata.name
        count = 0
        added = self._added_pref_sched_terms
        if added is not None:
            count += added.score(labels, name)
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            try:
                s = PreScoreState(get_pod_preferred_node_affinity(pod))
            except ValueError as exc:
                return 0, Status.error(exc, NAME)
        if s.preferred_node_affinity is not None:
            count += s.preferred_node_affinity.score(labels, name)
        return count, None

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when an added node matches, or an updated node starts to match, both the
        enforced affinity and the pod's required affinity."""
        if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
            raise TypeError("expected Node objects")
        added = self._added_node_selector
        if added is not None and not added.matches(new_obj.metadata.labels, new_obj.metadata.name):
            return QueueingHint.QueueSkip
        required = RequiredNodeAffinity.of(pod)
        # A parse error (None) makes kube-scheduler queue the pod.
        is_matched = required.match_lazy(new_obj)
        if is_matched is False:
            return QueueingHint.QueueSkip
        if is_matched is None or old_obj is None:
            return QueueingHint.Queue
        was_matched = required.match_lazy(old_obj)
        return QueueingHint.QueueSkip if was_matched else QueueingHint.Queue


def new(args: Any, handle: Any) -> NodeAffinity:
    if args is None:
        args = NodeAffinityArgs()
    if not isinstance(args, NodeAffinityArgs):
        raise ConfigError(f"args are not of type NodeAffinityArgs, got {type(args).__name__}")
    return NodeAffinity(args)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new, NodeAffinityArgs),)
