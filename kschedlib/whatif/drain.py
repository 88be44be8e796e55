"""Node drain and scale-down simulation with cluster-autoscaler's drainability rules.

Pods on the drained nodes are classified as cluster-autoscaler's default rules do
(simulator/drainability/rules, default options: skip nodes with system pods and with local
storage, custom-controller checks on): mirror and DaemonSet pods stay with their node,
long-terminating pods are ignored, ``safe-to-evict: "true"`` pods are movable whatever
else holds, and pods that are not replicated (or whose controller is missing), kube-system
pods without a PDB, ``safe-to-evict: "false"`` pods, pods with local storage and pods whose
PDB allows no more disruptions block the drain. The movable pods are then scheduled by the
full scheduling cycle (without preemption) onto the remaining nodes, in a fork. Terminal
pods never reach the scheduler's cache, so they are ignored by construction.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from kschedlib.api.meta import OwnerReference
from kschedlib.api.node import Taint
from kschedlib.api.pod import Pod
from kschedlib.api.selectors import selector_from
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.errors import CacheError, InvalidObjectError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.results import Outcome
from kschedlib.whatif.capacity.batched import FastPath
from kschedlib.whatif.capacity.loop import collector_paused, fast_eligible
from kschedlib.whatif.capacity.replicas import pod_info_like
from kschedlib.whatif_reports import (
    DrainReport,
    PodDrainResult,
    RemovableNode,
    RemovableNodesReport,
)

if TYPE_CHECKING:
    from kschedlib.framework.types import NodeInfo
    from kschedlib.scheduler import Scheduler

__all__ = [
    "AutoscalerDrainOptions",
    "FitPlacer",
    "PdbTracker",
    "SAFE_TO_EVICT",
    "classify_pod",
    "drain_in_place",
    "removable_nodes",
    "simulate_drain",
]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_POD = "kubernetes.io/config.mirror"
LONG_TERMINATING_EXTRA = 30.0
DEFAULT_TERMINATION_GRACE = 30
_REPLICATED_KINDS = {"ReplicationController", "Job", "ReplicaSet", "StatefulSet"}
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
"""The taint cluster-autoscaler puts on a node it removes (kept on the simulated ghost node)."""


@attrs.define(slots=True, frozen=True)
class AutoscalerDrainOptions:
    """cluster-autoscaler's NodeDeleteOptions that change the rules (its defaults)."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    utilization_threshold: float = 0.5
    """removable_nodes: only nodes below this utilization are candidates."""


def _controller_ref(pod: Pod) -> OwnerReference | None:
    for o in pod.metadata.owner_references:
        if o.controller:
            return o
    return None


def _controller(pod: Pod) -> tuple[str, str] | None:
    ref = _controller_ref(pod)
    return None if ref is None else (ref.kind, ref.name)


def _is_daemonset_pod(pod: Pod) -> bool:
    ref = _controller(pod)
    if ref is not None and ref[0] == "DaemonSet":
        return True
    return pod.metadata.annotations.get(DAEMONSET_POD) == "true"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _missing_controller(sched: Scheduler, pod: Pod) -> str | None:
    """cluster-autoscaler's replicacount rule: the controller kinds it looks up (Job,
    ReplicaSet, ReplicationController; DaemonSet and StatefulSet of group apps) must exist;
    the reason when it does not, None otherwise (other kinds are not looked up)."""
    ref = _controller_ref(pod)
    if ref is None:
        return None
    name = f"{pod.metadata.namespace}/{pod.metadata.name}"
    key = f"{pod.metadata.namespace}/{ref.name}"
    kind, group = ref.kind, _group(ref.api_version)
    if kind == "ReplicationController":
        what = "replication controller for {} is not available"
    elif _is_daemonset_pod(pod):
        if group != "apps" or kind != "DaemonSet":
            return None
        what = "daemonset for {} is not present"
    elif kind == "Job":
        what = "job for {} is not available"
    elif kind == "ReplicaSet":
        what = "replication controller for {} is not available"
    elif kind == "StatefulSet" and group == "apps":
        what = "statefulset for {} is not available"
    else:
        return None
    if sched.objects.get_object(kind, key) is not None:
        return None
    return "ControllerNotFound: " + what.format(name)


