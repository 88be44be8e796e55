"""The scheduling algorithm of one pod (schedule_one.go): filter, score, select a host."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import chain, compress, islice, repeat
from operator import attrgetter, eq, is_, itemgetter
from typing import Any

import attrs

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.framework.batch import OpportunisticBatch
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from kschedlib.framework.extender import EXTENDER_NAME, MAX_EXTENDER_PRIORITY, Extender
from kschedlib.framework.interface import MAX_NODE_SCORE
from kschedlib.framework.node_local_cache import GenerationTable, PositionMarks
from kschedlib.framework.reuse import ScoreBreakdown
from kschedlib.framework.runtime import Framework, NodePluginScores, PluginScore
from kschedlib.framework.status import Code, Status, from_exception, shared
from kschedlib.framework.types import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SchedulingError(Exception):
    """A scheduling cycle failed with an error (not a FitError): a plugin or extender error.
    ``partial`` holds what the cycle had found when it failed after filtering (a Score
    error), for explanations."""

    partial: ScheduleResult | None = None


@attrs.define(slots=True)
class ScheduleResult:
    """The node chosen for a pod and what led to it."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    diagnosis: Diagnosis
    feasible: list[NodeInfo] = attrs.field(factory=list)
    scores: list[NodePluginScores] = attrs.field(factory=list)
    breakdown: ScoreBreakdown | None = None
    nominated_fast_path: bool = False
    totals: list[int] | None = None
    """Each feasible node's total score (in ``feasible`` order) when ``scores`` is not built."""


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for: all under 100 nodes; else the percentage
    (adaptive when 0: 50% minus 1% per 125 nodes, at least 5%), never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


_MISSING: Any = object()

# kube-scheduler cancels the search only when it meets one more feasible node than it needs
# (that one is dropped): nodes rejected after the last needed feasible node are still checked,
# recorded in the diagnosis and counted into the next start index. The three loops below keep
# that rule; they differ only in what they may reuse.


def _filter_each(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    order: Iterable[NodeInfo],
    to_find: int,
    filters: list[tuple[str, Any]],
    nominated: bool,
) -> tuple[list[NodeInfo], list[tuple[str, Status]]]:
    """Every filter on every node, in round-robin order."""
    run = fwk.run_filter_plugins_with_nominated_pods if nominated else fwk.run_filter_plugins
    feasible: list[NodeInfo] = []
    failed: list[tuple[str, Status]] = []
    success = Code.Success
    enough = False
    for ni in order:
        st = run(state, pod, ni, filters)
        if st is None or st.code == success:
            if enough:
                break
            feasible.append(ni)
            if len(feasible) >= to_find:
                enough = True
        elif st.code == Code.Error:
            raise SchedulingError(st.message())
        else:
            failed.append((ni.name, st))
    return feasible, failed


def _run_and_store(
    run: Any,
    state: CycleState,
    pod: Pod,
    ni: NodeInfo,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
) -> Status | None:
    """The filters' verdict on a node whose verdict is not stored, stored by generation: a
    fit as None, a rejection as its shared Status; an error is returned, never stored."""
    st: Status | None = run(state, pod, ni, filters)
    if st is None:
        table[ni.generation] = None
    elif st.is_rejected():
        st = table[ni.generation] = shared(st)
    return st


def _nominated_verdict(
    run_nominated: Any,
    state: CycleState,
    pod: Pod,
    ni: NodeInfo,
    filters: list[tuple[str, Any]],
    nominated_table: dict[int, Any],
    key: Any,
) -> Status | None:
    """The two-pass verdict on a node with nominated pods: the stored one when it was
    stored with the same key of nominated pods, else run and stored."""
    e = nominated_table.get(ni.generation)
    if e is not None and e[0] == key:  # identical pod objects compare at once
        st: Status | None = e[1]
        return st
    return _run_nominated_and_store(run_nominated, state, pod, ni, filters, nominated_table, key)


def _run_nominated_and_store(
    run_nominated: Any,
    state: CycleState,
    pod: Pod,
    ni: NodeInfo,
    filters: list[tuple[str, Any]],
    nominated_table: dict[int, Any],
    key: Any,
) -> Status | None:
    """The two-pass verdict (with the nominated pods) on a node, stored with the key of the
    nominated pods it counted; an error is returned, never stored."""
    st: Status | None = run_nominated(state, pod, ni, filters)
    if st is not None and st.is_rejected():
        st = shared(st)
    if st is None or st.is_rejected():  # the stored key keeps the pods alive
        nominated_table[ni.generation] = (key, st)
    return st


