"""DefaultPreemption PostFilter: when a pod fits nowhere, evict lower-priority pods from the
node where that hurts least and nominate the pod there (kube-scheduler v1.35)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.api.selectors import Selector
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import NodeToStatusReader, PostFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins.defaultpreemption.args import DefaultPreemptionArgs
from kschedlib.plugins.defaultpreemption.dry_run_cache import DryRunCache, DryRunMemo
from kschedlib.plugins.defaultpreemption.evaluator import (
    Candidate,
    Evaluator,
    ScoreFunc,
    Victims,
    pod_start_time,
)
from kschedlib.plugins.defaultpreemption.go_sort import sort_slice

NAME = "DefaultPreemption"
NO_VICTIMS_FOUND = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

IsEligiblePodFunc = Callable[[NodeInfo, PodInfo, Pod], bool]
MoreImportantPodFunc = Callable[[Pod, Pod], bool]

def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """Higher priority first; at equal priority the pod that started earlier."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_time(pod1) < pod_start_time(pod2)


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, with the DisruptionTarget condition the scheduler sets on its victims."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for cond in pod.status.conditions:
        if cond.type == DISRUPTION_TARGET:
            return cond.status == "True" and cond.reason == PREEMPTION_BY_SCHEDULER
    return False


def _pdb_selector(pdb: PodDisruptionBudget) -> Selector | None:
    """The PDB's selector, or None when it selects nothing (nil or empty selector)."""
    sel = pdb.spec.selector
    if sel is None:
        return None
    compiled = sel.as_selector()
    return None if compiled.is_empty() else compiled


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (order kept) into those whose eviction would exceed a matching PDB's
    disruptionsAllowed, counted cumulatively in order, and the others."""
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    selectors = [_pdb_selector(pdb) for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        labels = pod.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != pod.metadata.namespace:
                    continue
                sel = selectors[i]
                if sel is None or not sel.matches(labels):
                    continue
                if pod.metadata.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def _always_eligible(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    return True


def _skip_after_pod_deletion(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Preemption never decides requeueing: the plugins that rejected the pod do."""
    return QueueingHint.QueueSkip