def _long_terminating(pod: Pod, now: float) -> bool:
    ts = pod.metadata.deletion_timestamp
    if ts is None:
        return False
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    grace = pod.spec.termination_grace_period_seconds
    grace = DEFAULT_TERMINATION_GRACE if grace is None else grace
    return ts.timestamp() + grace + LONG_TERMINATING_EXTRA < now


def _blocking_local_storage(pod: Pod) -> bool:
    allowed = {
        v.strip()
        for v in pod.metadata.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",")
        if v.strip()
    }
    for v in pod.spec.volumes:
        local = v.host_path is not None or (
            v.empty_dir is not None and v.empty_dir.get("medium") != "Memory"
        )
        if local and v.name not in allowed:
            return True
    return False


class PdbTracker:
    """cluster-autoscaler's RemainingPdbTracker: disruptions left per PDB. Each pod is checked
    on its own (as the pdb rule does); the pods of a node are taken from the budgets once the
    node's drain is accepted, so later nodes see what is left."""

    def __init__(self, pdbs: Sequence[PodDisruptionBudget]) -> None:
        self.pdbs = [(p, selector_from(p.spec.selector)) for p in pdbs]
        self.left = {id(p): p.status.disruptions_allowed for p in pdbs}

    @classmethod
    def of(cls, sched: Scheduler) -> PdbTracker:
        return cls([
            o for o in sched.objects.list_objects("PodDisruptionBudget")
            if isinstance(o, PodDisruptionBudget)
        ])

    def copy(self) -> PdbTracker:
        new = PdbTracker.__new__(PdbTracker)
        new.pdbs = self.pdbs
        new.left = dict(self.left)
        return new

    def matching(self, pod: Pod) -> list[PodDisruptionBudget]:
        return [
            p for p, sel in self.pdbs
            if p.metadata.namespace == pod.metadata.namespace
            and sel.matches(pod.metadata.labels)
        ]

    def can_remove(self, pod: Pod) -> bool:
        return all(self.left[id(p)] >= 1 for p in self.matching(pod))

    def remove(self, pod: Pod) -> None:
        for p in self.matching(pod):
            self.left[id(p)] -= 1


def classify_pod(
    sched: Scheduler, pod: Pod, pdbs: PdbTracker, options: AutoscalerDrainOptions, now: float
) -> tuple[str, str]:
    """(action, reason): ``stays``, ``ignored``, ``movable`` or ``blocked`` for one pod,
    by cluster-autoscaler's default rules in their order."""
    ann = pod.metadata.annotations
    name = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if MIRROR_POD in ann:
        return "stays", "mirror pod"
    if _long_terminating(pod, now):
        return "ignored", "long-terminating pod"
    ref = _controller(pod)
    if options.skip_nodes_with_custom_controller_pods:
        missing = _missing_controller(sched, pod)
        if missing is not None:
            return "blocked", missing
    if _is_daemonset_pod(pod):
        return "stays", "DaemonSet pod"
    if ann.get(SAFE_TO_EVICT) == "true":
        return "movable", 'annotated safe-to-evict: "true"'
    replicated = ref is not None
    if options.skip_nodes_with_custom_controller_pods:
        replicated = replicated and ref is not None and ref[0] in _REPLICATED_KINDS
    if not replicated:
        return "blocked", f"NotReplicated: {name} is not replicated"
    if (
        options.skip_nodes_with_system_pods
        and pod.metadata.namespace == "kube-system"
        and not pdbs.matching(pod)
    ):
        return "blocked", (
            "UnmovableKubeSystemPod: non-daemonset, non-mirrored, non-pdb-assigned kube-system "
            f"pod present: {pod.metadata.name}"
        )
    if ann.get(SAFE_TO_EVICT) == "false":
        return "blocked", (
            f"NotSafeToEvictAnnotation: pod annotated as not safe to evict present: {pod.metadata.name}"
        )
    if options.skip_nodes_with_local_storage and _blocking_local_storage(pod):
        return "blocked", f"LocalStorageRequested: pod with local storage present: {pod.metadata.name}"
    if not pdbs.can_remove(pod):
        return "blocked", f"NotEnoughPdb: not enough pod disruption budget to move {name}"
    return "movable", ""


