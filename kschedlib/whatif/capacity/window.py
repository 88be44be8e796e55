"""Scores that are not node-local, on each replica's window: PodTopologySpread's and
InterPodAffinity's, after the plugins' own PreScore for that replica (InterPodAffinity's
carried from replica to replica once it has scored)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import add, itemgetter
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.interpodaffinity.plugin import PRE_SCORE_STATE_KEY as AFFINITY_PRE_SCORE
from kschedlib.plugins.interpodaffinity.scoring import PreScoreState as AffinityPreScoreState
from kschedlib.plugins.interpodaffinity.scoring import process_existing_pod
from kschedlib.plugins.interpodaffinity.terms import (
    TopologyCounts,
    merge_weighted_terms,
    namespace_labels,
)
from kschedlib.whatif.capacity.common import label_column


class LabelColumns:
    """Each node's value of a label, one list per key in node-list order (None: absent)."""

    def __init__(self, nodes: list[Any]) -> None:
        self.nodes = nodes
        self.cols: dict[str, list[str | None]] = {}

    def get(self, key: str) -> list[str | None]:
        col = self.cols.get(key)
        if col is None:
            col = self.cols[key] = label_column(self.nodes, key)
        return col


def window_scores(
    pl: Any, ext: Any, state: CycleState, pod: Pod, window: list[Any], feasible: Sequence[int],
    labels: LabelColumns,
) -> list[int] | None:
    """A plugin's Score and NormalizeScore on the window, as the framework runs them (its
    batch ``score_nodes`` when it has one); None to take the ordinary path (which reports
    an error or an invalid score)."""
    try:
        vals: list[int] | None = None
        st: Any = None
        batch = getattr(pl, "score_nodes", None)
        if batch is not None:
            vals, st = batch(state, pod, window)
        elif pl.name == "InterPodAffinity":
            vals = _affinity_scores(state, feasible, labels)
        if vals is None:
            fn = pl.score
            vals = []
            for ni in window:
                sc, st = fn(state, pod, ni)
                if st is not None and st.code != Code.Success:
                    return None
                vals.append(sc)
        if st is not None and st.code != Code.Success:
            return None
        if ext is not None:
            fast = getattr(ext, "normalize_score_values", None)
            if fast is not None:
                st = fast(state, pod, vals)
            elif pl.name == "InterPodAffinity" and _affinity_normalize(state, vals):
                st = None
            else:
                scores = [NodeScore(ni.name, v) for ni, v in zip(window, vals, strict=True)]
                st = ext.normalize_score(state, pod, scores)
                vals = [ns.score for ns in scores]
            if st is not None and st.code != Code.Success:
                return None
    except Exception:
        return None
    if vals and (min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE):
        return None
    return list(vals)


def _affinity_scores(
    state: CycleState, feasible: Sequence[int], labels: LabelColumns
) -> list[int] | None:
    """InterPodAffinity's Score on the window's positions: per node, the summed weights of
    its topology pairs (plugin.score, a dictionary lookup per key, done per key at C speed)."""
    s = state.get(AFFINITY_PRE_SCORE)
    if type(s) is not AffinityPreScoreState:
        return None
    pick = itemgetter(*feasible) if len(feasible) > 1 else lambda col: (col[feasible[0]],)
    out: list[int] = [0] * len(feasible)
    for key, values in s.topology_score.items():
        # A node without the key gives None, never a key of ``values``.
        out = list(map(add, out, map(values.get, pick(labels.get(key)), repeat(0))))
    return out


def _affinity_normalize(state: CycleState, vals: list[int]) -> bool:
    """InterPodAffinity's NormalizeScore in place (scoring.normalize_scores on plain
    scores): min-max scaled to [0, 100], the same float operations; False when its state
    is not the one expected."""
    s = state.get(AFFINITY_PRE_SCORE)
    if type(s) is not AffinityPreScoreState:
        return False
    if not s.topology_score or not vals:
        return True
    lo, hi = min(vals), max(vals)
    diff = hi - lo
    if diff > 0:
        table = {v: int(float(MAX_NODE_SCORE) * ((v - lo) / diff)) for v in set(vals)}
        vals[:] = map(table.__getitem__, vals)
    else:
        vals[:] = [0] * len(vals)
    return True


class AffinityScores:
    """InterPodAffinity's PreScore state carried from replica to replica. The next
    replica's PreScore would sum the weights of the same existing pods plus the replicas
    placed since (its terms and theirs match by labels and namespace, which replicas
    share): once a PreScore has scored, each placed replica adds what
    ``process_existing_pod`` adds for it, and the plugin's PreScore is not run again. (Once
    it has scored it cannot skip again: its node list and pairs only grow.)"""

    def __init__(self, plugin: Any, objects: Any) -> None:
        self.plugin = plugin
        self.objects = objects
        self.scores: TopologyCounts | None = None
        self.terms: tuple[Any, ...] = ()

    def start(self, state: CycleState, pod: Pod) -> None:
        """Take the scores the plugin's PreScore just wrote for ``pod``."""
        s = state.get(AFFINITY_PRE_SCORE)
        if type(s) is not AffinityPreScoreState:
            return
        self.start_empty(pod)
        self.scores = {key: dict(values) for key, values in s.topology_score.items()}

    def start_empty(self, pod: Pod) -> None:
        """The plugin's PreScore skipped for ``pod`` because no pair was scored (no pod
        matches yet): carry an empty state (the next PreScore skips while it stays empty)."""
        pi = PodInfo.of(pod)
        self.terms = (
            merge_weighted_terms(pi.preferred_affinity_terms, self.objects),
            merge_weighted_terms(pi.preferred_anti_affinity_terms, self.objects),
            namespace_labels(self.objects, pod.metadata.namespace),
            self.plugin.args.hard_pod_affinity_weight,
        )
        self.scores = {}

    def write(self, state: CycleState) -> None:
        """What the plugin's PreScore would write for the next replica."""
        assert self.scores is not None
        state.write(AFFINITY_PRE_SCORE, AffinityPreScoreState(self.scores))

    def add(self, pod: Pod, pod_info: PodInfo, node: Node) -> None:
        """A replica was placed on ``node``."""
        assert self.scores is not None
        pref_aff, pref_anti, ns_labels, hard = self.terms
        process_existing_pod(
            self.scores, pod, pref_aff, pref_anti, ns_labels, hard, pod_info, node
        )
