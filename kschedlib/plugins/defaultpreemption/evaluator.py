"""The preemption evaluator (kube-scheduler's framework/preemption): find candidate nodes by
dry-running victim selection, let extenders veto, pick one node, evict its victims."""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, count, islice
from typing import Any, Protocol

import attrs

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kschedlib.framework.interface import NodeToStatusReader, PostFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE_NODE = "no candidate node for preemption"
MIN_INT64 = -(1 << 63)
_PRIORITY_OFFSET = 1 << 31  # MaxInt32 + 1: makes every priority >= 0 in the sum


VictimsSummary = tuple[tuple[int, int, int, int], "int | None"]
"""The scores of the four pure default criteria (PDB violations, highest priority, priority
sum, number of victims) and the latest-start score, None when it must be read at pick time."""


@attrs.define(slots=True)
class Victims:
    """The pods to evict on a node (most important first) and how many PDBs that violates."""

    pods: list[Pod]
    num_pdb_violations: int = 0
    summary: VictimsSummary | None = attrs.field(default=None, eq=False, repr=False)
    """The default criteria's scores of these victims when known (see victims_summary)."""


@attrs.define(slots=True)
class Candidate:
    """A node the preemptor could be nominated to, with the victims that makes room there."""

    name: str
    victims: Victims


ScoreFunc = Callable[[str], int]