def _filter_node_local(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    start_at: int,
    to_find: int,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
) -> tuple[list[NodeInfo], list[tuple[str, Status]] | Rejections]:
    """Every filter is node-local and no pod is nominated: the verdict of a node is reused
    while its NodeInfo is unchanged (``table`` is keyed by the NodeInfo generation). Nodes
    are visited in round-robin order from ``start_at``."""
    # The common case at once: the first ``to_find`` + 1 nodes all have a stored "fits"
    # verdict, so the first ``to_find`` are the feasible ones and the search ends at the next
    # (what the loop below finds, looked up in one pass without a Python-level step per node).
    n = len(nodes)
    run = fwk.run_filter_plugins
    get = table.get
    marks = _filter_marks(fwk, table, nodes)
    if marks is not None and _window_fits(
        marks, state, pod, nodes, start_at, min(to_find + 1, n), run, filters, table
    ):
        # Only the window's nodes changed since they were last seen fitting were looked at;
        # the feasible run is a kept list (no per-node step).
        return marks.window(start_at, to_find), []
    end = start_at + to_find + 1
    if end <= n:
        head = list(nodes[start_at:end])
        rest: Iterable[NodeInfo] = chain(islice(nodes, end, None), islice(nodes, 0, start_at))
    else:
        wrap = min(end - n, start_at)
        head = [*nodes[start_at:], *nodes[:wrap]]
        rest = islice(nodes, wrap, start_at)
    # Whether each node has a stored "fits" (a comprehension reads the slot faster than
    # attrgetter in map; a list of bools is counted and searched by identity). With marks,
    # _window_fits already filtered the changed nodes up to the first rejection.
    fit = [get(ni.generation, _MISSING) is None for ni in head]
    if marks is None and fit.count(True) != len(head):
        i = -1
        try:
            while True:  # the others, in order: nodes changed since their verdict was stored
                i = fit.index(False, i + 1)
                ni = head[i]
                if get(ni.generation, _MISSING) is not _MISSING:
                    break  # a stored rejection: the loop below decides
                if _run_and_store(run, state, pod, ni, filters, table) is None:
                    fit[i] = True
                    continue
                break  # a rejection (or an error): the loop below decides, from the start
        except ValueError:
            pass
    if marks is None and fit.count(True) == len(head):  # every node of the window fits
        return head[:to_find], []
    if True not in fit:  # no node of the window is known to fit: maybe none does
        everywhere = _rejected_everywhere(fwk, state, pod, nodes, start_at, filters, table)
        if everywhere is not None:
            return [], everywhere
    order = chain(head, rest)
    feasible: list[NodeInfo] = []
    append = feasible.append
    failed: list[tuple[str, Status]] = []
    get = table.get
    missing = _MISSING
    left = to_find
    for ni in order:
        st = get(ni.generation, missing)
        if st is missing:
            st = _run_and_store(run, state, pod, ni, filters, table)
        if st is None:
            if not left:
                break
            append(ni)
            left -= 1
        elif st.code == Code.Error:
            raise SchedulingError(st.message())
        else:
            failed.append((ni.name, st))
    return feasible, failed


def _filter_rejections(
    fn: Any, state: CycleState, pod: Pod
) -> Mapping[str, Status] | None:
    """The statuses ``fn``, a plugin's own Filter, gives the snapshot's nodes it rejects,
    by node name, when the plugin tells them at once (FilterRejectionsPlugin); else None."""
    owner = getattr(fn, "__self__", None)
    tell = getattr(owner, "filter_rejections", None)
    if tell is None or fn != getattr(owner, "filter", None):
        return None
    out: Mapping[str, Status] | None = tell(state, pod)
    return out


def _filter_with_rejections(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    order: Iterable[NodeInfo],
    to_find: int,
    head: list[tuple[str, Any]],
    table: dict[int, Status | None],
    rejected: Mapping[str, Status],
) -> tuple[list[NodeInfo], list[tuple[str, Status]]]:
    """_filter_with_table without nominated pods, when the one filter after the node-local
    ``head`` told its rejections by node name: a dict lookup per node instead of a call."""
    run = fwk.run_filter_plugins
    feasible: list[NodeInfo] = []
    append = feasible.append
    failed: list[tuple[str, Status]] = []
    fail = failed.append
    get = table.get
    rget = rejected.get
    missing = _MISSING
    left = to_find
    for ni in order:
        st = get(ni.generation, missing)
        if st is missing:
            st = _run_and_store(run, state, pod, ni, head, table)
            if st is not None and not st.is_rejected():
                raise SchedulingError(st.message())
        if st is None:
            st = rget(ni.name)
            if st is None:
                if not left:
                    break
                append(ni)
                left -= 1
                continue
        fail((ni.name, st))
    return feasible, failed


