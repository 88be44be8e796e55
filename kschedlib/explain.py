"""Explanations of scheduling attempts and of pending pods (the Scheduler's explain room)."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from heapq import nlargest, nsmallest
from itertools import compress, repeat
from operator import add, eq, gt, mul
from struct import unpack_from
from typing import Any, TypeVar

from kschedlib.api.pod import Pod
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.reuse import ScoreBreakdown, gens_from_log, is_uniform_column
from kschedlib.framework.runtime import Framework
from kschedlib.plugins.gangscheduling import MSG_WAITING_AT_PERMIT
from kschedlib.results import (
    FEASIBLE_SLOT,
    LAZY,
    REJECTED_SLOT,
    SCORES_SLOT,
    Deferred,
    Explanation,
    LazyScores,
    NodeScoreDetail,
    NodeVerdict,
    PluginScoreDetail,
    new_explanation,
    register_lazy_builder,
    register_stored_builder,
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


_Static = tuple[
    tuple[str, ...],
    tuple[tuple[str, int], ...],
    tuple[tuple[str, Sequence[int]], ...],
    tuple[tuple[str, Sequence[int]], ...],
    tuple[str, ...],
]
"""(plugins, weights, raw, normalized, row plugins): the first five parts of a _Parts."""


def _static(b: ScoreBreakdown) -> _Static:
    """``b``'s plugins, weights, per-plugin columns and row plugins as one tuple, shared with
    the earlier attempts that hold the very same column objects (the shared columns of one
    score on every node: explanations of many pods then keep one reference)."""
    raw, normalized = b.raw, b.normalized
    key = (
        "static", *b.plugins, "", *b.weights.values(), "", *raw, *map(id, raw.values()), "",
        *normalized, *map(id, normalized.values()), "", *b.row_plugins,
    )
    got = _SHARED.get(key)
    if got is not None:  # (it holds its columns, so an id it was keyed by is theirs)
        return got  # type: ignore[no-any-return]
    static = (
        _shared(tuple(b.plugins)), _shared(tuple(b.weights.items())), tuple(raw.items()),
        tuple(normalized.items()), _shared(tuple(b.row_plugins)),
    )
    if all(map(is_uniform_column, raw.values())) and all(
        map(is_uniform_column, normalized.values())
    ):  # (other columns are new at each attempt: not kept here)
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        _SHARED[key] = static
    return static


def _parts(b: ScoreBreakdown) -> _Parts:
    return (*_static(b), tuple(b.rows), b.window_gens())


_Kept = dict[int, tuple[str, tuple[int, ...]]]


def _window_names(
    window: tuple[str, ...] | None, start: int, count: int, gens: bytes, kept: _Kept | None
) -> tuple[str, ...]:
    """The names of ``count`` scored nodes: the run of the node list's names ``window`` from
    ``start`` (round-robin), else each node's entry in ``kept`` by its generation."""
    if window is not None:
        end = start + count
        n = len(window)
        return window[start:end] if end <= n else window[start:] + window[: end - n]
    assert kept is not None
    return tuple([kept[g][0] for g in array("q", gens)])