class DefaultPreemption:
    """PostFilter plugin running kube-scheduler's default preemption."""

    __slots__ = (
        "handle",
        "args",
        "evaluator",
        "is_eligible_pod",
        "more_important_pod",
        "async_preemption",
        "_own_rng",
        "dry_runs",
    )

    def __init__(
        self,
        args: DefaultPreemptionArgs,
        handle: Any,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.handle = handle
        self.args = args
        self.async_preemption = async_preemption
        self._own_rng: random.Random | None = None
        # Stored dry-run outcomes (exact reuse; see dry_run_cache.py).
        self.dry_runs: DryRunCache | None = DryRunCache()
        self.is_eligible_pod: IsEligiblePodFunc = _always_eligible
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        self.evaluator = Evaluator(NAME, handle, self, async_preemption=async_preemption)

    @property
    def name(self) -> str:
        return NAME

    def clone(self, handle: Any) -> DefaultPreemption:
        """A copy bound to ``handle`` whose random source continues from this one's state."""
        new = DefaultPreemption(self.args, handle, async_preemption=self.async_preemption)
        new.is_eligible_pod = self.is_eligible_pod
        new.more_important_pod = self.more_important_pod
        if self._own_rng is not None:
            rng = random.Random()
            rng.setstate(self._own_rng.getstate())
            new._own_rng = rng
        return new

    # --- extension points ---------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        msg = status.message() if status is not None else ""
        if msg:
            assert status is not None
            if status.code == Code.Error:
                return result, Status.error("preemption: " + msg)
            return result, Status(status.code, ("preemption: " + msg,))
        return result, status

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Evictions complete within PostFilter here, so no pod ever waits for them."""
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.async_preemption:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), _skip_after_pod_deletion
            )
        ]

    # --- preemption.Interface -----------------------------------------------------------

    def _rng(self) -> random.Random | None:
        """The random source of the candidate offset (the args', the handle's, or one seeded
        with the handle's ``rng_seed``); None in deterministic mode, where the offset is 0."""
        if self.args.deterministic or getattr(self.handle, "deterministic", False):
            return None
        rng = self.args.rng or getattr(self.handle, "rng", None)
        if isinstance(rng, random.Random):
            return rng
        if self._own_rng is None:
            self._own_rng = random.Random(getattr(self.handle, "rng_seed", None))
        return self._own_rng

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """minCandidateNodesPercentage of the nodes, at least minCandidateNodesAbsolute,
        at most all of them."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        rng = self._rng()
        offset = rng.randrange(num_nodes) if rng is not None and num_nodes > 0 else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Victims]
    ) -> list[ScoreFunc] | None:
        return None

    # The module function itself: the evaluator calls it for every victim it compares.
    pod_start_time = staticmethod(pod_start_time)

    @property
    def pod_start_time_is_default(self) -> bool:
        """Whether pod_start_time is the module's (start times of started pods are then
        fixed, and the evaluator may keep them with stored dry-run outcomes)."""
        return self.pod_start_time is pod_start_time

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return pod_priority(victim.pod) < pod_priority(preemptor) and self.is_eligible_pod(
            node_info, victim, preemptor
        )

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status
    ) -> tuple[bool, str]:
        """Not with preemptionPolicy Never, nor while victims of an earlier preemption are
        still terminating on the pod's nominated node (unless that node is now unresolvable)."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if nominated_node_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            try:
                node_info = self.handle.snapshot_shared_lister().node_infos().get(nominated)
            except KeyError:
                node_info = None
            if node_info is not None:
                for pi in node_info.pods:
                    if self.is_preemption_allowed(
                        node_info, pi, pod
                    ) and pod_terminating_by_preemption(pi.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def dry_run_memo(
        self, state: CycleState, pod: Pod, pdbs: Sequence[PodDisruptionBudget]
    ) -> DryRunMemo | None:
        """Stored dry-run outcomes for this preemption attempt, or None to recompute them all:
        only with the framework's node-local cache on and this class's own victim selection,
        eligibility and importance rules."""
        dry_runs = self.dry_runs
        if dry_runs is None or getattr(self.handle, "node_local_cache", None) is None:
            return None
        cls = type(self)
        if (
            self.is_eligible_pod is not _always_eligible
            or self.more_important_pod is not more_important_pod
            or cls.select_victims_on_node is not DefaultPreemption.select_victims_on_node
            or cls.is_preemption_allowed is not DefaultPreemption.is_preemption_allowed
        ):
            return None
        return dry_runs.memo(self.handle, state, pod, pdbs)

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods to evict from this (copied) node for ``pod`` to fit: remove every
        lower-priority pod, then reprieve them one by one, most important first, PDB-violating
        ones before the others."""
        fh = self.handle

        def remove_pod(pi: PodInfo) -> Status | None:
            try:
                node_info.remove_pod(pi.pod)
            except KeyError as exc:
                return Status.error(exc.args[0] if exc.args else str(exc))
            st = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
            return None if st is None or st.code == Code.Success else Status.error(st.as_error())

        def add_pod(pi: PodInfo) -> Status | None:
            node_info.add_pod(pi)
            st = fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
            return None if st is None or st.code == Code.Success else Status.error(st.as_error())

        potential = [pi for pi in node_info.pods if self.is_preemption_allowed(node_info, pi, pod)]
        for pi in potential:
            err = remove_pod(pi)
            if err is not None:
                return [], 0, err
        if not potential:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS_FOUND,))

        st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if st is not None and st.code != Code.Success:
            return [], 0, st

        more_important = self.more_important_pod
        sort_slice(potential, lambda a, b: more_important(a.pod, b.pod))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(pi: PodInfo) -> tuple[bool, Status | None]:
            err = add_pod(pi)
            if err is not None:
                return False, err
            st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            fits = st is None or st.code == Code.Success
            if not fits:
                err = remove_pod(pi)
                if err is not None:
                    return False, err
                victims.append(pi)
            return fits, None

        num_violating = 0
        for pi in violating:
            fits, err = reprieve(pi)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating += 1
        for pi in non_violating:
            _, err = reprieve(pi)
            if err is not None:
                return [], 0, err

        if violating and non_violating:
            sort_slice(victims, lambda a, b: more_important(a.pod, b.pod))
        return [pi.pod for pi in victims], num_violating, None


def new(args: DefaultPreemptionArgs | None, handle: Any) -> DefaultPreemption:
    """Factory: validates the args as kube-scheduler's New does."""
    if args is None:
        args = DefaultPreemptionArgs()
    if not isinstance(args, DefaultPreemptionArgs):
        raise TypeError(f"got args of type {type(args).__name__}, want DefaultPreemptionArgs")
    errs = args.validate()
    if errs:
        raise ValueError("; ".join(f"{path}: {msg}" for path, msg in errs))
    return DefaultPreemption(
        args, handle, async_preemption=features_of(handle).enable_async_preemption
    )


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new, DefaultPreemptionArgs),)