def _filter_marks(
    fwk: Framework, table: dict[int, Status | None], nodes: Sequence[NodeInfo]
) -> PositionMarks | None:
    """The table's marks of the snapshot positions known to fit, brought up to date; None
    when ``nodes`` is not the snapshot's node list or the snapshot keeps no change log."""
    if not isinstance(table, GenerationTable):
        return None
    marks = table.marks
    if marks is None:
        marks = table.marks = PositionMarks()
    return marks if marks.sync(fwk.snapshot_shared_lister(), nodes) else None


def _window_fits(
    marks: PositionMarks,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    start_at: int,
    count: int,
    run: Any,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
) -> bool:
    """Whether every node of the window of ``count`` nodes from ``start_at`` fits: the nodes
    not marked as fitting are looked up by generation, their filters run (and stored) when
    not stored, in window order up to the first that does not fit; those that fit are
    marked. A node stays marked while the snapshot's change log shows no change for it."""
    dirty = marks.dirty
    n = len(nodes)
    get = table.get
    offsets = marks.dirty_offsets(start_at, count)
    if len(offsets) <= 8:  # the usual few: one step each
        for o in offsets:
            p = (start_at + o) % n
            ni = nodes[p]
            st = get(ni.generation, _MISSING)
            if st is _MISSING:
                st = _run_and_store(run, state, pod, ni, filters, table)
            if st is not None:
                return False  # a rejection (or an error): the general loop decides
            dirty.discard(p)
        return True
    ps = [(start_at + o) % n for o in offsets]
    # The stored verdicts first, at C speed (generations are unique per NodeInfo content,
    # so a verdict stored below for one node never answers for another).
    nis = [nodes[p] for p in ps]
    sts = list(map(get, map(_generation, nis), repeat(_MISSING, len(nis))))
    if sts.count(None) == len(sts):  # every one stored as fitting
        dirty.difference_update(ps)
        return True
    for p, ni, st in zip(ps, nis, sts, strict=True):
        if st is _MISSING:
            st = _run_and_store(run, state, pod, ni, filters, table)
        if st is not None:
            return False  # a rejection (or an error): the general loop decides
        dirty.discard(p)
    return True


_name = attrgetter("name")
_generation = attrgetter("generation")
_first = itemgetter(0)
_second = itemgetter(1)


@attrs.define(slots=True)
class Rejections:
    """The nodes a Filter pass rejected and their statuses, as two lists (a pass over
    thousands of nodes then builds no pair per node)."""

    nodes: list[NodeInfo]
    statuses: list[Status]
    names: list[str] | None = None
    """The nodes' names, when known without reading every NodeInfo."""

    def __len__(self) -> int:
        return len(self.statuses)


def _rejected_everywhere(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    start_at: int,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
) -> Rejections | None:
    """Every node's rejection in round-robin order from ``start_at`` when no node fits (a
    pod that fits nowhere), read from ``table`` in bulk; the nodes changed since
    their verdict was stored are filtered in that order (an error raises, as the loop
    would). None as soon as a node fits: the loop in ``_filter_node_local`` then decides,
    finding the verdicts stored here."""
    ordered = [*nodes[start_at:], *nodes[:start_at]] if start_at else list(nodes)
    get = table.get
    missing = _MISSING
    verdicts: list[Any] = [get(ni.generation, missing) for ni in ordered]
    if any(map(is_, verdicts, repeat(None))):
        return None
    stale = list(map(is_, verdicts, repeat(missing)))
    if True in stale:
        run = fwk.run_filter_plugins
        i = -1
        try:
            while True:
                i = stale.index(True, i + 1)
                ni = ordered[i]
                st = _run_and_store(run, state, pod, ni, filters, table)
                if st is None:
                    return None
                if st.code == Code.Error:
                    raise SchedulingError(st.message())
                verdicts[i] = st
        except ValueError:
            pass
    return Rejections(ordered, verdicts)