def _result_names(result: ScheduleResult) -> tuple[str, ...]:
    """The feasible nodes' names, in scoring order, from what the cycle recorded."""
    b = result.breakdown
    if b is not None:
        if b.window is not None:
            return _window_names(b.window, b.start, b.count, b"", None)
        if b.kept is not None and b.gens:
            return _window_names(None, 0, len(b.gens) // 8, b.gens, b.kept)
        if b.names is not None:
            return b.names
    return tuple([ni.name for ni in result.feasible])


def _sub_parts(p: _Parts, kept: _Kept | None, idx: Sequence[int]) -> _Parts:
    """The parts of the nodes at ``idx`` only, in that order (rows read, no kept table)."""
    plugins, weights, raw, normalized, row_plugins, rows, gens = p
    if kept is not None:
        rows = tuple([kept[unpack_from("q", gens, 8 * i)[0]][1] for i in idx])
    else:
        rows = tuple([rows[i] for i in idx]) if rows else ()
    return (
        plugins, weights,
        _shared(tuple([(n, tuple([col[i] for i in idx])) for n, col in raw])),
        _shared(tuple([(n, tuple([col[i] for i in idx])) for n, col in normalized])),
        row_plugins, _shared(rows), b"",
    )


# Lazy records (plain tuples of immutable things, see results.LAZY), built when read with
# the Explanation's ``_kept`` (the folded score path's table); the feasible names and the
# scores of an explanation are built from the same record:
#   (LAZY, "rec", window, start, count, static, gens, log, length, at, selected, gen_at):
#       an attempt on the folded score path as the cycle left it (``gens`` the nodes'
#       generations as bytes or, with a ``log``, the marks' base of (base, log, length), see
#       gens_from_log; ``gen_at`` the selected node's generation; the totals are the
#       weighted sums of the normalized scores, as the cycle added them up);
#   (LAZY, "sel", window, start, count, gens, name, total, static, row, selected): its
#       selected node's scores alone (``static`` with one-value columns, or its index in
#       _ONE_NODE_STATICS; ``row`` its row).


def _build_lazy(field: str, rec: tuple[Any, ...], kept: _Kept | None) -> Any:
    if field == "rejected":  # (an attempt recorded so rejected no node)
        return {}
    if rec[1] == "sel":
        _, _, window, start, count, gens, name, total, static, row, selected = rec
        if type(static) is int:
            static = _ONE_NODE_STATICS[static]
        if field == "feasible":
            return tuple(sorted(_window_names(window, start, count, gens, kept)))
        if name is None:
            return ScoreView((), (), 0, (*static, (), b""), None, None, None, selected)
        return ScoreView(
            (name,), (total,), 0, (*static, (row,), b""), None, None, None, selected
        )
    _, _, window, start, count, static, gens, log, length, at, selected, _ = rec
    names = _window_names(window, start, count, b"", kept) if window is not None else (
        _window_names(None, 0, count, gens, kept)
    )
    if field == "feasible":
        return tuple(sorted(names))
    if log is not None:
        gens = gens_from_log((gens, log, length), start, len(gens) // 8, count)
    view = ScoreView(names, None, 0, (*static, (), gens), kept, None, None, selected)
    view.at = at
    return view


register_lazy_builder(_build_lazy)


def _is_record(value: object, kind: str) -> bool:
    return type(value) is tuple and len(value) > 1 and value[0] == LAZY and value[1] == kind


_ONE_NODE: dict[int, tuple[_Static, tuple[Any, ...] | int, int, tuple[int, ...]]] = {}
"""id(static) -> (static, its one-node static, the columns' weighted sum, the row plugins'
weights), for statics whose columns each hold one score on every node. The one-node static
is an index in _ONE_NODE_STATICS when there was room."""

_ONE_NODE_STATICS: list[tuple[Any, ...]] = []
"""One-node statics that "sel" records name by index: a record then holds nothing the garbage
collector follows (a shared nested tuple stays tracked once old, and so would every record
holding it). Distinct values only, at most 4096 (beyond, records hold the tuple)."""
_ONE_NODE_INDEX: dict[tuple[Any, ...], int] = {}


def _one_node_ref(sub: tuple[Any, ...]) -> tuple[Any, ...] | int:
    """``sub``'s index in _ONE_NODE_STATICS (added if new and there is room), else ``sub``."""
    i = _ONE_NODE_INDEX.get(sub)
    if i is None:
        if len(_ONE_NODE_STATICS) >= 4096:
            return sub
        i = _ONE_NODE_INDEX[sub] = len(_ONE_NODE_STATICS)
        _ONE_NODE_STATICS.append(sub)
    return i


def _selected_record(rec: tuple[Any, ...], kept: _Kept) -> tuple[Any, ...]:
    """The "sel" record of a "rec" record (the selected node's scores, the feasible names)."""
    _, _, window, start, count, static, gens, log, length, at, selected, gen_at = rec
    if at is None and selected is not None:
        names = _window_names(window, start, count, gens if window is None else b"", kept)
        at = names.index(selected) if selected in names else None
    plugins, weights, raw, normalized, row_plugins = static
    names_gens = b"" if window is not None else gens
    sub: tuple[Any, ...]
    if at is None:
        sub = _shared((
            plugins, weights, tuple([(p, ()) for p, _ in raw]),
            tuple([(p, ()) for p, _ in normalized]), row_plugins,
        ))
        return (LAZY, "sel", window, start, count, names_gens, None, 0, sub, (), selected)
    if gen_at is None:
        if log is not None:
            gens = gens_from_log((gens, log, length), start, len(gens) // 8, count)
        gen_at = unpack_from("q", gens, 8 * at)[0]
    name, row = kept[gen_at]
    one = _ONE_NODE.get(id(static))
    if one is not None and one[0] is static:  # every column holds one score on every node
        _, ref, base, row_weights = one
        total = base + sum(map(mul, row, row_weights))
        return (LAZY, "sel", window, start, count, names_gens, name, total, ref, row, selected)
    sub = _shared((
        plugins, weights, tuple([(p, (col[at],)) for p, col in raw]),
        tuple([(p, (col[at],)) for p, col in normalized]), row_plugins,
    ))
    by_plugin = dict(normalized)
    total = 0
    for p, w in weights:  # (in ``plugins`` order) as ScoreView adds them up
        col = by_plugin.get(p)
        total += w * (col[at] if col is not None else row[row_plugins.index(p)])
    if all(map(is_uniform_column, by_plugin.values())) and all(
        is_uniform_column(col) for _, col in raw
    ):  # the same for every node of every attempt with these columns: kept for them
        w_of = dict(weights)
        base = sum(w_of[p] * col[0] for p, col in normalized)
        if len(_ONE_NODE) >= 256:
            _ONE_NODE.clear()
        _ONE_NODE[id(static)] = (
            static, _one_node_ref(sub), base, tuple([w_of[p] for p in row_plugins])
        )
    return (LAZY, "sel", window, start, count, names_gens, name, total, sub, row, selected)


def _breakdown(p: _Parts, kept: dict[int, tuple[str, tuple[int, ...]]] | None) -> ScoreBreakdown:
    plugins, weights, raw, normalized, row_plugins, rows, gens = p
    return ScoreBreakdown(
        list(plugins), dict(weights), dict(raw), dict(normalized), list(row_plugins),
        rows, gens=gens, kept=kept,
    )


class ScoreView(LazyScores, Deferred):
    """Node name -> NodeScoreDetail of an attempt, rendered on first use from what the cycle
    left: immutable things (tuples, bytes, the folded score path's table, whose entries never
    change). Recording an attempt costs a few references and leaves the garbage collector
    little to look at. ``offset`` is added to every total (relative totals; totals None: the
    weighted sums of the normalized scores, added up when read); the folded plugins' rows
    are read from ``kept`` by generation; ``top``: only the best nodes (ties by
    name, ``selected`` among them) are shown. As a Deferred (an explanation's ``feasible``): the
    sorted node names."""

    __slots__ = (
        "names", "totals", "offset", "parts", "kept", "extenders", "top", "selected", "at",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        totals: Sequence[int] | None,
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
                names = _result_names(result)
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
            kept = b.kept
            if kept is not None:
                rows: Sequence[tuple[int, ...]] = tuple([kept[b.gen_at(i)][1] for i in idx])
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

    def _resolved(self) -> tuple[ScoreBreakdown | None, Sequence[int]]:
        """The breakdown with its rows read, and the totals (less ``offset``)."""
        b = None if self.parts is None else _breakdown(self.parts, self.kept).resolved()
        totals = self.totals
        if totals is None:
            assert b is not None
            totals = self.totals = _summed(b, len(self.names))
        return b, totals

    def all_totals(self) -> Sequence[int]:
        """Every node's total less ``offset``, in scoring order."""
        totals = self.totals
        return totals if totals is not None else self._resolved()[1]

    def trimmed(self, top: int) -> ScoreView:
        """A view of the ``top`` best nodes only (ties by name; ``selected`` always kept),
        keeping only their inputs."""
        keep = top if self.top is None else min(top, self.top)
        if self.top is None and len(self) <= keep:
            return self
        names = self.names
        return self._subset(_top_score_indices(names, self.all_totals(), keep, self.selected))

    def selected_only(self) -> ScoreView:
        """A view of the selected node alone."""
        sel, at = self.selected, self.at
        if at is None and sel is not None and sel in self.names:
            at = self.names.index(sel)
        return self._subset([] if at is None else [at])

    def _subset(self, idx: list[int]) -> ScoreView:
        """The nodes at ``idx`` only, in that order, with their inputs."""
        names = self.node_names()
        totals = self.all_totals()
        p = self.parts
        sub = None if p is None else _sub_parts(p, self.kept, idx)
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
        extenders = self.extenders
        b, totals = self._resolved()
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
        extenders = self.extenders
        b, totals = self._resolved()
        if off:
            totals = [t + off for t in totals]
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


def _summed(b: ScoreBreakdown, n: int) -> tuple[int, ...]:
    """Each of the ``n`` nodes' weighted sum of its normalized scores (its total)."""
    totals = [0] * n
    for p in b.plugins:
        w = b.weights[p]
        col = b.normalized.get(p)
        if col is None:
            k = b.row_plugins.index(p)
            col = [r[k] for r in b.rows]
        if w == 1:
            totals = list(map(add, totals, col))
        elif w:
            totals = [t + w * v for t, v in zip(totals, col, strict=True)]
    return tuple(totals)


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
        kept = None
        if result is not None:
            selected = result.suggested_host or None
            fast = result.nominated_fast_path
            # References to what the cycle produced (immutable); the sorted feasible names and
            # the per-node breakdown are built when read.
            top = self._explain_top_nodes
            b = result.breakdown
            totals = result.totals
            view: ScoreView | None = None
            if top is None and b is not None and totals is not None and b.kept is not None:
                # The folded score path's references, in one plain tuple (nothing per node is
                # read: the names come from the node list's names or from ``kept``).
                at = b.at
                base, log, length = b.gens_log or (b.gens, None, 0)
                rec = (
                    LAZY, "rec", b.window, b.start, len(totals), _static(b), base, log, length,
                    at, selected, None if at is None else b.gen_at(at),
                )
                kept = b.kept
                scores = rec  # type: ignore[assignment]
                feasible = rec  # type: ignore[assignment]
                if not rejected:  # (built when read: no dict kept per attempt)
                    rejected = rec  # type: ignore[assignment]
            elif top is not None:
                # A few nodes' scores: picked now, while the cycle's nodes are in the CPU's
                # caches (the names of the nodes tied at the top are compared); the rest goes.
                names = _result_names(result)
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
            elif top is not None or b is not None and b.kept is not None and totals is not None:
                pass  # (set above)
            elif len(result.feasible) == 1:
                feasible = (result.feasible[0].name,)
            elif result.feasible:
                names = tuple([ni.name for ni in result.feasible])
                feasible = _Sorted(names)
        batch = self._batch
        key = pod.key
        fields: tuple[Any, ...] = (
            key, fwk.profile_name, pre, rejected, feasible, scores, selected, fast,
            d.post_filter_msg, batch.outcome if batch else None,
            (batch.hint or None) if batch else None, kept,
        )
        keys = self._explain_keys
        exp: Explanation
        if kept is None or keys is not None and key in keys:
            exp = new_explanation(*fields)
        else:
            # The folded score path: the fields and the record as one plain tuple (no
            # Explanation object until read; the table and SchedulingResult.explanation
            # build it then, see _from_stored).
            exp = (  # type: ignore[assignment]
                FIELDS, key, fields[1], pre, None if fields[3] is rec else rejected,
                fields[8], fast, fields[9], fields[10], kept, *rec[2:],
            )
        self.explanations[key] = exp
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
            stored: dict[str, Any] = self.explanations  # (as stored: summaries not built)
            exp = dict.get(stored, old)
            if type(exp) is tuple:  # (as _explain stored it: summarised; else a summary)
                if exp[0] == FIELDS:
                    stored[old] = _summary_of_stored(exp)
            elif exp is not None:
                stored[old] = _summary(exp, self._explain_top_nodes)

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
    got = _summary(exp, top)
    return _from_stored(got) if isinstance(got, tuple) else got


def _summary(exp: Explanation, top: int | None) -> Explanation | tuple[Any, ...]:
    """What :func:`summarised` gives, on the folded score path as the plain tuple of
    ``new_explanation``'s arguments (see results.ExplanationTable)."""
    raw = SCORES_SLOT.raw(exp)
    if top is None and _is_record(raw, "rec"):  # the selected node's scores, as plain data
        rejected = REJECTED_SLOT.raw(exp)
        if FEASIBLE_SLOT.raw(exp) is raw:  # (as recorded: a SUMMARY tuple)
            return _summary_of_stored((
                FIELDS, exp.pod, exp.profile, exp.pre_filter,
                None if rejected is raw else rejected, exp.post_filter_message,
                exp.nominated_fast_path, exp.batch, exp.batch_hint, exp._kept, *raw[2:],
            ))
        kept = exp._kept
        record = _selected_record(raw, kept)
        return (
            exp.pod, exp.profile, exp.pre_filter, record if rejected is raw else rejected,
            FEASIBLE_SLOT.raw(exp), record, exp.selected, exp.nominated_fast_path,
            exp.post_filter_message, exp.batch, exp.batch_hint, None,
        )
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


FIELDS = "\x00fields"
SUMMARY = "\x00summary"
# What _explain stores for an attempt on the folded score path, and its summary, each one
# plain tuple (no pod key starts with NUL, so these are told from new_explanation's
# arguments):
#   (FIELDS, pod, profile, pre_filter, rejected or None, post_filter_message, fast, batch,
#    batch_hint, kept, *rec[2:]): its "rec" record (LAZY, "rec", *t[10:]) is its rejected
#    (when None), feasible and scores;
#   (SUMMARY, ..., the same up to kept (None unless names are read from it), *sel[2:]): its
#    "sel" record (LAZY, "sel", *t[10:]) likewise.


def _from_stored(t: tuple[Any, ...]) -> Explanation:
    """The Explanation a stored tuple stands for (see FIELDS)."""
    mark = t[0]
    if mark in (FIELDS, SUMMARY):
        rec = (LAZY, "rec" if mark == FIELDS else "sel", *t[10:])
        rejected = t[4]
        return new_explanation(
            t[1], t[2], t[3], rec if rejected is None else rejected, rec, rec, rec[-2 if mark
            == FIELDS else -1], t[6], t[5], t[7], t[8], t[9],
        )
    return new_explanation(*t)


register_stored_builder(_from_stored)


def _summary_of_stored(t: tuple[Any, ...]) -> tuple[Any, ...]:
    """The SUMMARY tuple of a FIELDS tuple (the selected node's scores)."""
    kept = t[9]
    sel = _selected_record((LAZY, "rec", *t[10:]), kept)
    return (
        SUMMARY, t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8],
        kept if sel[2] is None else None, *sel[2:],
    )


def score_rows(exp: Explanation) -> list[ScoreRow]:
    """``exp.scores`` as (node, total, [(plugin, raw, normalized, weight)], extenders) tuples,
    in its order, without building the NodeScoreDetail objects when they are not built yet."""
    scores = exp.scores  # (a lazy record is built into a ScoreView, without its details)
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
    if type(raw) is tuple and raw and raw[0] == LAZY:
        return int(raw[4])
    if isinstance(raw, ScoreView):
        return len(raw.node_names())
    if isinstance(raw, _Sorted):
        return len(raw.names)
    return len(raw)
