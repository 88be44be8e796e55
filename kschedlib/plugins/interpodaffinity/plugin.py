"""InterPodAffinity: required pod affinity/anti-affinity filter (both ways: the incoming pod's
terms and existing pods' anti-affinity), preferred terms score (interpodaffinity/plugin.go)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.validation import pod_info_parse_error
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import NodeScore, PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins.interpodaffinity.args import InterPodAffinityArgs
from kschedlib.plugins.interpodaffinity.counting import (
    AffinityCounter,
    TopologyScoreCounter,
    counter_enabled,
)
from kschedlib.plugins.interpodaffinity.filtering import (
    AFFINITY_NOT_MATCH,
    PreFilterState,
    compile_checks,
    existing_anti_affinity_counts,
    incoming_affinity_anti_affinity_counts,
    satisfy_pod_affinity,
)
from kschedlib.plugins.interpodaffinity.index import PodIndex
from kschedlib.plugins.interpodaffinity.rejections import RejectionCache, rejected_nodes
from kschedlib.plugins.interpodaffinity.scoring import (
    PreScoreState,
    compute_topology_score,
    normalize_scores,
)
from kschedlib.plugins.interpodaffinity.terms import (
    NAME,
    merge_terms,
    merge_weighted_terms,
    namespace_labels,
    pod_matches_all_affinity_terms,
)

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _has_preferred_terms(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    return bool((pa is not None and pa.preferred) or (paa is not None and paa.preferred))


class InterPodAffinity:
    """Checks required inter-pod affinity and anti-affinity and scores preferred terms."""

    __slots__ = (
        "_counter",
        "_handle",
        "_index",
        "_last_parsed",
        "_rejections",
        "_score_counter",
        "_synced",
        "args",
    )

    def __init__(self, args: InterPodAffinityArgs, handle: Any) -> None:
        self.args = args
        self._handle = handle
        # PreFilter counts kept up to date across cycles (None: recount every cycle).
        self._counter = AffinityCounter() if counter_enabled(handle) else None
        self._score_counter = TopologyScoreCounter() if counter_enabled(handle) else None
        # Existing pods and terms by label, shared by both counters (used with them only).
        self._index = PodIndex()
        self._synced: tuple[CycleState, Sequence[NodeInfo]] | None = None
        self._rejections = RejectionCache()
        self._last_parsed: tuple[Pod, str | None, PodInfo | None] | None = None
        """The cycle and node list the index was last synced for."""

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        aff = pod.spec.affinity
        if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
            return None
        if self.args.ignore_preferred_terms_of_existing_pods:
            return ()  # other pods' preferred terms are not scored: labels do not matter
        # The labels only, as kube-scheduler signs them (not the namespace).
        return tuple(sorted(pod.metadata.labels.items()))

    def _parsed(self, pod: Pod) -> tuple[str | None, PodInfo | None]:
        """The pod's selector parse error, else its PodInfo (for its terms); the last pod's
        kept, as PreFilter and PreScore of a cycle ask for the same (immutable) pod."""
        last = self._last_parsed
        if last is not None and last[0] is pod:
            return last[1], last[2]
        err = pod_info_parse_error(pod) if pod.spec.affinity is not None else None
        pi = PodInfo.of(pod) if err is None else None
        self._last_parsed = (pod, err, pi)
        return err, pi

    # --- PreFilter / Filter ---

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        lister = self._handle.snapshot_shared_lister().node_infos()
        objects = self._handle.objects
        err, pi = self._parsed(pod)
        if err is not None:  # selectors the API server would have rejected
            return None, Status(Code.UnschedulableAndUnresolvable, (f"parsing pod: {err}",))
        assert pi is not None
        affinity_terms = merge_terms(pi.required_affinity_terms, objects)
        anti_terms = merge_terms(pi.required_anti_affinity_terms, objects)
        ns_labels = namespace_labels(objects, pod.metadata.namespace)
        counter = self._counter
        with_anti = lister.have_pods_with_required_anti_affinity_list()
        if counter is not None and (with_anti or affinity_terms or anti_terms):
            index = self._index
            listed = lister.list()
            index.sync(listed, lister)
            self._synced = (state, listed)
            existing = counter.existing_anti_affinity_counts(pod, ns_labels, with_anti, index)
        else:
            existing = existing_anti_affinity_counts(pod, ns_labels, with_anti)
        if not existing and not affinity_terms and not anti_terms:
            return None, SKIP
        if counter is not None:
            affinity, anti = counter.incoming_counts(
                affinity_terms, anti_terms, nodes, index if nodes is listed else None
            )
        else:
            affinity, anti = incoming_affinity_anti_affinity_counts(affinity_terms, anti_terms, nodes)
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(pod, affinity_terms, anti_terms, ns_labels, existing, affinity, anti),
        )
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _missing(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_info_to_add, node_info.node, 1)
        return None

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _missing(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_info_to_remove, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not PreFilterState and not isinstance(s, PreFilterState):
            return _missing(PRE_FILTER_STATE_KEY)
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        # filter_labels, inlined: Filter runs once per node.
        checks = s.checks
        if checks is None:
            checks = s.checks = compile_checks(s)
        lookups, affinity = checks
        labels = node.metadata.labels
        if affinity and not satisfy_pod_affinity(s, labels):
            return AFFINITY_NOT_MATCH
        for key, inner, status in lookups:
            # A node without the key gives None, never a counted value.
            if inner.get(labels.get(key), 0) > 0:  # type: ignore[arg-type]
                return status
        return None

    def filter_rejections(self, state: CycleState, pod: Pod) -> Mapping[str, Status] | None:
        """What filter gives each node of the cycle's snapshot it rejects, by node name
        (the others pass), from the label index PreFilter synced; None when unknown."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not PreFilterState:
            return None
        synced = self._synced
        if synced is None or synced[0] is not state:
            return None
        if synced[1] is not self._handle.snapshot_shared_lister().node_infos().list():
            return None
        if s.rejections is None:
            if s.modified:
                s.rejections = rejected_nodes(s, self._index)
            else:
                meta = pod.metadata
                key = (
                    meta.namespace,
                    tuple(sorted(meta.labels.items())),
                    tuple(sorted(s.namespace_labels.items())),
                    s.required_affinity_terms,
                    s.required_anti_affinity_terms,
                )
                s.rejections = self._rejections.rejections(key, s, self._index)
        return s.rejections

    # --- PreScore / Score ---

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        has_constraints = _has_preferred_terms(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        lister = self._handle.snapshot_shared_lister().node_infos()
        # Without preferred terms of its own, only pods with affinity can score the pod.
        all_nodes = lister.list() if has_constraints else lister.have_pods_with_affinity_list()
        objects = self._handle.objects
        err, pi = self._parsed(pod)
        if err is not None:  # PreFilter rejects it first, unless it did not run
            return Status.error(f"failed to parse pod: {err}", NAME)
        assert pi is not None
        if not all_nodes:
            return SKIP  # no node to count on: no pair can be scored
        args = (
            pod,
            merge_weighted_terms(pi.preferred_affinity_terms, objects),
            merge_weighted_terms(pi.preferred_anti_affinity_terms, objects),
            namespace_labels(objects, pod.metadata.namespace),
            self.args.hard_pod_affinity_weight,
            all_nodes,
            has_constraints,
        )
        score_counter = self._score_counter
        if score_counter is None:
            scores = compute_topology_score(*args)
        else:
            index = self._index
            listed = lister.list()
            synced = self._synced
            # PreFilter of this very cycle synced it: the snapshot is read-only in a cycle.
            if synced is None or synced[0] is not state or synced[1] is not listed:
                index.sync(listed, lister)
                self._synced = (state, listed)
            scores = score_counter.compute_topology_score(*args, index)
        if not scores:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _missing(PRE_SCORE_STATE_KEY, "failed to read")
        node = node_info.node
        if node is None:
            return 0, Status.error("node not found", NAME)
        # score_node, inlined: Score runs once per node.
        labels = node.metadata.labels
        score = 0
        for key, values in s.topology_score.items():
            v = labels.get(key)
            if v is not None:
                score += values.get(v, 0)
        return score, None

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _missing(PRE_SCORE_STATE_KEY, "failed to read")
        normalize_scores(s, scores)
        return None

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Pod,
                    ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete,
                ),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when the pod's own labels change; when an assigned pod starts matching its
        affinity or stops matching its anti-affinity; when an added pod matches its affinity;
        when a deleted pod matched its anti-affinity or had anti-affinity against it."""
        original = _as_pod(old_obj)
        modified = _as_pod(new_obj)
        if original is not None and modified is not None and modified.uid == pod.uid:
            if original.metadata.labels != modified.metadata.labels:
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if (modified is not None and not modified.spec.node_name) or (
            original is not None and not original.spec.node_name
        ):
            return QueueingHint.QueueSkip
        pi = PodInfo.of(pod)
        terms = pi.required_affinity_terms
        anti_terms = pi.required_anti_affinity_terms
        if original is not None and modified is not None:
            if not pod_matches_all_affinity_terms(
                terms, original
            ) and pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.Queue
            if pod_matches_all_affinity_terms(
                anti_terms, original
            ) and not pod_matches_all_affinity_terms(anti_terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            if pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.QueueSkip
        if pod_matches_all_affinity_terms(anti_terms, original):
            return QueueingHint.Queue
        ns_labels = namespace_labels(self._handle.objects, pod.metadata.namespace)
        deleted = PodInfo.of(original)
        if any(t.matches(pod, ns_labels) for t in deleted.required_anti_affinity_terms):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a node gains (or, being new, has) an affinity topology key or changes
        its value; for anti-affinity, on any new node, or when a node loses a topology key
        or changes its value."""
        original = _as_node(old_obj)
        modified = _as_node(new_obj)
        if modified is None:
            return QueueingHint.QueueSkip
        pi = PodInfo.of(pod)
        new_labels = modified.metadata.labels
        for t in pi.required_affinity_terms:
            key = t.topology_key
            if original is None:
                if key in new_labels:
                    return QueueingHint.Queue
                continue
            old_labels = original.metadata.labels
            if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        for t in pi.required_anti_affinity_terms:
            if original is None:
                return QueueingHint.Queue
            key = t.topology_key
            old_labels = original.metadata.labels
            if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _missing(key: str, prefix: str = "error reading") -> Status:
    return Status.error(f'{prefix} "{key}" from cycleState: not found', NAME)


def _as_pod(obj: Any) -> Pod | None:
    if obj is None or isinstance(obj, Pod):
        return obj
    raise TypeError(f"expected a Pod, got {type(obj).__name__}")


def _as_node(obj: Any) -> Node | None:
    if obj is None or isinstance(obj, Node):
        return obj
    raise TypeError(f"expected a Node, got {type(obj).__name__}")


def new(args: Any, handle: Any) -> InterPodAffinity:
    """Plugin factory: ``args`` is an InterPodAffinityArgs (None means the defaults)."""
    if args is None:
        args = InterPodAffinityArgs()
    if not isinstance(args, InterPodAffinityArgs):
        raise ConfigError(
            f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}"
        )
    errs = args.validate()
    if errs:
        raise ConfigError(", ".join(f"{path}: {msg}" for path, msg in errs))
    return InterPodAffinity(args, handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new, InterPodAffinityArgs),)
