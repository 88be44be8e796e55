"""The runtime's Score extension points (PreScore, Score, NormalizeScore, weights), a part
of the Framework (runtime.py) kept apart as kube-scheduler's framework.go groups them."""

from __future__ import annotations

from collections.abc import Sequence
from operator import add
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.reuse import (
    ResultReuse,
    ScoreBreakdown,
    _out_of_range,
    _wrong_count,
    column,
)
from kschedlib.framework.status import Code, Status, from_exception
from kschedlib.framework.status import is_success as _ok
from kschedlib.framework.types import NodeInfo


@attrs.define(slots=True)
class PluginScore:
    name: str
    score: int


@attrs.define(slots=True)
class NodePluginScores:
    """A node's weighted score per plugin and their total."""

    name: str
    scores: list[PluginScore]
    total_score: int


class ScorePoints(ResultReuse):
    """PreScore, Score and NormalizeScore of the Framework (mixed into runtime.Framework)."""

    # Set by Framework.__init__.
    pre_score_plugins: list[Any]
    score_plugins: list[Any]

    # --- Score --------------------------------------------------------------------------

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        skip: set[str] = set()
        try:
            for pl in self.pre_score_plugins:
                try:
                    st = pl.pre_score(state, pod, nodes)
                except Exception as exc:
                    st = from_exception(exc, pl.name)
                if st is not None and st.code == Code.Skip:
                    skip.add(pl.name)
                    continue
                if not _ok(st):
                    assert st is not None
                    return Status.error(
                        f'running PreScore plugin "{pl.name}": {st.message()}', pl.name
                    )
            return None
        finally:
            state.skip_score_plugins = skip

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: ScoreBreakdown | None = None,
        *,
        detailed: bool = True,
    ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, NormalizeScore, then weights. With ``detailed`` each node carries its
        per-plugin weighted scores; ``breakdown`` also records raw and normalized ones."""
        totals, names, weighted_by_plugin, st = self._score(state, pod, nodes, breakdown)
        if st is not None:
            return [], st
        if detailed:
            return [
                NodePluginScores(
                    ni.name,
                    [PluginScore(nm, w[i]) for nm, w in zip(names, weighted_by_plugin, strict=True)],
                    totals[i],
                )
                for i, ni in enumerate(nodes)
            ], None
        return [NodePluginScores(ni.name, [], totals[i]) for i, ni in enumerate(nodes)], None

    def run_score_plugins_totals(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: ScoreBreakdown | None = None,
        *,
        relative: bool = False,
    ) -> tuple[list[int], Status | None]:
        """The total weighted score of each node (in ``nodes`` order), as run_score_plugins
        computes them, without building per-node result objects; ``breakdown`` records the
        per-plugin scores as run_score_plugins does. ``relative``: the totals may all fall
        short by one common amount (a score equal on every node left out), which ranks the
        nodes exactly as the totals do; ``breakdown.offset`` then records the amount."""
        if self.node_local_cache is not None and len(nodes) > 1:
            fast = self._score_totals_folded(state, pod, nodes, breakdown, relative)
            if fast is not None:
                return fast
        totals, _, _, st = self._score(state, pod, nodes, breakdown)
        return totals, st

    def _score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: ScoreBreakdown | None,
    ) -> tuple[list[int], list[str], list[list[int]], Status | None]:
        skip = state.skip_score_plugins
        plugins = [pl for pl in self.score_plugins if pl.name not in skip]
        n = len(nodes)
        totals = [0] * n
        weighted_by_plugin: list[list[int]] = []
        stored: dict[str, list[int]] = {}
        if self.node_local_cache is not None and n > 1:
            stored, st = self._node_local_raw_scores(state, pod, nodes, plugins)
            if st is not None:
                return [], [], [], st
        for pl in plugins:
            name = pl.name
            try:
                out = self._score_one_plugin(pl, state, pod, nodes, breakdown, stored.get(name))
            except Exception as exc:  # a raising Score/NormalizeScore: the plugin's error
                out = from_exception(exc, name)
            if isinstance(out, Status):
                return [], [], [], out
            vals = out
            bad = _out_of_range(name, vals)
            if bad is not None:
                return [], [], [], bad
            w = self.score_weights[name]
            weighted = vals if w == 1 else [v * w for v in vals]
            if len(weighted) != n:
                return [], [], [], _wrong_count(name, len(weighted), n)
            totals = list(map(add, totals, weighted))
            weighted_by_plugin.append(weighted)
        if breakdown is not None:
            breakdown.plugins = tuple([pl.name for pl in plugins])
            breakdown.weights = {pl.name: self.score_weights[pl.name] for pl in plugins}
        return totals, [pl.name for pl in plugins], weighted_by_plugin, None

    def _score_one_plugin(
        self,
        pl: Any,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: ScoreBreakdown | None,
        stored: list[int] | None = None,
    ) -> list[int] | Status:
        """One plugin's Score (unless ``stored`` has its raw scores) and NormalizeScore over
        ``nodes``: its scores, or the Error status the cycle fails with (a raising plugin
        counts as its error status)."""
        name = pl.name
        vals: list[int]
        st: Status | None
        try:
            batch = getattr(pl, "score_nodes", None)
            if stored is not None:
                vals, st = stored, None
            elif batch is not None:
                vals, st = batch(state, pod, nodes)
            else:
                fn = pl.score
                vals = []
                append = vals.append
                st = None
                for ni in nodes:
                    score, st = fn(state, pod, ni)
                    if st is not None and st.code != Code.Success:
                        break
                    append(score)
        except Exception as exc:
            st = from_exception(exc, name)
        if st is not None and st.code != Code.Success:
            return Status.error(
                f'running Score plugins: plugin "{name}" failed with: {st.message()}', name
            )
        raw_col: Sequence[int] = ()
        if breakdown is not None:  # tuples: explanations keep them (immutable, GC-untracked)
            raw_col = breakdown.raw[name] = column(vals)
        try:
            ext = pl.score_extensions()
            if ext is not None:
                fast = getattr(ext, "normalize_score_values", None)
                if fast is not None:
                    st = fast(state, pod, vals)
                else:
                    scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, vals, strict=True)]
                    st = ext.normalize_score(state, pod, scores)
                    vals = [ns.score for ns in scores]
        except Exception as exc:
            st = from_exception(exc, name)
        if not _ok(st):
            assert st is not None
            return Status.error(
                f'running Normalize on Score plugins: plugin "{name}" failed with: '
                f"{st.message()}",
                name,
            )
        if breakdown is not None:  # without NormalizeScore the raw column serves for both
            if ext is not None:
                normalized = column(vals)
                if normalized is not raw_col and normalized != raw_col:
                    raw_col = normalized
            breakdown.normalized[name] = raw_col
        return vals