def _classify_nodes(
    sched: Scheduler, nodes: Sequence[str], options: AutoscalerDrainOptions, pdbs: PdbTracker
) -> tuple[dict[str, PodDrainResult], list[tuple[Pod, str]]]:
    """Every pod of ``nodes`` classified (by UID), and the movable ones with their node;
    each node's movable pods are taken from the PDB budgets after the node."""
    now = sched.clock.now()
    rows: dict[str, PodDrainResult] = {}
    movable: list[tuple[Pod, str]] = []
    for node in nodes:
        taken: list[Pod] = []
        for pi in sched.cache.get_node(node).pods:
            pod = pi.pod
            action, reason = classify_pod(sched, pod, pdbs, options, now)
            if action == "movable":
                movable.append((pod, node))
                taken.append(pod)
            rows[pod.uid] = PodDrainResult(pod.key, node, action, reason)
        for pod in taken:
            pdbs.remove(pod)
    return rows, movable


def drain_in_place(
    sched: Scheduler,
    node_names: Sequence[str],
    options: AutoscalerDrainOptions | None = None,
    pdbs: PdbTracker | None = None,
    *,
    stop_at_failure: bool = False,
    placer: FitPlacer | None = None,
) -> DrainReport:
    """Drain ``node_names`` in ``sched`` itself (use a fork or a transaction): classify their
    pods node by node, remove the nodes, and schedule the movable pods elsewhere without
    preemption. ``pdbs`` (updated in place) carries PDB budgets across calls.
    ``stop_at_failure``: stop at the first pod that cannot be placed (the drain failed; the
    pods after it are left pending and reported ``movable``), for callers that undo it.
    ``placer``: place each pod on the first node that passes the filters (see FitPlacer)
    instead of running its scheduling cycle."""
    return _drain(sched, node_names, options, pdbs, stop_at_failure, placer, None)


def _drain(
    sched: Scheduler,
    node_names: Sequence[str],
    options: AutoscalerDrainOptions | None,
    pdbs: PdbTracker | None,
    stop_at_failure: bool,
    placer: FitPlacer | None,
    runs: Runs | None,
) -> DrainReport:
    """drain_in_place; ``runs``: moved pods that are replicas of one another take the
    batched replica cycle (the pods left when a drain stops at a failure are not queued:
    for callers that throw the cluster away then)."""
    options = options or AutoscalerDrainOptions()
    has_node = sched.cache.has_node
    names = list(dict.fromkeys(node_names))
    missing = tuple(n for n in names if not has_node(n))
    present = [n for n in names if has_node(n)]
    if pdbs is None:
        pdbs = PdbTracker.of(sched)
    rows, movable = _classify_nodes(sched, present, options, pdbs)
    saved_post_filter = {name: list(f.post_filter_plugins) for name, f in sched.frameworks.items()}
    for f in sched.frameworks.values():
        f.post_filter_plugins.clear()  # autoscaler simulations move pods, they do not preempt
    try:
        # cluster-autoscaler (PR 9288) keeps each drained node as a tainted ghost without pods
        # while the pods are placed, so topology spread still counts its domains.
        for node in present:
            _replace_with_ghost(sched, node)
        pending: list[Pod] = []
        for pod, _node in movable:
            fresh = pod.with_node_name("")  # (what evolve gives, without its validation)
            if pod.status.nominated_node_name:
                fresh = fresh.with_nominated_node_name("")
            if sched.responsible_for(fresh):
                if placer is None and runs is None:
                    sched.add_pod(fresh)
                pending.append(fresh)
            else:
                r = rows[pod.uid]
                rows[pod.uid] = attrs.evolve(
                    r, action="unschedulable",
                    reason=f'no profile for schedulerName "{pod.spec.scheduler_name}"',
                )
        for pod in pending:
            if placer is not None:
                r = rows[pod.uid]
                dest = placer.place(sched, pod)
                if dest is not None:
                    sched.add_pod(pod.with_node_name(dest))
                    rows[pod.uid] = attrs.evolve(r, action="moved", destination=dest)
                    continue
                reason = f"failed to find place for {pod.key}"
                rows[pod.uid] = attrs.evolve(r, action="unschedulable", reason=reason)
                if stop_at_failure:
                    break
                continue
            if runs is not None:
                dest = runs.place(sched, pod)
                if dest is not None:
                    r = rows[pod.uid]
                    rows[pod.uid] = PodDrainResult(r.pod, r.node, "moved", r.reason, dest)
                    continue
                sched.add_pod(pod)
            result = sched.schedule_pod(pod)
            r = rows[pod.uid]
            if result is not None and result.outcome == Outcome.Scheduled:
                rows[pod.uid] = attrs.evolve(r, action="moved", destination=result.node)
            else:
                why = result.message if result is not None else "gated at PreEnqueue"
                rows[pod.uid] = attrs.evolve(r, action="unschedulable", reason=why)
                if stop_at_failure:
                    break
        for node in present:  # the simulation is over: the ghosts go
            sched.delete_node(node)
    finally:
        for name, f in sched.frameworks.items():
            f.post_filter_plugins[:] = saved_post_filter[name]
    return DrainReport(tuple(names), tuple(rows.values()), missing)


