"""Explanations of scheduling attempts and of pending pods (the Scheduler's explain room)."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from heapq import nlargest, nsmallest
from itertools import compress, repeat
from operator import eq, gt
from struct import unpack_from
from typing import Any, TypeVar

from kschedlib.api.pod import Pod
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.reuse import ScoreBreakdown
from kschedlib.framework.runtime import Framework
from kschedlib.plugins.gangscheduling import MSG_WAITING_AT_PERMIT
from kschedlib.results import (
    FEASIBLE_SLOT,
    Deferred,
    Explanation,
    LazyScores,
    NodeScoreDetail,
    NodeVerdict,
    PluginScoreDetail,
)
from kschedlib.schedule_one import ScheduleResult
from kschedlib.scheduler_base import SchedulerBase

ScoreRow = tuple[str, int, list[tuple[str, int, int, int]], dict[str, int]]
"""A node's scores as plain data: (node, total, [(plugin, raw, normalized, weight)],
extenders)."""


class _Sorted(Deferred):
    """The sorted names of the feasible nodes, built when read."""

    __slots__ = ("names",)

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names

    def build(self) -> tuple[str, ...]:
        return tuple(sorted(self.names))


_Parts = tuple[
    tuple[str, ...],
    tuple[tuple[str, int], ...],
    tuple[tuple[str, Sequence[int]], ...],
    tuple[tuple[str, Sequence[int]], ...],
    tuple[str, ...],
    Sequence[tuple[int, ...]],
    bytes,
]
"""A ScoreBreakdown as one tuple (plugins, weights, raw, normalized, row plugins, rows,
generations): nothing in it for the garbage collector to follow once it is untracked."""


_SHARED: dict[object, Any] = {}
"""Equal small tuples that many explanations keep, one object each (see _shared)."""
_T = TypeVar("_T", bound=tuple[Any, ...])


def _shared(t: _T) -> _T:
    """The kept tuple equal to ``t`` (``t`` itself the first time): explanations of many
    pods then keep references, not new tuples that the garbage collector counts."""
    got = _SHARED.get(t)
    if got is None:
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        got = _SHARED[t] = t
    return got


def _shared_items(cols: dict[str, Sequence[int]]) -> tuple[tuple[str, Sequence[int]], ...]:
    """``tuple(cols.items())``, shared with earlier breakdowns that hold the very same
    column objects (the folded score path shares the columns of one score everywhere)."""
    items = tuple(cols.items())
    key = ("cols", *map(id, cols.values()))
    got = _SHARED.get(key)
    if got is not None and len(got) == len(items) and all(
        a[0] == b[0] and a[1] is b[1] for a, b in zip(got, items, strict=True)
    ):
        return got  # type: ignore[no-any-return]
    if len(_SHARED) >= 4096:
        _SHARED.clear()
    _SHARED[key] = items
    return items


def _parts(b: ScoreBreakdown) -> _Parts:
    return (
        _shared(tuple(b.plugins)),
        _shared(tuple(b.weights.items())),
        _shared_items(b.raw),
        _shared_items(b.normalized),
        _shared(tuple(b.row_plugins)),
        tuple(b.rows), b.gens,
    )


def _breakdown(p: _Parts, kept: dict[int, tuple[str, tuple[int, ...]]] | None) -> ScoreBreakdown:
    plugins, weights, raw, normalized, row_plugins, rows, gens = p
    return ScoreBreakdown(
        list(plugins), dict(weights), dict(raw), dict(normalized), list(row_plugins),
        rows, 0, None, gens, kept,
    )


class ScoreView(LazyScores, Deferred):
    """Node name -> NodeScoreDetail of an attempt, rendered on first use from what the cycle
    left: immutable things (tuples, bytes, the folded score path's table, whose entries never
    change). Recording an attempt costs a few references and leaves the garbage collector
    little to look at. ``offset`` is added to every total (relative totals); the folded
    plugins' rows are read from ``kept`` by generation; ``top``: only the best nodes (ties by
    name, ``selected`` among them) are shown. As a Deferred (an explanation's ``feasible``): the
    sorted node names."""

    __slots__ = (
        "names", "totals", "offset", "parts", "kept", "extenders", "top", "selected", "at",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        totals: Sequence[int],
        offset: int,
        parts: _Parts | None,
        kept: dict[int, tuple[str, tuple[int, ...]]] | None,
        extenders: tuple[dict[str, int], ...] | None,
        top: int | None,
        selected: str | None,
    ) -> None:
        self._build = None
        self._data = None
        self.names, self.totals, self.offset = names, totals, offset
        self.parts, self.kept, self.extenders = parts, kept, extenders
        self.top, self.selected = top, selected
        self.at: int | None = None
        """The selected node's index, when known."""

    @classmethod
    def of(
        cls, result: ScheduleResult, top: int | None, names: tuple[str, ...] | None = None
    ) -> ScoreView | None:
        """The scores of ``result`` (None when nothing was scored); ``names``: the feasible
        nodes' names when the caller has them."""
        b = result.breakdown
        selected = result.suggested_host or None
        parts = None if b is None else _parts(b)
        kept = None if b is None else b.kept
        if result.totals is not None:
            if names is None:
                names = b.names if b is not None and b.names is not None else tuple(
                    [ni.name for ni in result.feasible]
                )
            offset = b.offset if b else 0
            view = cls(names, tuple(result.totals), offset, parts, kept, None, top, selected)
            if selected is not None and selected in names:  # found now, while at hand
                view.at = names.index(selected)
            return view
        if not result.scores:
            return None
        scores = result.scores
        return cls(
            tuple([nps.name for nps in scores]),
            tuple([nps.total_score for nps in scores]),
            0,
            parts,
            kept,
            tuple([{s.name: s.score for s in nps.scores} for nps in scores]),
            top,
            selected,
        )

    @classmethod
    def top_of(
        cls, result: ScheduleResult, top: int, names: tuple[str, ...]
    ) -> ScoreView | None:
        """The scores of ``result``'s ``top`` best nodes only (as ``of(...).trimmed(top)``),
        picked straight from the cycle's columns; ``names``: the feasible nodes' names."""
        totals = result.totals
        b = result.breakdown
        if totals is None:
            view = cls.of(result, top, names)
            return None if view is None else view.trimmed(top)
        selected = result.suggested_host or None
        idx = _top_score_indices(names, totals, top, selected)
        parts: _Parts | None = None
        if b is not None:
            kept, gens = b.kept, b.gens
            if kept is not None:
                rows: Sequence[tuple[int, ...]] = tuple(
                    [kept[unpack_from("q", gens, 8 * i)[0]][1] for i in idx]
                )
            else:
                rows = tuple([b.rows[i] for i in idx]) if b.rows else ()
            parts = (
                _shared(tuple(b.plugins)), _shared(tuple(b.weights.items())),
                _shared(tuple([(n, tuple([col[i] for i in idx])) for n, col in b.raw.items()])),
                _shared(tuple([
                    (n, tuple([col[i] for i in idx])) for n, col in b.normalized.items()
                ])),
                _shared(tuple(b.row_plugins)), _shared(tuple(rows)), b"",
            )
        return cls(
            tuple([names[i] for i in idx]), tuple([totals[i] for i in idx]),
            b.offset if b else 0, parts, None, None, None, selected,
        )

    def build(self) -> tuple[str, ...]:
        return tuple(sorted(self.node_names()))

    def _get(self) -> dict[str, NodeScoreDetail]:
        data = self._data
        if data is None:
            data = self._data = self.details()
        return data

    def __len__(self) -> int:
        if self.top is None and self._data is None:  # without building the breakdown
            return len(self.node_names())
        return len(self._get())

    def node_names(self) -> tuple[str, ...]:
        """Every scored node's name, in scoring order."""
        return self.names

    def trimmed(self, top: int) -> ScoreView:
        """A view of the ``top`` best nodes only (ties by name; ``selected`` always kept),
        keeping only their inputs."""
        keep = top if self.top is None else min(top, self.top)
        if self.top is None and len(self) <= keep:
            return self
        names = self.names
        return self._subset(_top_score_indices(names, self.totals, keep, self.selected))

    def selected_only(self) -> ScoreView:
        """A view of the selected node alone."""
        sel, at = self.selected, self.at
        if at is None and sel is not None and sel in self.names:
            at = self.names.index(sel)
        return self._subset([] if at is None else [at])

    def _subset(self, idx: list[int]) -> ScoreView:
        """The nodes at ``idx`` only, in that order, with their inputs."""
        names = self.node_names()
        totals = self.totals
        p = self.parts
        sub: _Parts | None = None
        if p is not None:
            plugins, weights, raw, normalized, row_plugins, rows, gens = p
            kept = self.kept
            if kept is not None:
                at = array("q", gens)
                rows = tuple([kept[at[i]][1] for i in idx])
            else:
                rows = tuple([rows[i] for i in idx]) if rows else ()
            sub = (
                plugins, weights,
                _shared(tuple([(n, tuple([col[i] for i in idx])) for n, col in raw])),
                _shared(tuple([(n, tuple([col[i] for i in idx])) for n, col in normalized])),
                row_plugins, _shared(rows), b"",
            )
        ext = self.extenders
        return ScoreView(
            tuple([names[i] for i in idx]),
            tuple([totals[i] for i in idx]),
            self.offset,
            sub,
            None,
            None if ext is None else tuple([ext[i] for i in idx]),
            None,
            self.selected,
        )

    def plain(self) -> list[ScoreRow]:
        """What :meth:`details` gives, as plain tuples (no objects built)."""
        if self.top is not None:
            return self.trimmed(self.top).plain()
        names, off = self.node_names(), self.offset
        totals = self.totals
        extenders = self.extenders
        b = None if self.parts is None else _breakdown(self.parts, self.kept).resolved()
        out: list[ScoreRow] = []
        for i in range(len(names)):
            plugins: list[tuple[str, int, int, int]] = []
            if b is not None:
                plugins = [
                    (p, b.raw_score(p, i), b.normalized_score(p, i), b.weights[p])
                    for p in b.plugins
                ]
            ext: dict[str, int] = {}
            if extenders is not None:
                seen = {p[0] for p in plugins}
                ext = {k: v for k, v in extenders[i].items() if k not in seen}
            out.append((names[i], totals[i] + off, plugins, ext))
        return out

    def details(self) -> dict[str, NodeScoreDetail]:
        """The per-node score breakdown, in node order (rank order once trimmed)."""
        if self.top is not None:
            return self.trimmed(self.top).details()
        names, off = self.node_names(), self.offset
        totals = self.totals
        if off:
            totals = [t + off for t in totals]
        extenders = self.extenders
        b = None if self.parts is None else _breakdown(self.parts, self.kept).resolved()
        scores: dict[str, NodeScoreDetail] = {}
        for i in range(len(names)):
            plugins: dict[str, PluginScoreDetail] = {}
            if b is not None:
                for p in b.plugins:
                    plugins[p] = PluginScoreDetail(
                        b.raw_score(p, i), b.normalized_score(p, i), b.weights[p]
                    )
            ext = {} if extenders is None else {
                k: v for k, v in extenders[i].items() if k not in plugins
            }
            scores[names[i]] = NodeScoreDetail(plugins, ext, totals[i])
        return scores


def _top_score_indices(
    names: Sequence[str], totals: Sequence[int], top: int, selected: str | None
) -> list[int]:
    """Indices of the ``top`` best-scored nodes (ties by name), ``selected`` always kept."""
    keep: list[int] = []
    n = len(names)
    if top > 0 and n:
        best = max(totals)
        threshold = best if totals.count(best) >= top else nlargest(min(top, n), totals)[-1]
        above = list(compress(range(n), map(gt, totals, repeat(threshold))))
        at = list(compress(range(n), map(eq, totals, repeat(threshold))))
        above.sort(key=lambda i: (-totals[i], names[i]))
        m = top - len(above)
        if len(at) <= m:
            pick = sorted(at, key=names.__getitem__)
        elif len(at) == n:  # every node tied (names are unique)
            pick = [names.index(nm) for nm in nsmallest(m, names)]
        else:  # the m smallest names among many ties
            at_names = [names[i] for i in at]
            pick = [at[at_names.index(nm)] for nm in nsmallest(m, at_names)]
        keep = above + pick
    if selected and all(names[i] != selected for i in keep):
        pick = [names.index(selected)] if selected in names else []
        keep = [*keep[: max(top - 1, 0)], *pick]
    return keep


class Explanations(SchedulerBase):
    """Per-node explanations of attempts, and why a pod is still pending."""

    def why_pending(self, pod: Pod | str) -> str | None:
        """Why a pending or waiting pod is not bound yet: the gating PreEnqueue plugin's
        message, the Permit wait (with the gang's progress), the last FailedScheduling
        message, ``no profile for schedulerName "x"`` for a pod no profile schedules, or why
        a held pod does not exist yet; None for an unknown or bound pod."""
        found = self._find_pod(pod)
        if found is None:
            key = pod.key if isinstance(pod, Pod) else pod
            for after, held in self._held.items():
                if held.key == key or held.uid == key:
                    return f"not created yet: created once {after} is bound (OrderedReady)"
            return None
        pb = self._waiting.get(found.uid)
        if pb is not None:
            return self._waiting_message(pb.fwk, pb.assumed)
        foreign = self._foreign.get(found.uid)
        if foreign is not None:
            return f'no profile for schedulerName "{foreign.spec.scheduler_name}"'
        current = self._pending.get(found.uid)
        if current is None:
            return None
        fwk = self.framework_for(current)
        if fwk is not None:
            st = fwk.run_pre_enqueue_plugins(current)
            if st is not None:
                return f"{st.plugin}: {st.message()}" + self._gang_detail(fwk, current)
        failed = self.events.last_failure.get(current.key)
        return failed if failed is not None else "waiting in the scheduling queue"

    def _gang_detail(self, fwk: Framework, pod: Pod) -> str:
        pl = fwk.plugins.get("GangScheduling")
        describe = getattr(pl, "describe", None)
        if describe is None or pod.spec.workload_ref is None:
            return ""
        text = describe(pod)
        return f" ({text})" if text else ""

    def _waiting_message(self, fwk: Framework, pod: Pod) -> str:
        pb = self._waiting.get(pod.uid)
        at = fwk.pre_bind_waiting_plugin(pb.state) if pb is not None else None
        if pb is not None and at is not None:
            return f"{at}: waiting for binding conditions for device on node {pb.host}"
        wp = fwk.get_waiting_pod(pod.uid)
        plugins = wp.get_pending_plugins() if wp is not None else []
        parts = []
        for name in plugins:
            pl = fwk.plugins.get(name)
            msg = MSG_WAITING_AT_PERMIT if name == "GangScheduling" else "waiting at Permit"
            parts.append(f"{name}: {msg}")
            if pl is not None and name == "GangScheduling":
                parts[-1] += self._gang_detail(fwk, pod)
        return "; ".join(parts) or "waiting at Permit"

    # ------------------------------------------------------------------ explanations

    def _explain(
        self, fwk: Framework, pod: Pod, d: Diagnosis, result: ScheduleResult | None
    ) -> Explanation:
        pre = None
        rejected: dict[str, NodeVerdict] = {}
        if d.pre_filter_msg:
            a = d.node_to_status.absent_nodes_status
            pre = NodeVerdict(a.plugin or None, a.code.name, a.reasons)
        else:
            for name, st in d.node_to_status.items():
                rejected[name] = NodeVerdict(st.plugin or None, st.code.name, st.reasons)
            absent = d.node_to_status.absent_nodes_status
            if absent.reasons:
                fit = {ni.name for ni in (result.feasible if result else [])}
                for ni in self.snapshot.list():
                    if ni.name not in rejected and ni.name not in fit:
                        rejected[ni.name] = NodeVerdict(None, absent.code.name, absent.reasons)
        scores: Mapping[str, NodeScoreDetail] = {}
        feasible: tuple[str, ...] | Deferred = ()
        selected = None
        fast = False
        if result is not None:
            selected = result.suggested_host or None
            fast = result.nominated_fast_path
            # References to what the cycle produced (immutable); the sorted feasible names and
            # the per-node breakdown are built when read.
            top = self._explain_top_nodes
            if top is not None:
                # A few nodes' scores: picked now, while the cycle's nodes are in the CPU's
                # caches (the names of the nodes tied at the top are compared); the rest goes.
                b = result.breakdown
                names = b.names if b is not None and b.names is not None else tuple(
                    [ni.name for ni in result.feasible]
                )
                view = ScoreView.top_of(result, top, names)
                if view is not None:
                    scores = view
                feasible = names if len(names) < 2 else _Sorted(names)
                view = None
            else:
                view = ScoreView.of(result, None)
            if view is not None:
                scores = view
                feasible = view  # its sorted names, when read
            elif top is not None:
                pass
            elif len(result.feasible) == 1:
                feasible = (result.feasible[0].name,)
            elif result.feasible:
                names = tuple([ni.name for ni in result.feasible])
                feasible = _Sorted(names)
        batch = self._batch
        exp = Explanation(
            pod.key, fwk.profile_name, pre, rejected, feasible, scores,  # type: ignore[arg-type]
            selected, fast, d.post_filter_msg,
            batch.outcome if batch else None,
            (batch.hint or None) if batch else None,
        )
        key = pod.key
        self.explanations[key] = exp
        keys = self._explain_keys
        if keys is not None and key in keys:
            self.explanation_history.setdefault(key, []).append(exp)
        elif self._explain_full_pods is not None:
            self._bound_explanations(key)
        return exp

    def _bound_explanations(self, key: str) -> None:
        """Keep every node's breakdown for the ``explain_full_pods`` pods explained last; the
        explanation of the pod explained before them is summarised (see :func:`summarised`)."""
        order = self._explain_order
        order.pop(key, None)
        order[key] = None
        limit = self._explain_full_pods
        assert limit is not None
        while len(order) > limit:
            old = next(iter(order))
            del order[old]
            exp = self.explanations.get(old)
            if exp is not None:
                self.explanations[old] = summarised(exp, self._explain_top_nodes)

    def explain(self, pod: Pod | str) -> Explanation | None:
        """The breakdown of the last attempt for a pod (by object or namespace/name). Beyond
        the ``explain_full_pods`` pods explained most recently, it keeps the selected node's
        scores only (the top nodes' with ``explain_top_nodes``); the rest is unchanged."""
        key = pod.key if isinstance(pod, Pod) else pod
        return self.explanations.get(key)

    def explain_attempts(self, pod: Pod | str) -> list[Explanation]:
        """Every recorded attempt of a pod named in ``explain=`` (else the last one, if any)."""
        key = pod.key if isinstance(pod, Pod) else pod
        history = self.explanation_history.get(key)
        if history is not None:
            return list(history)
        last = self.explanations.get(key)
        return [] if last is None else [last]


def summarised(exp: Explanation, top: int | None) -> Explanation:
    """``exp`` keeping the scores of its ``top`` best nodes only (the selected node among
    them, ties by name), or with ``top`` None of the selected node alone; every other field
    is unchanged."""
    scores = exp.scores
    view: Mapping[str, NodeScoreDetail]
    if isinstance(scores, ScoreView):
        view = scores.trimmed(top) if top is not None else scores.selected_only()
    elif top is not None and len(scores) > top:
        names = list(scores)
        keep = _top_score_indices(names, [s.total for s in scores.values()], top, exp.selected)
        view = {names[i]: scores[names[i]] for i in keep}
    elif top is None and len(scores) > 1:
        sel = exp.selected
        view = {sel: scores[sel]} if sel is not None and sel in scores else {}
    else:
        return exp
    if view is scores:
        return exp
    feasible = FEASIBLE_SLOT.raw(exp)
    if isinstance(feasible, ScoreView):  # the names only: the rest of the full view goes
        feasible = _Sorted(feasible.names)
    return Explanation(
        exp.pod, exp.profile, exp.pre_filter, exp.rejected, feasible, view,
        exp.selected, exp.nominated_fast_path, exp.post_filter_message, exp.batch,
        exp.batch_hint,
    )


def score_rows(exp: Explanation) -> list[ScoreRow]:
    """``exp.scores`` as (node, total, [(plugin, raw, normalized, weight)], extenders) tuples,
    in its order, without building the NodeScoreDetail objects when they are not built yet."""
    scores = exp.scores
    if isinstance(scores, ScoreView) and scores._data is None:
        return scores.plain()
    return [
        (n, d.total, [(p, v.raw, v.normalized, v.weight) for p, v in d.plugins.items()],
         dict(d.extenders))
        for n, d in scores.items()
    ]


def feasible_count(exp: Explanation) -> int:
    """``len(exp.feasible)`` without building the sorted names."""
    raw = FEASIBLE_SLOT.raw(exp)
    if isinstance(raw, ScoreView):
        return len(raw.node_names())
    if isinstance(raw, _Sorted):
        return len(raw.names)
    return len(raw)