class PreemptionInterface(Protocol):
    """What a preemption plugin supplies to the evaluator (preemption.Interface)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]: ...

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Victims]
    ) -> list[ScoreFunc] | None: ...

    def pod_start_time(self, pod: Pod) -> int: ...


def aggregate_error_message(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated in
    brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: dict[str, None] = {}
    for m in messages:
        seen.setdefault(m, None)
    joined = ", ".join(seen)
    return joined if len(seen) == 1 else f"[{joined}]"


def _ok(status: Status | None) -> bool:
    return status is None or status.code == Code.Success


class Evaluator:
    """Runs preemption for one plugin: Preempt, findCandidates, DryRunPreemption,
    callExtenders, SelectCandidate and prepareCandidate of kube-scheduler v1.35."""

    def __init__(
        self,
        plugin_name: str,
        handle: Any,
        interface: PreemptionInterface,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.async_preemption = async_preemption

    # --- Preempt ------------------------------------------------------------------------

    def preempt(
        self, state: CycleState, pod: Pod, m: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Nominate a node for ``pod`` and evict its victims, or say why that is impossible."""
        ok, msg = self.interface.pod_eligible_to_preempt_others(
            pod, m.get(pod.status.nominated_node_name)
        )
        if not ok:
            return None, Status(Code.Unschedulable, (msg,))

        lister = self.handle.snapshot_shared_lister().node_infos()
        all_nodes: Sequence[NodeInfo] = lister.list()
        candidates, node_to_status, err = self.find_candidates(state, all_nodes, pod, m)
        if err is not None and not candidates:
            return None, Status.error(err)
        if not candidates:
            statuses = node_to_status if node_to_status is not None else NodeToStatus()
            diagnosis = Diagnosis(node_to_status=statuses)
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UnschedulableAndUnresolvable, (PREEMPTION_NOT_HELPFUL,)
            )
            fit_error = FitError(pod, len(all_nodes), diagnosis)
            return PostFilterResult(""), Status(Code.Unschedulable, (fit_error.message(),))

        candidates, status = self.call_extenders(pod, candidates)
        if not _ok(status):
            return None, status

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, (NO_CANDIDATE_NODE,))

        if self.async_preemption:
            self.prepare_candidate_async(best, pod)
        else:
            status = self.prepare_candidate(best, pod)
            if not _ok(status):
                return None, status
        return PostFilterResult(best.name), Status(Code.Success)

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: NodeToStatusReader
    ) -> tuple[list[Candidate], NodeToStatus | None, str | None]:
        """Dry-run preemption on the nodes Filter found Unschedulable (never on the
        UnschedulableAndUnresolvable ones, which no eviction can fix)."""
        if not all_nodes:
            return [], None, "no nodes available"
        lister = self.handle.snapshot_shared_lister().node_infos()
        # kube-scheduler ranges over a map here (random order): keep the snapshot's order.
        node_map = getattr(lister, "node_info_map", None)
        if (
            isinstance(m, NodeToStatus)
            and m.absent_nodes_status.code != Code.Unschedulable
            and node_map is not None
            and len(node_map) == len(all_nodes)
            and lister.list() is all_nodes
        ):  # every NodeInfo of the snapshot is listed: take them in order at once
            potential = m.listed_with_code(all_nodes, Code.Unschedulable)
        else:
            potential = m.nodes_for_status_code(lister, Code.Unschedulable)
            order = dict(zip([ni.name for ni in all_nodes], count()))
            get, last = order.get, len(order)
            potential = sorted(potential, key=lambda ni: get(ni.name, last))
        if not potential:
            return [], NodeToStatus(), None
        pdbs = self.pod_disruption_budgets()
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        objects = getattr(self.handle, "objects", None)
        if objects is None:
            return []
        return [
            o
            for o in objects.list_objects("PodDisruptionBudget")
            if isinstance(o, PodDisruptionBudget)
        ]

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Select victims on copies of the potential nodes, starting at ``offset``, until
        ``num_candidates`` candidates (one of them PDB-respecting) are found; candidates that
        violate no PDB come first."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        select = self.interface.select_victims_on_node
        memo_of = getattr(self.interface, "dry_run_memo", None)
        memo = memo_of(state, pod, pdbs) if memo_of is not None else None
        success = Code.Success
        # Summaries are kept with stored outcomes, for the default criteria and start times.
        summarize = None
        if (
            type(self).default_score_funcs is Evaluator.default_score_funcs
            and getattr(self.interface, "pod_start_time_is_default", False)
        ):
            summarize = victims_summary
        find = memo.find if memo is not None else None
        parts = memo.parts() if memo is not None else None
        table_get: Any = None
        keyer: Any = None
        nominated_at: Any = None
        plain: Any = _NO_NAMES  # nodes whose stored outcome holds as found (see DryRunMemo)
        plain_add: Any = None
        if parts is not None:
            table, keyer, nominated_at, plain_names = parts
            table_get = table.get
            if plain_names is not None:
                plain, plain_add = plain_names, plain_names.add
        error = Code.Error
        failed_names: list[str] = []  # into ``statuses`` at the end, in order
        failed_statuses: list[Status] = []
        start = offset % n if n else 0
        for node in chain(islice(potential_nodes, start, None), islice(potential_nodes, start)):
            name = node.name
            summary = None
            if table_get is not None:  # memo.find inlined
                e = table_get(name)
                hit = False
                nominated = None  # (the key of its nominated pods, once worked out)
                if e is not None and e[0] == node.generation:
                    if name in plain:  # its nominated pods unchanged: the generation decides
                        if e[4] is not None:  # stored as no candidate, with this status
                            failed_names.append(name)
                            failed_statuses.append(e[4])
                            continue
                        hit = True
                    else:
                        nominated = (
                            keyer(name) if nominated_at is None or nominated_at(name) else ()
                        )
                        if e[1] == nominated:
                            hit = True
                            if plain_add is not None:
                                plain_add(name)
                if hit:
                    stored, num_violations, status = e[2]
                    pods = [*stored] if stored else []
                    if summarize is not None:
                        summary = e[3]
                else:
                    if nominated is None:
                        nominated = (
                            keyer(name) if nominated_at is None or nominated_at(name) else ()
                        )
                    pods, num_violations, status = select(state.clone(), pod, node.clone(), pdbs)
                    if summarize is not None and pods:
                        summary = summarize(pods, num_violations)
                    assert memo is not None
                    memo.store(node, nominated, (pods, num_violations, status), summary)
            elif find is None:
                pods, num_violations, status = select(state.clone(), pod, node.clone(), pdbs)
            else:
                nominated, got = find(node)
                if got is None:
                    pods, num_violations, status = select(state.clone(), pod, node.clone(), pdbs)
                    if summarize is not None and pods:
                        summary = summarize(pods, num_violations)
                    assert memo is not None
                    memo.store(node, nominated, (pods, num_violations, status), summary)
                else:
                    pods, num_violations, status, summary = got
                    if summarize is None:
                        summary = None
            if (status is None or status.code == success) and pods:
                c = Candidate(name, Victims(pods, num_violations, summary))
                bucket = non_violating if num_violations == 0 else violating
                if len(bucket) < num_candidates:
                    bucket.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status is None or status.code == success:
                status = Status.error(f'expected at least one victim pod on node "{name}"')
            if status.code == error:
                errors.append(status.message())
            failed_names.append(name)
            failed_statuses.append(status)
        statuses.set_all(failed_names, failed_statuses)
        err = aggregate_error_message(errors) if errors else None
        return non_violating + violating, statuses, err

    # --- extenders ----------------------------------------------------------------------

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate]
    ) -> tuple[list[Candidate], Status | None]:
        """Let preemption-aware extenders drop candidates or change their victims."""
        extenders = getattr(self.handle, "extenders", None) or ()
        if not extenders:
            return candidates, None
        victims_map = self.interface.candidates_to_victims_map(candidates)
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                result = ext.process_preemption(
                    pod, {name: list(v.pods) for name, v in victims_map.items()}
                )
            except Exception as exc:
                if ext.is_ignorable():
                    continue
                return [], Status.error(exc)
            new_map: dict[str, Victims] = {}
            for name, pods in result.items():
                if not pods:
                    if ext.is_ignorable():
                        continue
                    return [], Status.error(f'expected at least one victim pod on node "{name}"')
                old = victims_map.get(name)
                new_map[name] = Victims(list(pods), old.num_pdb_violations if old else 0)
            victims_map = new_map
            if not victims_map:
                break
        return [Candidate(name, v) for name, v in victims_map.items()], None

    # --- choosing the node --------------------------------------------------------------

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = self.pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        return candidates[0]

    def pick_one_node_for_preemption(
        self, nodes_to_victims: Mapping[str, Victims], score_funcs: list[ScoreFunc] | None = None
    ) -> str:
        """The node whose victims hurt least: fewest PDB violations, lowest highest priority,
        smallest priority sum, fewest victims, latest start of the most important victims;
        then the first candidate."""
        if not nodes_to_victims:
            return ""
        candidates = list(nodes_to_victims)
        if not score_funcs:
            score_funcs = self.default_score_funcs(nodes_to_victims)
            leading = None
            if type(self).default_score_funcs is Evaluator.default_score_funcs:
                leading = _leading_by_default_criteria(nodes_to_victims, candidates)
            if leading is not None:
                if len(leading) == 1:
                    return leading[0]
                candidates = leading
                # The start times, on the nodes still tied (those summarized, at once).
                score_funcs = [_summarized_or(score_funcs[4], nodes_to_victims)]
        for f in score_funcs:
            scores = list(map(f, candidates))  # in candidate order, as the loop calls them
            top = max(scores, default=MIN_INT64)
            if top < MIN_INT64:  # no score reaches the floor: nothing is selected
                candidates = []
                continue
            if scores.count(top) == 1:
                return candidates[scores.index(top)]
            candidates = [node for node, score in zip(candidates, scores, strict=True) if score == top]
        return candidates[0]

    def default_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc]:
        start_time = self.interface.pod_start_time

        def min_pdb_violations(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> int:
            pods = nodes_to_victims[node].pods
            return -(sum([p.spec.priority or 0 for p in pods]) + _PRIORITY_OFFSET * len(pods))

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> int:
            earliest = earliest_pod_start_time(nodes_to_victims[node], start_time)
            return MIN_INT64 if earliest is None else earliest

        return [
            min_pdb_violations,
            min_highest_priority,
            min_sum_priorities,
            min_num_pods,
            latest_start_time,
        ]

    # --- evicting -----------------------------------------------------------------------

    def preempt_pod(self, candidate: Candidate, preemptor: Pod, victim: Pod) -> None:
        """Reject the victim if it waits at Permit, else ask the host to delete it."""
        get_waiting = getattr(self.handle, "get_waiting_pod", None)
        waiting = get_waiting(victim.uid) if get_waiting is not None else None
        if waiting is not None:
            preempt = getattr(waiting, "preempt", None)
            if preempt is not None:
                preempt(self.plugin_name, "preempted")
            else:
                waiting.reject(self.plugin_name, "preempted")
            return
        self.handle.host.delete_pod(
            victim, f"Preempted by pod {preemptor.uid} on node {candidate.name}"
        )

    def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status | None:
        """Synchronous preparation: evict the victims (those not already terminating), then
        clear the nominations of lower-priority pods on the node."""
        for victim in candidate.victims.pods:
            if victim.metadata.deletion_timestamp is not None:
                continue
            try:
                self.preempt_pod(candidate, pod, victim)
            except Exception as exc:
                return Status.error(exc)
        self._clear_lower_priority_nominations(pod, candidate.name)
        return None

    def prepare_candidate_async(self, candidate: Candidate, pod: Pod) -> None:
        """Asynchronous preparation (SchedulerAsyncPreemption, on in v1.35), run to completion
        at once: nothing happens when every victim is already terminating; a failed eviction
        stops the remaining ones without failing the preemptor's nomination."""
        victims = [v for v in candidate.victims.pods if v.metadata.deletion_timestamp is None]
        if not victims:
            return
        self._clear_lower_priority_nominations(pod, candidate.name)
        for victim in victims:
            try:
                self.preempt_pod(candidate, pod, victim)
            except Exception:
                return

    def _clear_lower_priority_nominations(self, pod: Pod, node_name: str) -> None:
        for other in lower_priority_nominated_pods(self.handle, pod, node_name):
            self.handle.host.clear_nominated_node_name(other)


def _leading_by_default_criteria(
    nodes_to_victims: Mapping[str, Victims], candidates: list[str]
) -> list[str] | None:
    """The candidates the first four default criteria (PDB violations, highest priority,
    priority sum, number of victims) keep, in order: those with the greatest tuple of the
    four scores, which is what filtering criterion by criterion keeps. The pure criteria are
    computed in one pass; the start times (which may read the clock) are left to the loop."""
    scores = []
    for node in candidates:
        v = nodes_to_victims[node]
        if v.summary is not None:
            scores.append(v.summary[0])
            continue
        if not v.pods:
            return None  # criterion by criterion (min_highest_priority raises there)
        scores.append(_pure_criteria(v.pods, v.num_pdb_violations))
    top = max(scores)
    if min(top) < MIN_INT64:  # below the loop's floor: let the loop decide
        return None
    if scores.count(top) == 1:
        return [candidates[scores.index(top)]]
    return [node for node, score in zip(candidates, scores, strict=True) if score == top]


_NO_NAMES: frozenset[str] = frozenset()


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_NOW_BASE = 1 << 62  # above every real start time, in microseconds since the epoch
_now_ticks = itertools.count(1)


def pod_start_time(pod: Pod) -> int:
    """GetPodStartTime in microseconds since the epoch. A pod not started yet gets "now":
    later than any recorded start, and later at every call, as time.Now() is."""
    st = pod.status.start_time
    if st is None:
        return _NOW_BASE + next(_now_ticks)
    return _micros(st)


@functools.lru_cache(maxsize=1 << 16)
def _micros(st: _dt.datetime) -> int:
    """Microseconds since the epoch (naive times are UTC); remembered, as victims' start
    times are compared again and again."""
    if st.tzinfo is None:
        st = st.replace(tzinfo=_dt.timezone.utc)
    return (st - _EPOCH) // _dt.timedelta(microseconds=1)


def _pure_criteria(pods: Sequence[Pod], num_pdb_violations: int) -> tuple[int, int, int, int]:
    """The scores of the four pure default criteria for non-empty ``pods``."""
    prios = [p.spec.priority or 0 for p in pods]
    n = len(pods)
    return (-num_pdb_violations, -prios[0], -(sum(prios) + _PRIORITY_OFFSET * n), -n)


def victims_summary(pods: Sequence[Pod], num_pdb_violations: int) -> VictimsSummary:
    """The default criteria's scores of non-empty victims: the latest-start score only when
    every victim has a start time (a pod without one reads the clock, at pick time)."""
    if any(p.status.start_time is None for p in pods):
        return _pure_criteria(pods, num_pdb_violations), None
    return (
        _pure_criteria(pods, num_pdb_violations),
        earliest_pod_start_time(Victims(list(pods)), default_start_time),
    )


def default_start_time(pod: Pod) -> int:
    """DefaultPreemption's pod_start_time for a pod with a start time (microseconds since
    the epoch); pods without one are never summarized."""
    st = pod.status.start_time
    assert st is not None
    return _micros(st)


def _summarized_or(f: ScoreFunc, nodes_to_victims: Mapping[str, Victims]) -> ScoreFunc:
    """``f``, or the latest-start score stored in the node's victims summary."""

    def score(node: str) -> int:
        summary = nodes_to_victims[node].summary
        if summary is not None and summary[1] is not None:
            return summary[1]
        return f(node)

    return score


def lower_priority_nominated_pods(handle: Any, pod: Pod, node_name: str) -> list[Pod]:
    """Pods nominated to ``node_name`` with a lower priority than ``pod``: they may no longer
    fit there once ``pod`` is nominated."""
    nominated_for = getattr(handle, "nominated_pods_for_node", None)
    if nominated_for is None:
        return []
    prio = pod_priority(pod)
    return [pi.pod for pi in nominated_for(node_name) if pod_priority(pi.pod) < prio]


def earliest_pod_start_time(victims: Victims, start_time: Callable[[Pod], int]) -> int | None:
    """The earliest start time among the highest-priority victims (GetEarliestPodStartTime)."""
    if not victims.pods:
        return None
    first = victims.pods[0]
    earliest = start_time(first)
    max_priority = pod_priority(first)
    # The first pod again would not lower ``earliest`` (a pod without a start time reads a
    # later "now"): the loop starts at the second.
    for p in victims.pods[1:]:
        prio = pod_priority(p)
        if prio == max_priority:
            t = start_time(p)
            if t < earliest:
                earliest = t
        elif prio > max_priority:
            max_priority = prio
            earliest = start_time(p)
    return earliest
