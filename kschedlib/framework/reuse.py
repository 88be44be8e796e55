"""Result reuse for the framework runtime: what a Framework stores per pod signature and per
NodeInfo generation so that unchanged inputs are not recomputed (each checked against
recomputation by the tests)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import add, attrgetter, itemgetter
from struct import Struct, unpack_from
from typing import Any

import attrs

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    SharedLister,
)
from kschedlib.framework.node_local_cache import (
    GenerationTable,
    NodeLocalCache,
    PositionMarks,
    local_fragment,
    node_local_fragments,
    pick_array,
)
from kschedlib.framework.status import Code, Status, from_exception
from kschedlib.framework.types import NodeInfo

_OFTEN_UNSIGNABLE = frozenset({"PodTopologySpread", "InterPodAffinity", "DynamicResources"})
"""Plugins whose SignPod declines many pods (asked first: the answer is then known sooner)."""


@attrs.define(slots=True)
class ScoreBreakdown:
    """Raw and normalized per-plugin scores (node order as given), for explanations.

    The plugins in ``row_plugins`` (node-local, without NormalizeScore: raw equals normalized)
    have their scores in ``rows`` instead, one tuple per node as the folded score path stores
    them, so recording an attempt copies no per-plugin column."""

    plugins: Sequence[str]
    weights: dict[str, int]
    raw: dict[str, Sequence[int]]
    normalized: dict[str, Sequence[int]]
    row_plugins: Sequence[str] = attrs.field(factory=list)
    rows: Sequence[tuple[int, ...]] = attrs.field(factory=list)
    offset: int = 0
    """A score common to every node that the cycle's totals leave out (relative totals)."""
    names: tuple[str, ...] | None = None
    """The nodes' names, when the cycle had them at hand (else see ``window`` and ``kept``)."""
    gens: bytes = b""
    """With ``kept``: each node's NodeInfo generation (``array("q")`` bytes); ``rows`` is then
    empty."""
    kept: dict[int, tuple[str, tuple[int, ...]]] | None = None
    """generation -> (node name, row of the ``row_plugins``' scores): the folded path's
    table, whose entries never change (see NodeLocalCache.generation_table)."""
    window: tuple[str, ...] | None = None
    """The names of the snapshot's node list when the nodes are its round-robin run from
    position ``start`` (an immutable tuple shared by every cycle over that list)."""
    start: int = 0
    at: int | None = None
    """The selected node's index, when the cycle knows it."""
    gens_log: tuple[bytes, bytearray, int] | None = None
    """On the marks path, instead of ``gens``: (base, log, length), the marks' generations
    at some earlier cycle and the first ``length`` bytes of their log of (position,
    generation) changes since (append-only: that prefix never changes); see window_gens."""
    live_gens: Any = None
    """The marks' generations by position during the cycle (``gen_at`` reads them)."""
    count: int = 0
    """How many nodes were scored (with ``gens_log``)."""

    def window_gens(self) -> bytes:
        """``gens``, from ``gens_log`` when the marks path recorded that instead."""
        if self.gens or self.gens_log is None:
            return self.gens
        return gens_from_log(self.gens_log, self.start, len(self.gens_log[0]) // 8, self.count)

    def gen_at(self, i: int) -> int:
        """The generation of the ``i``-th scored node (during the cycle, or from ``gens``)."""
        live = self.live_gens
        if live is not None:
            return int(live[(self.start + i) % len(live)])
        return int(unpack_from("q", self.window_gens(), 8 * i)[0])

    def resolved(self) -> ScoreBreakdown:
        """The same breakdown with ``rows`` read from ``kept``."""
        kept = self.kept
        if kept is None:
            return self
        rows = [kept[g][1] for g in array("q", self.gens)]
        return attrs.evolve(self, rows=rows, gens=b"", kept=None)

    def raw_score(self, plugin: str, i: int) -> int:
        col = self.raw.get(plugin)
        return col[i] if col is not None else self.rows[i][self.row_plugins.index(plugin)]

    def normalized_score(self, plugin: str, i: int) -> int:
        col = self.normalized.get(plugin)
        return col[i] if col is not None else self.rows[i][self.row_plugins.index(plugin)]


class ResultReuse:
    """The Framework's reuse of results that provably did not change: pod signatures,
    verdicts and scores stored per NodeInfo generation, the cycle's nominated-pod keys."""

    # Set by Framework.__init__.
    plugins: dict[str, Any]
    node_local_cache: NodeLocalCache | None
    nominator: Any
    score_weights: dict[str, int]
    pre_filter_plugins: list[Any]
    filter_plugins: list[Any]
    pre_score_plugins: list[Any]
    score_plugins: list[Any]
    _signers: list[tuple[str, Any]] | None = None
    """SignPod's plugins in the order asked (built on first use)."""

    # Defined by the Framework (runtime.py).

    def snapshot_shared_lister(self) -> SharedLister:
        raise NotImplementedError

    def _score_one_plugin(
        self,
        pl: Any,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: Any,
        stored: list[int] | None = None,
    ) -> list[int] | Status:
        raise NotImplementedError

    # --- SignPod ------------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> tuple[Any, ...] | None:
        """SignPod: the pod's signature from the fragments every enabled PreFilter, Filter,
        PreScore and Score plugin returns, or None (unsignable) when one of them does not sign
        it (no ``sign_pod`` method, or it returned None). Pods with equal signatures get equal
        results from these plugins on equal nodes."""
        signers = self._signers
        if signers is None:
            signers = self._signers = self._sign_order()
        if not signers:
            return None
        fragments: list[tuple[str, Any]] = [("Spec.SchedulerName", pod.spec.scheduler_name)]
        for name, sign in signers:
            fragment = sign(pod)
            if fragment is None:
                return None
            fragments.append((name, fragment))
        return tuple(fragments)

    def _sign_order(self) -> list[tuple[str, Any]]:
        """The (name, sign_pod) pairs SignPod asks, those that decline pods most often first
        (the order of the fragments is fixed per profile, so equal pods still sign equal);
        empty when a plugin cannot sign at all."""
        out: list[tuple[str, Any]] = []
        seen: set[str] = set()
        for point in (self.pre_filter_plugins, self.filter_plugins, self.pre_score_plugins,
                      self.score_plugins):
            for pl in point:
                name = pl.name
                if name in seen:
                    continue
                seen.add(name)
                sign = getattr(pl, "sign_pod", None)
                if sign is None:
                    return []
                out.append((name, sign))
        out.sort(key=lambda p: p[0] not in _OFTEN_UNSIGNABLE)
        return out

    def node_local_filter_table(
        self, pod: Pod, filters: Sequence[tuple[str, Any]]
    ) -> tuple[int, dict[int, Status | None] | None]:
        """How many leading ``filters`` are node-local and sign ``pod``, and the table of
        their stored combined verdicts per NodeInfo generation (None when there is nothing
        to store)."""
        cache = self.node_local_cache
        if cache is None or not filters:
            return 0, None
        plugins = self.plugins
        frags = node_local_fragments([plugins[name] for name, _ in filters], pod)
        if not frags:
            return 0, None
        return len(frags), cache.generation_table(("filter", tuple(frags)), self._live_generations)

    def nominated_filter_table(
        self, state: CycleState, pod: Pod, filters: Sequence[tuple[str, Any]]
    ) -> dict[int, Any] | None:
        """A table of two-pass verdicts (filters with the nominated pods, then without) per
        NodeInfo generation, each stored with the nominated pods it counted: only when every
        filter is node-local and signs ``pod`` and no PreFilter extension runs, so the verdict
        depends on nothing else. None otherwise."""
        cache = self.node_local_cache
        if cache is None or not filters:
            return None
        if self.runs_pre_filter_extensions(state):
            return None
        plugins = self.plugins
        frags = node_local_fragments([plugins[name] for name, _ in filters], pod)
        if len(frags) != len(filters):
            return None
        return cache.generation_table(("nominated", tuple(frags)), self._live_generations)

    def runs_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin running this cycle has AddPod/RemovePod extensions (whose
        state changes a stored verdict could not see)."""
        skip = state.skip_filter_plugins
        return any(
            pl.name not in skip and pl.pre_filter_extensions() is not None
            for pl in self.pre_filter_plugins
        )

    def nominated_filter_keyer(
        self, state: CycleState, pod: Pod
    ) -> Callable[[str], tuple[tuple[Pod, bool], ...]]:
        """node name -> the pods the two-pass check adds there for ``pod``: those nominated
        with at least its priority (itself excluded), with whether pod-level resources count
        for them. One per cycle, kept in ``state`` so that preemption's dry run in the same
        cycle reuses its answers."""
        keyer: Callable[[str], tuple[tuple[Pod, bool], ...]] | None = state.get(
            NOMINATED_KEYS_STATE
        )
        if keyer is not None:
            return keyer
        prio = pod_priority(pod)
        uid = pod.uid
        fast = getattr(self.nominator, "nominated_filter_keys", None)
        if fast is not None:
            keyer = fast(prio, uid)
        else:  # any nominator: its PodInfo copies
            copies = self.nominator.nominated_pods_for_node

            def keyer(node_name: str) -> tuple[tuple[Pod, bool], ...]:
                return tuple(
                    (pi.pod, pi.pod_level) for pi in copies(node_name)
                    if pi.pod.uid != uid and (pi.pod.spec.priority or 0) >= prio
                )

        assert keyer is not None
        state.write(NOMINATED_KEYS_STATE, keyer)
        return keyer

    def _live_generations(self) -> set[int]:
        return {ni.generation for ni in self.snapshot_shared_lister().node_infos().list()}

    def _score_totals_folded(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        breakdown: ScoreBreakdown | None = None,
        relative: bool = False,
    ) -> tuple[list[int], Status | None] | None:
        """run_score_plugins_totals with the node-local plugins that sign ``pod`` stored per
        NodeInfo generation: their weighted sum (plugins without NormalizeScore) and raw scores
        (plugins with one) are computed once per NodeInfo content. None when there is nothing
        to store, or when a stored plugin fails or scores out of range (the general path then
        runs and reports it as usual). ``breakdown`` is filled as _score fills it, the stored
        plugins' scores as references to their stored rows."""
        skip = state.skip_score_plugins
        weights = self.score_weights
        folded: list[Any] = []
        normalized: list[Any] = []
        others: list[Any] = []
        frags: list[tuple[str, Any]] = []
        names: list[str] | None = [] if breakdown is not None else None  # (for explanations)
        for pl in self.score_plugins:
            name = pl.name
            if name in skip:
                continue
            if names is not None:
                names.append(name)
            fragment = local_fragment(pl, pod)
            if fragment is not None:
                frags.append((name, fragment))
                (folded if pl.score_extensions() is None else normalized).append(pl)
                continue
            others.append(pl)
        if not frags:
            return None
        cache = self.node_local_cache
        assert cache is not None
        key = tuple(frags)
        table = cache.generation_table(("totals", key), self._live_generations)
        # Raw scores of the plugins with NormalizeScore, stored only where one is not zero.
        side = cache.generation_table(("totals-raw", key), self._live_generations)
        # (node name, raw scores of the plugins without NormalizeScore) per generation, for
        # explanations.
        kept = cache.generation_table(("totals-rows", key), self._live_generations)
        marks, start = _window_marks(table, self.snapshot_shared_lister(), nodes, breakdown)
        offsets: list[int] = []
        gens: list[int] = []
        if marks is not None:
            # ``nodes`` is a round-robin window of the snapshot's node list: the stored sums of
            # the nodes unchanged since they were last scored are read by position (no
            # NodeInfo is touched); only the changed ones are looked up by generation.
            stored = marks.values
            end = start + len(nodes)
            totals: list[Any] = stored[start:end].tolist() if end <= len(stored) else [
                *stored[start:].tolist(), *stored[: end - len(stored)].tolist()
            ]
            offsets = marks.dirty_offsets(start, len(nodes))
            for o in offsets:
                totals[o] = table.get(nodes[o].generation)
        else:
            gens = [ni.generation for ni in nodes]  # (faster than attrgetter in map)
            totals = list(map(table.get, gens))
        if None in totals:
            missing = (
                [o for o in offsets if totals[o] is None] if marks is not None
                else [i for i, r in enumerate(totals) if r is None]
            )
            miss_nodes = [nodes[i] for i in missing]
            columns: list[list[int]] = []
            for pl in (*folded, *normalized):
                vals = self._raw_scores_or_none(pl, state, pod, miss_nodes)
                if vals is None:
                    return None
                columns.append(vals)
            weighted = [weights[pl.name] for pl in folded]
            nf = len(folded)
            for j, i in enumerate(missing):
                raw = [col[j] for col in columns]
                partial = sum(w * v for w, v in zip(weighted, raw[:nf], strict=True))
                totals[i] = partial
                gen = nodes[i].generation
                table[gen] = partial
                kept[gen] = (nodes[i].name, tuple(raw[:nf]))
                if any(raw[nf:]):
                    side[gen] = tuple(raw[nf:])
        # An explanation reads the rows (and, off the marks path, the node names) from
        # ``kept`` when asked: every node has its entry there (written with its total; pruned
        # only once its generation is gone, and generations never come back), and entries
        # never change.
        rows: list[Any] | None = None
        if marks is not None:
            rows = _settle_window(marks, start, offsets, nodes, totals, side, len(normalized))
            if breakdown is not None:  # by position: no NodeInfo is touched, nothing copied
                breakdown.window, breakdown.gens_log = marks.window_record()
                breakdown.start = start
                breakdown.count = len(nodes)
                breakdown.live_gens = marks.gens
        elif normalized and side:
            rows = list(map(side.get, gens, repeat((0,) * len(normalized))))
        record = breakdown  # (its raw and normalized columns, filled from here on)
        offset = 0
        if normalized:
            for k, pl in enumerate(normalized):
                if rows is None and getattr(pl, "uniform_normalize", False):
                    # Every raw score is 0: normalize one, the others come out the same.
                    one = self._score_one_plugin(pl, state, pod, nodes[:1], None, [0])
                    out = one if isinstance(one, Status) else one * len(nodes)
                    if record is not None and not isinstance(one, Status):
                        n = len(nodes)
                        record.raw[pl.name] = uniform_column(0, n)
                        record.normalized[pl.name] = uniform_column(one[0], n)
                else:
                    vals = list(map(itemgetter(k), rows)) if rows is not None else [0] * len(nodes)
                    out = self._score_one_plugin(pl, state, pod, nodes, record, vals)
                c, st = self._add_weighted(pl.name, out, totals)
                if st is not None:
                    return [], st
                offset += c
        for pl in others:
            try:
                out = self._score_one_plugin(pl, state, pod, nodes, record)
            except Exception as exc:
                out = from_exception(exc, pl.name)
            c, st = self._add_weighted(pl.name, out, totals)
            if st is not None:
                return [], st
            offset += c
        if offset and not relative:
            totals = [t + offset for t in totals]
        if breakdown is not None and names is not None:
            breakdown.plugins = tuple(names)
            breakdown.weights = {n: weights[n] for n in names}
            # Tuples and bytes: what an explanation keeps is immutable and left alone by the
            # garbage collector.
            breakdown.row_plugins = tuple([pl.name for pl in folded])
            breakdown.rows = ()
            breakdown.gens = b"" if marks is not None else array("q", gens).tobytes()
            breakdown.kept = kept
            breakdown.offset = offset if relative else 0
        return totals, None

    def _raw_scores_or_none(
        self, pl: Any, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[int] | None:
        """A node-local plugin's raw scores, or None when it fails or gives a value the
        general path would reject."""
        vals, st = _plugin_raw_scores(pl, state, pod, nodes)
        if st is not None and st.code != Code.Success:
            return None
        if len(vals) != len(nodes):
            return None
        if pl.score_extensions() is None and _out_of_range(pl.name, vals) is not None:
            return None
        return list(vals)

    def _add_weighted(
        self, name: str, out: list[int] | Status, totals: list[int]
    ) -> tuple[int, Status | None]:
        """Add one plugin's normalized scores, weighted, to ``totals`` (in place), or give the
        error status _score would give for them. A score equal on every node is returned
        (weighted) instead, for the caller to add once."""
        if isinstance(out, Status):
            return 0, out
        n = len(totals)
        w = self.score_weights[name]
        if n and len(out) == n and out.count(out[0]) == n:  # one score for every node
            c = out[0]
            if MIN_NODE_SCORE <= c <= MAX_NODE_SCORE:
                return c * w, None
        bad = _out_of_range(name, out)
        if bad is not None:
            return 0, bad
        if len(out) != n:
            return 0, _wrong_count(name, len(out), n)
        if w == 1:
            totals[:] = map(add, totals, out)
        else:
            totals[:] = [t + v * w for t, v in zip(totals, out, strict=True)]
        return 0, None

    def _node_local_raw_scores(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: Sequence[Any]
    ) -> tuple[dict[str, list[int]], Status | None]:
        """Raw scores of the node-local plugins that sign ``pod``, per plugin, from the
        stored ones where the NodeInfo is unchanged and computed (and stored) elsewhere."""
        assert self.node_local_cache is not None
        frags: list[tuple[str, Any]] = []
        cached: list[Any] = []
        for pl in plugins:
            fragment = local_fragment(pl, pod)
            if fragment is not None:
                frags.append((pl.name, fragment))
                cached.append(pl)
        if not cached:
            return {}, None
        table = self.node_local_cache.table(("score", tuple(frags)))
        get = table.get
        rows: list[Any] = [None] * len(nodes)
        missing: list[int] = []
        for i, ni in enumerate(nodes):
            e = get(ni.name)
            if e is not None and e[0] == ni.generation:
                rows[i] = e[1]
            else:
                missing.append(i)
        if missing:
            miss_nodes = [nodes[i] for i in missing]
            columns: list[list[int]] = []
            for pl in cached:
                vals, st = _plugin_raw_scores(pl, state, pod, miss_nodes)
                if st is not None and st.code != Code.Success:
                    return {}, Status.error(
                        f'running Score plugins: plugin "{pl.name}" failed with: '
                        f"{st.message()}",
                        pl.name,
                    )
                columns.append(vals)
            for j, i in enumerate(missing):
                row = tuple(col[j] for col in columns)
                rows[i] = row
                ni = nodes[i]
                table[ni.name] = (ni.generation, row)
        return {pl.name: [r[k] for r in rows] for k, pl in enumerate(cached)}, None


_UNIFORM: dict[tuple[int, int], tuple[int, ...]] = {}


def uniform_column(value: int, n: int) -> tuple[int, ...]:
    """``(value,) * n``, one shared tuple per (value, n): an explanation keeps a reference
    instead of a new column (fewer objects for the garbage collector to count)."""
    col = _UNIFORM.get((value, n))
    if col is None:
        if len(_UNIFORM) >= 256:
            _UNIFORM.clear()
        col = _UNIFORM[(value, n)] = (value,) * n
    return col


def is_uniform_column(col: Sequence[int]) -> bool:
    """Whether ``col`` is a shared column of :func:`uniform_column`."""
    return bool(col) and _UNIFORM.get((col[0], len(col))) is col


def column(vals: list[int]) -> tuple[int, ...]:
    """``tuple(vals)``, or the shared column when every value is the same."""
    n = len(vals)
    if n and vals.count(vals[0]) == n:
        return uniform_column(vals[0], n)
    return tuple(vals)


_LOG_LIMIT = 32768
"""Bytes of a _ScoreMarks log (16 per change) before a new base is taken."""
_CHANGE = Struct("qq")


class _ScoreMarks(PositionMarks):
    """PositionMarks of the folded score sums that also note, per position, the generation of
    the node whose sum is noted, the names of the node list, and (once an explanation asked)
    a base copy of the generations with an append-only log of their changes since: what an
    explanation keeps to read its nodes' generations later, without copying them."""

    __slots__ = ("gens", "names", "_names_of", "base", "log", "logging")

    def __init__(self) -> None:
        super().__init__()
        self.gens: Any = array("q")
        self.names: tuple[str, ...] = ()
        """The names of the node list ``_names_of`` (in its order; taken when first asked)."""
        self._names_of: Any = None
        self.base = b""
        self.log = bytearray()
        self.logging = False

    def _remap(self, pick: Callable[[Any], tuple[Any, ...]]) -> None:
        n = len(self.values)
        super()._remap(pick)
        if len(self.gens) == n:
            self.gens = pick_array(self.gens, pick)
        else:  # not noted yet: _window_marks starts them over, every position dirty
            self.gens = array("q")
            self.dirty = set(range(len(self.values)))
            self._wide = True
        # Positions moved: the next explanation takes a new base (and log); the records
        # made so far keep theirs. The names are taken again from the new list when asked.
        self.logging = False

    def window_record(self) -> tuple[tuple[str, ...], tuple[bytes, bytearray, int]]:
        """The names of the node list (one tuple per list: never changed, read by position)
        and (base, log, length): the generations by position as ``base`` with the first
        ``length`` bytes of ``log`` applied (see gens_from_log; plain bytes, nothing for the
        garbage collector to follow)."""
        nodes = self.nodes
        if self._names_of is not nodes:  # once per node list (its entries keep their names)
            self.names = tuple(map(_NAME, nodes))
            self._names_of = nodes
        if not self.logging or len(self.log) >= _LOG_LIMIT:
            self.base = self.gens.tobytes()
            self.log = bytearray()  # (a new one: the old one's entries never change)
            self.logging = True
        return self.names, (self.base, self.log, len(self.log))


def gens_from_log(gens_log: tuple[bytes, bytearray, int], start: int, n: int, count: int) -> bytes:
    """The generations (``array("q")`` bytes) of the ``count`` positions from ``start`` in
    round-robin order over ``n`` positions, from a (base, log, length) record."""
    base, log, length = gens_log
    end = start + count
    changes = array("q", bytes(log[:length]))
    out = array("q")
    if end <= n:
        out.frombytes(base[8 * start: 8 * end])
    else:
        out.frombytes(base[8 * start:])
        out.frombytes(base[: 8 * (end - n)])
    for k in range(0, len(changes), 2):
        o = (changes[k] - start) % n
        if o < count:
            out[o] = changes[k + 1]
    return out.tobytes()


def _window_marks(
    table: Any, snapshot: Any, nodes: Sequence[NodeInfo], breakdown: ScoreBreakdown | None
) -> tuple[_ScoreMarks | None, int]:
    """The table's position marks (brought up to date) and the position in the snapshot's
    node list where ``nodes`` starts, when ``nodes`` is a round-robin run of that list (each
    the very NodeInfo listed there); (None, 0) otherwise, or with a breakdown to fill."""
    if not isinstance(table, GenerationTable) or not nodes:
        return None, 0
    positions = getattr(snapshot, "positions", None)
    if positions is None or not isinstance(nodes, list):
        return None, 0
    start = positions.get(nodes[0].name)
    if start is None:
        return None, 0
    marks = table.marks
    if not isinstance(marks, _ScoreMarks):
        marks = table.marks = _ScoreMarks()
    if not marks.sync(snapshot, snapshot.list()) or not marks.is_window(start, nodes):
        return None, 0
    if len(marks.gens) != len(marks.values):  # (a reset marks every position dirty)
        marks.gens = array("q", bytes(len(marks.values.tobytes())))
        marks.logging = False
    return marks, start


def _settle_window(
    marks: _ScoreMarks,
    start: int,
    offsets: list[int],
    nodes: Sequence[NodeInfo],
    totals: list[int],
    side: dict[int, Any],
    n_normalized: int,
) -> list[Any] | None:
    """Note the sums of the window's changed nodes at their positions (``marks.extra`` keeps
    the nonzero raw scores of the plugins with NormalizeScore), and give those raw scores
    for the window, one tuple per node (None when all are zero)."""
    vals = marks.values
    extra = marks.extra
    dirty = marks.dirty
    gens = marks.gens
    log = marks.log if marks.logging else None
    change = _CHANGE.pack
    n = len(vals)
    get = side.get
    for o in offsets:
        p = (start + o) % n
        ni = nodes[o]
        gens[p] = gen = ni.generation
        if log is not None:  # (what explanations recorded since the base read)
            log += change(p, gen)
        try:
            vals[p] = totals[o]
        except OverflowError:  # a sum beyond 64 bits: left dirty (looked up by generation)
            continue
        row = get(ni.generation)
        if row is None:
            extra.pop(p, None)
        else:
            extra[p] = row
        dirty.discard(p)
    if not n_normalized or not extra:
        return None
    k = len(nodes)
    if not any((p - start) % n < k for p in extra):
        return None
    zero = (0,) * n_normalized
    return [extra.get(p if p < n else p - n, zero) for p in range(start, start + k)]


def _out_of_range(name: str, vals: Sequence[int]) -> Status | None:
    """The error _score gives when a plugin's (normalized) scores leave [0, 100]."""
    if vals and (min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE):
        bad = next(v for v in vals if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
        return Status.error(
            f'applying score defaultWeights on Score plugins: plugin "{name}" '
            f"returns an invalid score {bad}, it should in the range of "
            f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
        )
    return None


def _wrong_count(name: str, got: int, want: int) -> Status:
    return Status.error(
        f'running Score plugins: plugin "{name}" returned {got} scores for {want} nodes'
    )


def _plugin_raw_scores(
    pl: Any, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> tuple[list[int], Status | None]:
    """One plugin's raw scores on ``nodes`` (its batch ``score_nodes`` when it has one), or
    the failing status (a raising plugin counts as its error status)."""
    batch = getattr(pl, "score_nodes", None)
    try:
        if batch is not None:
            vals, st = batch(state, pod, nodes)
            return vals, st
        vals = []
        for ni in nodes:
            score, st = pl.score(state, pod, ni)
            if st is not None and st.code != Code.Success:
                return vals, st
            vals.append(score)
        return vals, None
    except Exception as exc:
        return [], from_exception(exc, pl.name)


NOMINATED_KEYS_STATE = "kschedlib/nominated-pod-keys"
"""CycleState key of the cycle's nominated-pod key function (see nominated_filter_keyer)."""

_NAME = attrgetter("name")
_GEN = attrgetter("generation")