class FitPlacer:
    """Placement by feasibility, as cluster-autoscaler's scale-down simulation checks it: a
    pod goes to the first node, in the scheduler's node order starting after the node the
    previous pod went to (round robin), that passes the scheduler's PreFilter and Filter
    plugins (nominated pods counted as the scheduler counts them); no scoring, no
    scheduling cycle."""

    def __init__(self) -> None:
        self.last = 0
        """Where the next search starts (an index into the node list, taken modulo)."""

    def place(self, sched: Scheduler, pod: Pod) -> str | None:
        """The node for the pending ``pod`` (None when no node passes the filters)."""
        fwk = sched.frameworks[pod.spec.scheduler_name]
        sched.cache.update_snapshot(sched.snapshot)
        nodes = sched.snapshot.node_infos().list()
        if not nodes:
            return None
        state = CycleState()
        pre, st, _ = fwk.run_pre_filter_plugins(state, pod)
        if st is not None and st.code != Code.Success:
            return None
        allowed = None if pre is None or pre.all_nodes() else set(pre.node_names or ())
        filters = fwk.filter_functions(state)
        run = (
            fwk.run_filter_plugins_with_nominated_pods if fwk.has_nominated_pods()
            else fwk.run_filter_plugins
        )
        n = len(nodes)
        start = self.last % n
        for i in range(n):
            ni = nodes[(start + i) % n]
            if allowed is not None and ni.name not in allowed:
                continue
            verdict = run(state, pod, ni, filters)
            if verdict is None or verdict.code == Code.Success:
                self.last = (start + i + 1) % n
                return ni.name
        return None


def _replace_with_ghost(sched: Scheduler, node: str) -> None:
    """The node without its pods, tainted ``ToBeDeletedByClusterAutoscaler:NoSchedule``."""
    info = sched.cache.get_node(node)
    obj = info.node
    for pi in list(info.pods):
        with contextlib.suppress(CacheError):
            sched.delete_pod(pi.pod)
    if obj is None:
        return
    taint = Taint(key=TO_BE_DELETED_TAINT, value=str(int(sched.clock.now())), effect="NoSchedule")
    ghost = attrs.evolve(obj, spec=attrs.evolve(obj.spec, taints=(*obj.spec.taints, taint)))
    sched.update_node(ghost)


def simulate_drain(
    sched: Scheduler, node_names: Sequence[str], options: AutoscalerDrainOptions | None = None
) -> DrainReport:
    """Drain in a fork of ``sched``: ``sched`` itself does not change."""
    return drain_in_place(sched.fork(), node_names, options)