def _filter_with_table(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    order: Iterable[NodeInfo],
    to_find: int,
    filters: list[tuple[str, Any]],
    k: int,
    table: dict[int, Status | None],
    nominated_names: Collection[str],
) -> tuple[list[NodeInfo], list[tuple[str, Status]] | Rejections]:
    """The ``k`` leading node-local filters' verdict is reused while a NodeInfo is unchanged;
    the other filters run as usual. A node with nominated pods runs every filter with them;
    when all filters are node-local that verdict is reused too, while both the NodeInfo and
    the nominated pods counted (by identity) are unchanged."""
    head, rest = filters[:k], filters[k:]
    single_name, single = rest[0] if len(rest) == 1 else ("", None)
    # The one other filter's rejections by node name, when its plugin can tell them at once.
    rejected = _filter_rejections(single, state, pod) if single is not None else None
    if rejected is not None and not nominated_names:
        return _filter_with_rejections(fwk, state, pod, order, to_find, head, table, rejected)
    rejected_get = rejected.get if rejected is not None else None
    nominated_table = None
    if nominated_names and not rest:
        nominated_table = fwk.nominated_filter_table(state, pod, filters)
        nominated_key = fwk.nominated_filter_keyer(state, pod)
        if nominated_table is not None:
            return _filter_node_local_nominated(
                fwk, state, pod, order, to_find, filters, table, nominated_names,
                nominated_table, nominated_key,
            )
    run = fwk.run_filter_plugins
    run_nominated = fwk.run_filter_plugins_with_nominated_pods
    feasible: list[NodeInfo] = []
    failed: list[tuple[str, Status]] = []
    get = table.get
    missing = _MISSING
    success = Code.Success
    left = to_find
    for ni in order:
        if nominated_names and ni.name in nominated_names:
            if nominated_table is None:
                st = run_nominated(state, pod, ni, filters)
            else:
                st = _nominated_verdict(
                    run_nominated, state, pod, ni, filters, nominated_table,
                    nominated_key(ni.name),
                )
        else:
            st = get(ni.generation, missing)
            if st is missing:
                st = _run_and_store(run, state, pod, ni, head, table)
            if st is None and rest:
                if rejected_get is not None:
                    st = rejected_get(ni.name)
                elif single is None:
                    st = run(state, pod, ni, rest)
                else:  # run_filter_plugins for one filter, inlined (the hot case)
                    try:
                        st = single(state, pod, ni)
                    except Exception as exc:
                        st = from_exception(exc, single_name)
                    if st is not None and st.code != success:
                        if not st.is_rejected():
                            st = Status.error(
                                f'running "{single_name}" filter plugin: {st.message()}',
                                single_name,
                            )
                        st = st.with_plugin(single_name)
        if st is None or st.code == success:
            if not left:
                break
            feasible.append(ni)
            left -= 1
        elif st.code == Code.Error:
            raise SchedulingError(st.message())
        else:
            failed.append((ni.name, st))
    return feasible, failed


def _filter_node_local_nominated(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    order: Iterable[NodeInfo],
    to_find: int,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
    nominated_names: Collection[str],
    nominated_table: dict[int, Any],
    nominated_key: Any,
) -> tuple[list[NodeInfo], list[tuple[str, Status]] | Rejections]:
    """_filter_with_table when every filter is node-local and the two-pass verdicts of
    nodes with nominated pods are stored too. Nodes are looked up a chunk at a time while
    their verdicts are rejections (what a pod that fits nowhere meets; verdicts not stored
    are computed in order); from the first node with another verdict, the node-by-node loop
    decides."""
    nodes = order if isinstance(order, list) else list(order)
    rejected: list[Any] = []  # the statuses of nodes[:start], all rejections
    get = table.get
    get_nominated = nominated_table.get
    nominated_at = nominated_names.__contains__
    run = fwk.run_filter_plugins
    run_nominated = fwk.run_filter_plugins_with_nominated_pods
    missing = _MISSING
    n = len(nodes)
    start = 0
    while start < n:
        chunk = nodes[start : start + _CHUNK]
        names = [ni.name for ni in chunk]
        sts: list[Any] = list(map(get, [ni.generation for ni in chunk], repeat(missing)))
        keys: dict[int, Any] = {}
        for i in compress(range(len(chunk)), map(nominated_at, names)):
            ni = chunk[i]
            key = keys[i] = nominated_key(names[i])
            e = get_nominated(ni.generation)
            sts[i] = e[1] if e is not None and e[0] == key else missing
        try:  # the first node that fits by its stored verdict
            stop = list(map(is_, sts, repeat(None))).index(True)
        except ValueError:
            stop = len(chunk)
        for i in compress(range(stop), map(is_, sts, repeat(missing))):  # in order
            ni = chunk[i]
            if i in keys:
                st = _run_nominated_and_store(
                    run_nominated, state, pod, ni, filters, nominated_table, keys[i]
                )
            else:
                st = _run_and_store(run, state, pod, ni, filters, table)
            sts[i] = st
            if st is None or not st.is_rejected():
                stop = i
                break
        if stop == len(chunk):
            rejected.extend(sts)
            start += stop
            continue
        failed = list(zip(map(_name, nodes[:start]), rejected, strict=True))
        failed.extend(zip(names[:stop], sts[:stop], strict=True))
        # The node at ``stop`` as the loop takes it, then the loop from the next one.
        st, ni = sts[stop], chunk[stop]
        feasible: list[NodeInfo] = []
        left = to_find
        if st is None or st.code == Code.Success:
            if not left:
                return feasible, failed
            feasible.append(ni)
            left -= 1
        elif st.code == Code.Error:
            raise SchedulingError(st.message())
        else:
            failed.append((ni.name, st))
        feasible, more = _filter_nominated_each(
            fwk, state, pod, islice(nodes, start + stop + 1, None), left, filters, table,
            nominated_names, nominated_table, nominated_key, feasible,
        )
        failed.extend(more)
        return feasible, failed
    return [], Rejections(nodes, rejected)