def utilization(sched: Scheduler, node: str) -> float:
    """Requested share of allocatable, the larger of CPU and memory (0 for an empty node)."""
    ni = sched.cache.get_node(node)
    out = 0.0
    if ni.allocatable.milli_cpu > 0:
        out = max(out, ni.requested.milli_cpu / ni.allocatable.milli_cpu)
    if ni.allocatable.memory > 0:
        out = max(out, ni.requested.memory / ni.allocatable.memory)
    return out


class _Checkpointed:
    """The working cluster of removable_nodes, drained in place without a transaction: a
    fork taken before the first drain since the last failure, and the drains accepted since,
    replayed onto that fork when a drain fails. Scheduling is deterministic given the
    cluster, the round-robin start index and the random state (a fork copies all three;
    the fit placer's cursor is kept with the checkpoint), so the replay rebuilds exactly the
    cluster a rollback would have restored; drains that work, most of them, cost no fork and
    keep the scheduler's caches warm."""

    def __init__(
        self, work: Scheduler, placer: FitPlacer | None = None, batch: bool = True
    ) -> None:
        self.work = work
        self.placer = placer
        self.runs: Runs | None = Runs() if placer is None and batch else None
        """The batched paths of moved pods (None: a cycle per pod, or fit mode)."""
        self.base: Scheduler | None = None
        self.base_cursor = 0
        self.since: list[tuple[str, PdbTracker | None]] = []
        """Accepted since the checkpoint: a drain (with the budgets it started from) or, for
        None, a node deleted outright."""

    def drain(
        self, node: str, options: AutoscalerDrainOptions, pdbs: PdbTracker,
        doomed: bool = False,
    ) -> DrainReport:
        """drain_in_place of one node; the cluster is as before when the drain fails.
        ``doomed``: the drain cannot work (its pods need more than the other nodes have
        left): it runs in a transaction, whose rollback costs what the drain changed, not
        a replay of the drains accepted since the checkpoint."""
        before = pdbs.copy()
        placer = self.placer
        cursor = placer.last if placer is not None else 0
        if doomed:
            # (The batched paths keep what they knew before: a rollback gives every node it
            # restores a fresh generation, which they read as a change made by others.)
            with self.work.transaction() as txn:
                report = _drain(self.work, [node], options, pdbs, True, placer, None)
                if report.success:
                    txn.commit()
            if report.success and self.base is not None:
                self.since.append((node, before))
            elif not report.success and placer is not None:
                placer.last = cursor
            return report
        if self.base is None:
            self.base = self.work.fork()
            self.base_cursor = cursor
            self.since = []
        report = _drain(self.work, [node], options, pdbs, True, placer, self.runs)
        if report.success:
            self.since.append((node, before))
            return report
        work = self.base
        if placer is not None:
            placer.last = self.base_cursor
        runs = self.runs = Runs() if self.runs is not None else None
        for done, budgets in self.since:
            if budgets is None:
                work.delete_node(done)
                continue
            again = _drain(work, [done], options, budgets, False, placer, runs)
            if not again.success:  # cannot happen: the same drain on the same cluster
                raise RuntimeError(f"removable_nodes: replaying the drain of {done} failed")
        self.work, self.base, self.since = work, None, []
        return report

    def delete(self, node: str) -> None:
        """Delete a node without pods to move (replayed the same way)."""
        self.work.delete_node(node)
        if self.base is not None:
            self.since.append((node, None))


class _Transactional:
    """The working cluster of removable_nodes with each drain in a transaction (the
    reference the checkpointed cluster is tested against)."""

    def __init__(self, work: Scheduler, placer: FitPlacer | None = None) -> None:
        self.work = work
        self.placer = placer

    def drain(
        self, node: str, options: AutoscalerDrainOptions, pdbs: PdbTracker,
        doomed: bool = False,
    ) -> DrainReport:
        """drain_in_place of one node, rolled back when it fails."""
        placer = self.placer
        cursor = placer.last if placer is not None else 0
        with self.work.transaction() as txn:
            report = drain_in_place(
                self.work, [node], options, pdbs, stop_at_failure=True, placer=placer
            )
            if report.success:
                txn.commit()
        if not report.success and placer is not None:
            placer.last = cursor
        return report

    def delete(self, node: str) -> None:
        self.work.delete_node(node)


class _Spare:
    """CPU, memory and pod slots left free over the nodes of the working cluster, kept up
    to date as drains are accepted: a drain whose pods need more than the other nodes have
    left cannot work (the scheduler's resource check fails for one of them at least)."""

    def __init__(self, work: Scheduler) -> None:
        self.cpu = self.memory = self.pods = 0
        for name in work.cache.node_names():
            self._add(work.cache.get_node(name), 1)

    def _add(self, ni: NodeInfo, sign: int) -> None:
        a, r = ni.allocatable, ni.requested
        self.cpu += sign * (a.milli_cpu - r.milli_cpu)
        self.memory += sign * (a.memory - r.memory)
        self.pods += sign * (a.allowed_pod_number - len(ni.pods))

    def exceeded(self, ni: NodeInfo, moving: Sequence[PodInfo]) -> bool:
        """Whether ``moving`` (pods of ``ni``) need more than the nodes but ``ni`` have left."""
        a, r = ni.allocatable, ni.requested
        cpu = sum(pi.resources.requests.milli_cpu for pi in moving)
        memory = sum(pi.resources.requests.memory for pi in moving)
        return (
            cpu > self.cpu - (a.milli_cpu - r.milli_cpu)
            or memory > self.memory - (a.memory - r.memory)
            or len(moving) > self.pods - (a.allowed_pod_number - len(ni.pods))
        )

    def remove(self, ni: NodeInfo, moved: Sequence[PodInfo]) -> None:
        """``ni`` (as it was before its drain) went and its ``moved`` pods went elsewhere."""
        self._add(ni, -1)
        self.cpu -= sum(pi.resources.requests.milli_cpu for pi in moved)
        self.memory -= sum(pi.resources.requests.memory for pi in moved)
        self.pods -= len(moved)


def removable_nodes(
    sched: Scheduler, candidates: Sequence[str] | None = None,
    options: AutoscalerDrainOptions | None = None, *, checkpoints: bool = True,
    mode: str = "schedule", batch: bool = True,
) -> RemovableNodesReport:
    """Scale-down simulation: candidates below the utilization threshold, least utilized
    first, each drained on the cluster the earlier removals left (kept if the drain works).
    ``mode="schedule"`` places the moved pods by their scheduling cycles, as the scheduler
    would; ``mode="fit"`` on the first node that passes the filters, round robin, as
    cluster-autoscaler's simulation does (FitPlacer): faster, placements may differ.
    ``checkpoints=False`` drains each candidate in a transaction (the reference the
    checkpointed loop is tested against). In the default mode, moved pods that are
    replicas of one another (same namespace, labels, owner and spec) take capacity()'s
    batched replica cycle, which gives what their scheduling cycles give; ``batch=False``
    (or ``checkpoints=False``) runs every cycle."""
    if mode not in ("schedule", "fit"):
        raise InvalidObjectError("removable_nodes", "mode", f'must be "schedule" or "fit", got {mode!r}')
    options = options or AutoscalerDrainOptions()
    placer = FitPlacer() if mode == "fit" else None
    state: _Checkpointed | _Transactional = (
        _Checkpointed(sched.fork(), placer, batch) if checkpoints
        else _Transactional(sched.fork(), placer)
    )
    work = state.work
    names = list(candidates) if candidates is not None else work.cache.node_names()
    known = set(work.cache.node_names())
    util = {n: utilization(work, n) for n in names if n in known}
    order = sorted(util, key=lambda n: (util[n], n))
    removable: list[RemovableNode] = []
    kept: dict[str, str] = {n: "unknown node" for n in names if n not in known}
    budgets = PdbTracker.of(work)
    spare = _Spare(work)
    # The working cluster stays alive throughout: automatic collections would only walk it.
    with collector_paused():
        for node in order:
            if util[node] >= options.utilization_threshold:
                kept[node] = (
                    f"utilization {util[node]:.2f} is not below the threshold "
                    f"{options.utilization_threshold:.2f}"
                )
                continue
            trial = budgets.copy()
            rows, movable = _classify_nodes(state.work, [node], options, trial)
            blocked = [r for r in rows.values() if r.blocking]
            if blocked:  # no need to try moving anything
                kept[node] = f"{blocked[0].pod}: {blocked[0].action}: {blocked[0].reason}"
                continue
            info = state.work.cache.get_node(node)
            if not movable:  # nothing to move: the node just goes
                state.delete(node)
                spare.remove(info, ())
                budgets = trial
                removable.append(RemovableNode(node, util[node], 0))
                continue
            uids = {pod.uid for pod, _ in movable}
            moving = [pi for pi in info.pods if pi.pod.uid in uids]
            trial = budgets.copy()
            report = state.drain(node, options, trial, spare.exceeded(info, moving))
            if report.success:
                spare.remove(info, moving)
                budgets = trial
                moved = sum(1 for p in report.pods if p.action == "moved")
                removable.append(RemovableNode(node, util[node], moved))
            else:
                first = report.blockers[0]
                kept[node] = f"{first.pod}: {first.action}: {first.reason}"
    return RemovableNodesReport(tuple(removable), kept)