_CHUNK = 128


def _filter_nominated_each(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    order: Iterable[NodeInfo],
    to_find: int,
    filters: list[tuple[str, Any]],
    table: dict[int, Status | None],
    nominated_names: Collection[str],
    nominated_table: dict[int, Any],
    nominated_key: Any,
    feasible: list[NodeInfo],
) -> tuple[list[NodeInfo], list[tuple[str, Status]]]:
    """_filter_node_local_nominated node by node, adding to ``feasible`` (``to_find``
    more to find)."""
    run = fwk.run_filter_plugins
    run_nominated = fwk.run_filter_plugins_with_nominated_pods
    failed: list[tuple[str, Status]] = []
    add_failed = failed.append
    get = table.get
    missing = _MISSING
    success = Code.Success
    error = Code.Error
    left = to_find
    for ni in order:
        name = ni.name
        if name in nominated_names:
            st = _nominated_verdict(
                run_nominated, state, pod, ni, filters, nominated_table, nominated_key(name)
            )
        else:
            st = get(ni.generation, missing)
            if st is missing:
                st = _run_and_store(run, state, pod, ni, filters, table)
        if st is None or st.code == success:
            if not left:
                break
            feasible.append(ni)
            left -= 1
        elif st.code == error:
            raise SchedulingError(st.message())
        else:
            add_failed((name, st))
    return feasible, failed


@attrs.define(slots=True)
class _RejectedPass:
    """A Filter pass with nominated pods (every filter node-local, two-pass verdicts stored)
    that rejected every node of the snapshot's node list, for a pod nominated nowhere: the
    statuses in node list order. A node's verdict there depends only on the filters'
    fragments (the same ``table`` and ``nominated_table``), its NodeInfo (unchanged while the
    snapshot's change log does not name it) and the pods nominated to it with at least the
    pod's ``priority`` (unchanged while the queue's nomination log does not name it), so a
    pod of the same signature and priority, nominated nowhere, gets the same verdicts on the
    nodes neither log names since (``seen``, ``mark``)."""

    snapshot: Any
    nodes: Sequence[NodeInfo]
    seen: int
    log: Any
    """The queue's NominationLog."""
    mark: int
    table: dict[int, Status | None]
    nominated_table: dict[int, Any]
    priority: int
    statuses: list[Status]
    names: list[str]
    """The names of ``nodes``, in order."""