class Runs:
    """Moved pods that are replicas of one another placed through capacity()'s batched
    replica cycle (FastPath), one per template, kept from drain to drain: each follows the
    node removals and the changes the drains make, so a moved pod costs what its window
    needs rather than a whole scheduling cycle. Setting one up costs a pass over every node
    and pod, so a template gets one only once ``START`` of its pods have moved the ordinary
    way, and at most ``PATHS`` templates do (none is dropped: no set-up is paid twice).
    Pods it cannot take go the ordinary way."""

    START = 16
    PATHS = 8
    TEMPLATES = 256
    """Templates whose moved pods are counted at most."""

    def __init__(self) -> None:
        self.runs: dict[tuple[Any, ...], list[_Run]] = {}
        self.templates = 0
        self.paths = 0

    def place(self, sched: Scheduler, pod: Pod) -> str | None:
        """The node the pending ``pod`` went to (bound in ``sched``), or None: nothing
        changed, schedule it the ordinary way."""
        run = self._run(sched, pod)
        if run is None:
            return None
        fast = run.fast
        if fast is None:
            run.moved += 1
            if run.moved < self.START or not run.eligible or self.paths >= self.PATHS:
                return None
            fast = run.fast = FastPath(sched, run.fwk, run.template)
            self.paths += 1
        same = pod if pod.spec is run.template.spec else _with_spec(pod, run.template.spec)
        host = fast.schedule(same)
        if host is None:
            return None
        bound = same.with_node_name(host)
        sched.add_pod(bound)
        if run.proto is None:
            info = run.proto = PodInfo.of(bound)
        else:
            info = pod_info_like(run.proto, bound)
        fast.placed(same, info, host)
        if not fast.follows_cheaply():
            run.fast, run.eligible = None, False  # a node removal would cost it more than cycles
        return host

    def _run(self, sched: Scheduler, pod: Pod) -> _Run | None:
        meta = pod.metadata
        key = (meta.namespace, _controller(pod))
        runs = self.runs.setdefault(key, [])
        for run in runs:
            t = run.template
            if (
                t.metadata.labels == meta.labels
                and t.metadata.owner_references == meta.owner_references
                and (t.spec is pod.spec or t.spec == pod.spec)
            ):
                return run
        if self.templates >= self.TEMPLATES:
            return None
        fwk = sched.framework_for(pod)
        if fwk is None:
            return None
        eligible = fast_eligible(sched, fwk, pod) and fwk.run_pre_enqueue_plugins(pod) is None
        run = _Run(pod, fwk, eligible)
        runs.append(run)
        self.templates += 1
        return run


@attrs.define(slots=True, eq=False)
class _Run:
    """One template: its pods moved so far and, once set up, its batched path."""

    template: Pod
    fwk: Any
    eligible: bool
    moved: int = 0
    fast: FastPath | None = None
    proto: PodInfo | None = None


def _with_spec(pod: Pod, spec: Any) -> Pod:
    """``pod`` with ``spec`` (an equal spec: the template's object, which FastPath keys on)."""
    return attrs.evolve(pod, spec=spec)