class SchedulingAlgorithm:
    """Carries what survives from pod to pod: the round-robin start index and the RNG."""

    def __init__(
        self,
        *,
        percentage_of_nodes_to_score: int | None = None,
        extenders: Sequence[Extender] = (),
        seed: int | None = None,
        deterministic: bool = False,
    ) -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.extenders = list(extenders)
        self.rng = random.Random(seed)
        self.deterministic = deterministic
        self.next_start_node_index = 0
        self._rejected_pass: _RejectedPass | None = None

    # --- schedulePod --------------------------------------------------------------------

    def schedule_pod(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        snapshot: Any,
        *,
        explain: bool = False,
        batch: OpportunisticBatch | None = None,
    ) -> ScheduleResult:
        """Raises NoNodesAvailableError, FitError (with the diagnosis) or SchedulingError.
        ``batch``: the profile's opportunistic batch (hints asked and results stored)."""
        all_nodes: Sequence[NodeInfo] = snapshot.node_infos().list()
        if not all_nodes:
            raise NoNodesAvailableError()
        feasible, diagnosis, fast = self.find_nodes_that_fit_pod(fwk, state, pod, snapshot, batch)
        if not feasible:
            raise FitError(pod, len(all_nodes), diagnosis)
        if len(feasible) == 1:
            if batch is not None:
                batch.store(feasible[0].name)
            return ScheduleResult(
                feasible[0].name, 1 + len(diagnosis.node_to_status), 1, diagnosis, feasible,
                nominated_fast_path=fast,
            )
        breakdown = ScoreBreakdown([], {}, {}, {}) if explain else None
        try:
            if not self.extenders and fwk.has_score_plugins():
                # The common path: totals only, no per-node result objects (an explanation
                # keeps the totals and the per-plugin breakdown the scoring recorded).
                totals = self._prioritize_totals(fwk, state, pod, feasible, breakdown)
                at = self._select_index_from_totals(feasible, totals)
                host = feasible[at].name
                if breakdown is not None:
                    breakdown.at = at
                if batch is not None:
                    batch.store(host, feasible, totals)
                return ScheduleResult(
                    host,
                    len(feasible) + len(diagnosis.node_to_status),
                    len(feasible),
                    diagnosis,
                    feasible,
                    [],
                    breakdown,
                    fast,
                    totals if breakdown is not None else None,
                )
            scores = self.prioritize_nodes(fwk, state, pod, feasible, breakdown)
        except SchedulingError as exc:
            exc.partial = ScheduleResult(
                "", len(feasible) + len(diagnosis.node_to_status), len(feasible), diagnosis,
                feasible,
            )
            raise
        host = self.select_host(scores)
        if batch is not None:
            batch.store(host, scores, [s.total_score for s in scores])
        return ScheduleResult(
            host,
            len(feasible) + len(diagnosis.node_to_status),
            len(feasible),
            diagnosis,
            feasible,
            scores,
            breakdown,
            fast,
        )

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Any,
        batch: OpportunisticBatch | None = None,
    ) -> tuple[list[NodeInfo], Diagnosis, bool]:
        diagnosis = Diagnosis()
        all_nodes: Sequence[NodeInfo] = snapshot.node_infos().list()
        pre_res, st, unscheduled = fwk.run_pre_filter_plugins(state, pod)
        diagnosis.unschedulable_plugins = set(unscheduled)
        if st is not None and st.code != Code.Success:
            if not st.is_rejected():
                raise SchedulingError(st.message())
            diagnosis.node_to_status.absent_nodes_status = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            return [], diagnosis, False

        # A batch hint is filtered alone, as a nominated node is (which takes precedence).
        hint = batch.get_node_hint(fwk, state, pod, snapshot) if batch is not None else ""
        if pod.status.nominated_node_name or hint:
            feasible = self._evaluate_nominated_node(fwk, state, pod, snapshot, diagnosis, hint)
            if feasible:
                return feasible, diagnosis, bool(pod.status.nominated_node_name)

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_res is not None and not pre_res.all_nodes():
            assert pre_res.node_names is not None
            picked = []
            for name in pre_res.node_names:
                try:
                    picked.append(snapshot.node_infos().get(name))
                except KeyError:
                    continue
            # Go ranges over a set here (random order); keep the snapshot's order instead.
            order = {ni.name: i for i, ni in enumerate(all_nodes)}
            picked.sort(key=lambda ni: order.get(ni.name, 0))
            nodes = picked
            plugins = " ".join(sorted(unscheduled))
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UnschedulableAndUnresolvable, (f"node(s) didn't satisfy plugin(s) [{plugins}]",)
            )
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        after = self.find_nodes_that_pass_extenders(pod, feasible, diagnosis)
        if len(after) != len(feasible):
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return after, diagnosis, False

    def _evaluate_nominated_node(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Any, diagnosis: Diagnosis,
        hint: str = "",
    ) -> list[NodeInfo]:
        try:
            ni = snapshot.node_infos().get(pod.status.nominated_node_name or hint)
        except KeyError:
            return []
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, [ni], start=0)
        return self.find_nodes_that_pass_extenders(pod, feasible, diagnosis)

    def find_nodes_that_pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
        start: int | None = None,
    ) -> list[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = self.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(pct, n)
        if not fwk.has_score_plugins() and not any(
            ext.is_filter() or ext.is_prioritizer() for ext in self.extenders
        ):
            to_find = 1  # nothing to rank the nodes with: the first feasible one will do
        offset = self.next_start_node_index if start is None else start
        if not fwk.has_filter_plugins():
            return [nodes[(offset + i) % n] for i in range(to_find)]
        filters = fwk.filter_functions(state)
        statuses = diagnosis.node_to_status
        nominated = fwk.has_nominated_pods()
        nominated_names: Collection[str] | None = ()
        if nominated:
            nominated_names = fwk.nominated_node_names()
        table = None
        if n > 1 and nominated_names is not None:
            k, table = fwk.node_local_filter_table(pod, filters)
        start_at = offset % n
        order = chain(islice(nodes, start_at, None), islice(nodes, 0, start_at))
        failed: list[tuple[str, Status]] | Rejections
        if table is None:
            feasible, failed = _filter_each(fwk, state, pod, order, to_find, filters, nominated)
        elif k == len(filters) and not nominated_names:
            feasible, failed = _filter_node_local(
                fwk, state, pod, nodes, start_at, to_find, filters, table
            )
        else:
            assert nominated_names is not None
            again = None
            if k == len(filters) and nominated_names:
                again = self._rejected_again(
                    fwk, state, pod, nodes, start_at, filters, table, nominated_names
                )
            if again is not None:
                feasible, failed = [], again
            else:
                feasible, failed = _filter_with_table(
                    fwk, state, pod, order, to_find, filters, k, table, nominated_names
                )
                if isinstance(failed, Rejections) and k == len(filters) and nominated_names:
                    self._keep_rejections(fwk, state, pod, nodes, start_at, filters, table, failed)
        if failed:
            if isinstance(failed, Rejections):
                names = failed.names
                heads = statuses.set_all(
                    map(_name, failed.nodes) if names is None else names, failed.statuses
                )
            else:
                heads = statuses.set_all(map(_first, failed), list(map(_second, failed)))
            add_status = diagnosis.add_plugin_status
            for st in heads:  # each distinct verdict, once or a few times
                add_status(st)
        return feasible

    def _keep_rejections(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start_at: int,
        filters: list[tuple[str, Any]],
        table: dict[int, Status | None],
        failed: Rejections,
    ) -> None:
        """Keep a pass with nominated pods that rejected every node of the snapshot (see
        ``_RejectedPass``), when the pod is nominated nowhere."""
        self._rejected_pass = None
        snapshot: Any = fwk.snapshot_shared_lister()
        n = len(nodes)
        if (
            getattr(snapshot, "changed_since", None) is None
            or snapshot.list() is not nodes
            or len(failed.statuses) != n
            or failed.nodes[0] is not nodes[start_at]
        ):
            return
        nominated_table = fwk.nominated_filter_table(state, pod, filters)
        keyer = fwk.nominated_filter_keyer(state, pod)
        log = getattr(keyer, "log", None)
        is_nominated = getattr(keyer, "is_nominated", None)
        if nominated_table is None or log is None or is_nominated is None or is_nominated(pod.uid):
            return
        sts = failed.statuses
        cut = (n - start_at) % n
        self._rejected_pass = _RejectedPass(
            snapshot, nodes, snapshot.generation, log, log.mark(), table, nominated_table,
            pod_priority(pod), [*sts[cut:], *sts[:cut]], list(map(_name, nodes)),
        )

    def _rejected_again(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start_at: int,
        filters: list[tuple[str, Any]],
        table: dict[int, Status | None],
        nominated_names: Collection[str],
    ) -> Rejections | None:
        """Every node's rejection from the kept pass (see ``_RejectedPass``), the nodes changed
        since then filtered again in round-robin order; None when the kept pass does not
        apply or a changed node is not rejected (the usual pass then decides)."""
        rec = self._rejected_pass
        if rec is None or rec.nodes is not nodes or rec.table is not table:
            return None
        snapshot: Any = fwk.snapshot_shared_lister()
        if rec.snapshot is not snapshot or snapshot.list() is not nodes:
            return None
        if pod_priority(pod) != rec.priority:
            return None
        nominated_table = fwk.nominated_filter_table(state, pod, filters)
        if nominated_table is None or nominated_table is not rec.nominated_table:
            return None
        keyer = fwk.nominated_filter_keyer(state, pod)
        is_nominated = getattr(keyer, "is_nominated", None)
        log: Any = rec.log
        same_log = getattr(keyer, "log", None) is log
        if not same_log or is_nominated is None:
            return None
        if is_nominated(pod.uid):
            return None
        changed = snapshot.changed_since(rec.seen)
        renominated = log.since(rec.mark)
        if changed is None or renominated is None:
            return None
        n = len(nodes)
        statuses = list(rec.statuses)
        pos = snapshot.positions
        dirty = {p for p in map(pos.get, chain(changed, renominated)) if p is not None}
        if dirty:
            run = fwk.run_filter_plugins
            run_nominated = fwk.run_filter_plugins_with_nominated_pods
            get = table.get
            for p in sorted(dirty, key=lambda p: (p - start_at) % n):  # in round-robin order
                ni = nodes[p]
                name = ni.name
                if name != rec.names[p]:
                    return None
                st: Status | None
                if name in nominated_names:
                    st = _nominated_verdict(
                        run_nominated, state, pod, ni, filters, nominated_table, keyer(name)
                    )
                else:
                    st = get(ni.generation, _MISSING)
                    if st is _MISSING:
                        st = _run_and_store(run, state, pod, ni, filters, table)
                if st is None or not st.is_rejected():
                    return None
                statuses[p] = st
        rec.statuses = statuses
        rec.seen = snapshot.generation
        rec.mark = log.mark()
        names = rec.names
        return Rejections(
            [*nodes[start_at:], *nodes[:start_at]], [*statuses[start_at:], *statuses[:start_at]],
            [*names[start_at:], *names[:start_at]],
        )

    def find_nodes_that_pass_extenders(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        statuses = diagnosis.node_to_status
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_interested(pod):
                continue
            try:
                kept, failed, unresolvable = ext.filter(pod, feasible)
            except Exception as exc:
                if ext.is_ignorable():
                    continue
                raise SchedulingError(f"extender {ext.name}: {exc}") from exc
            for name, msg in unresolvable.items():
                statuses.set(name, Status(Code.UnschedulableAndUnresolvable, (msg,)))
            for name, msg in failed.items():
                if name not in unresolvable:
                    statuses.set(name, Status(Code.Unschedulable, (msg,)))
            feasible = list(kept)
        return feasible

    # --- prioritizeNodes / selectHost ---------------------------------------------------

    def prioritize_nodes(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        breakdown: ScoreBreakdown | None = None,
    ) -> list[NodePluginScores]:
        if not self.extenders and not fwk.has_score_plugins():
            return [NodePluginScores(ni.name, [], 1) for ni in nodes]
        st = fwk.run_pre_score_plugins(state, pod, nodes)
        if st is not None and st.code != Code.Success:
            raise SchedulingError(st.message())
        # Per-plugin scores travel in ``breakdown`` (explanations read them from there).
        scores, st = fwk.run_score_plugins(state, pod, nodes, breakdown, detailed=False)
        if st is not None and st.code != Code.Success:
            raise SchedulingError(st.message())
        if self.extenders:
            extra: dict[str, list[PluginScore]] = {}
            scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
            for ext in self.extenders:
                if not ext.is_interested(pod):
                    continue
                try:
                    prioritized, weight = ext.prioritize(pod, nodes)
                except Exception:
                    continue  # prioritization errors are ignored, as kube-scheduler does
                for host, score in prioritized:
                    extra.setdefault(host, []).append(PluginScore(ext.name, score * weight * scale))
            for nps in scores:
                more = extra.get(nps.name)
                if more:
                    nps.scores.extend(more)
                    nps.total_score += sum(p.score for p in more)
        return scores

    def _prioritize_totals(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        breakdown: ScoreBreakdown | None = None,
    ) -> list[int]:
        """prioritize_nodes without extenders: each node's total score up to one amount common
        to all nodes, in ``nodes`` order."""
        st = fwk.run_pre_score_plugins(state, pod, nodes)
        if st is not None and st.code != Code.Success:
            raise SchedulingError(st.message())
        # Totals up to a common amount: host selection and the batch's ranking only compare
        # (an explanation adds back the amount, ``breakdown.offset``).
        totals, st = fwk.run_score_plugins_totals(state, pod, nodes, breakdown, relative=True)
        if st is not None and st.code != Code.Success:
            raise SchedulingError(st.message())
        return totals

    def _select_host_from_totals(self, nodes: list[NodeInfo], totals: list[int]) -> str:
        """select_host over (node, total) pairs: the name of the node chosen."""
        return nodes[self._select_index_from_totals(nodes, totals)].name

    def _select_index_from_totals(self, nodes: list[NodeInfo], totals: list[int]) -> int:
        """select_host over (node, total) pairs, drawing from the RNG exactly as it does: the
        index of the node chosen."""
        if not totals:
            raise SchedulingError("empty priorityList")
        best = max(totals)
        count = totals.count(best)
        if count == 1:
            return totals.index(best)
        if count == len(totals) and not self.deterministic:
            return self.rng.randrange(count)  # all tie: the i-th tie is nodes[i]
        # Positions of the ties (no NodeInfo is touched but the one chosen).
        if self.deterministic:
            ties = compress(range(len(totals)), map(eq, totals, repeat(best)))
            return min(ties, key=lambda i: nodes[i].name)
        k = self.rng.randrange(count)  # the k-th tie, as drawn from the list of all ties
        if k < 32:
            index = totals.index
            i = index(best)
            for _ in range(k):
                i = index(best, i + 1)
            return i
        ties = compress(range(len(totals)), map(eq, totals, repeat(best)))
        return next(islice(ties, k, None))

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """The highest total; ties broken at random (reservoir sampling) or, in deterministic
        mode, by the smallest node name."""
        if not scores:
            raise SchedulingError("empty priorityList")
        best = max(s.total_score for s in scores)
        if self.deterministic:
            return min(s.name for s in scores if s.total_score == best)
        ties = [s.name for s in scores if s.total_score == best]
        return ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
