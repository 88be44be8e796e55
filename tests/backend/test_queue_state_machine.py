"""Random operation sequences: every pod is in exactly one place and the indexes agree."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kschedlib.api.pod import Pod, Toleration
from kschedlib.backend.queue import (
    EVENT_UNSCHEDULABLE_TIMEOUT,
    NominatingInfo,
    NominatingMode,
    PriorityQueue,
)
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.types import PodInfo

from .test_queue_support import (
    GATES_EVENT,
    NODE_ADD,
    PROFILE,
    PV_ADD,
    START,
    GatesPlugin,
    evolve_meta,
    evolve_spec,
    hint_queue,
    make_pod,
)

N_PODS = 4
AFFINE = make_pod("affine", affinity_to={"app": "x"})
NODES = ("node-1", "node-2")
PLACES = ("Active", "Backoff", "Unschedulable", "InFlight")


def _label_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return (
        QueueingHint.Queue
        if new is not None and "go" in new.metadata.labels
        else QueueingHint.QueueSkip
    )


HINTS = [
    (NODE_ADD, "Fit", hint_queue),
    (NODE_ADD, "Pending", hint_queue),
    (ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel), "Fit", _label_hint),
    (GATES_EVENT, "SchedulingGates", hint_queue),
]


class QueueMachine(RuleBasedStateMachine):
    """A model of the informer + scheduler around the queue: which pods exist, their current
    version, and which ones a scheduling cycle holds."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(START)
        self.q = PriorityQueue(
            clock=self.clock,
            pre_enqueue_plugins={PROFILE: [GatesPlugin()]},
            queueing_hints={PROFILE: HINTS},
        )
        self.current: dict[int, Pod] = {}  # pods that exist (informer view)
        self.in_flight: dict[str, QueuedPodInfo] = {}  # by UID
        self.generation = 0
        self.kept: tuple[int, dict[tuple[str, int], Any]] | None = None

    def _pod(self, i: int, gated: bool) -> Pod:
        self.generation += 1
        return make_pod(
            f"p{i}",
            uid=f"uid-{i}-{self.generation}",
            priority=i % 3,
            gates=["g"] if gated else (),
        )

    @rule(i=st.integers(0, N_PODS - 1), gated=st.sampled_from([False, False, False, True]))
    def add(self, i: int, gated: bool) -> None:
        if i in self.current:
            return  # the informer sends Add once per pod (a deleted one may be re-created)
        pod = self._pod(i, gated)
        self.current[i] = pod
        self.q.add(pod)

    @rule(
        i=st.integers(0, N_PODS - 1),
        change=st.sampled_from(["label", "go", "ungate", "annotate", "nominate", "affine", "plain"]),
    )
    def update(self, i: int, change: str) -> None:
        old = self.current.get(i)
        if old is None:
            return
        if change == "label":
            new = evolve_meta(old, labels={"v": str(self.generation)})
        elif change == "go":
            new = evolve_meta(old, labels={"go": ""})
        elif change == "ungate":
            new = evolve_spec(old, scheduling_gates=())
        elif change == "annotate":
            new = evolve_meta(old, annotations={"a": str(self.generation)})
        elif change == "affine":
            # A required affinity term (assigned pods labelled app=x match it), and a new
            # toleration: the gates' hint says Queue, so a gated pod is gated again in place.
            new = evolve_spec(
                old, affinity=AFFINE.spec.affinity,
                tolerations=(*old.spec.tolerations, Toleration(key=f"t{self.generation}")),
            )
        elif change == "plain":
            new = evolve_spec(old, affinity=None)
        else:
            new = old.with_nominated_node_name("node-1")
        self.generation += 1
        self.current[i] = new
        self.q.update(old, new)

    @rule(i=st.integers(0, N_PODS - 1))
    def delete(self, i: int) -> None:
        pod = self.current.pop(i, None)
        if pod is not None:
            self.q.delete(pod)

    @rule()
    def pop(self) -> None:
        p = self.q.pop()
        if p is None:
            return
        assert p.uid not in self.in_flight
        self.in_flight[p.uid] = p

    @precondition(lambda self: bool(self.in_flight))
    @rule(
        data=st.data(),
        outcome=st.sampled_from(["rejected", "spread", "pending", "error", "bound"]),
    )
    def finish(self, data: st.DataObject, outcome: str) -> None:
        uid = data.draw(st.sampled_from(sorted(self.in_flight)))
        p = self.in_flight.pop(uid)
        i = int(p.pod.metadata.name[1:])
        pod = self.current.get(i)
        if pod is None or pod.uid != p.pod.uid or outcome == "bound":
            # Deleted while in flight, or bound: the scheduler only ends the attempt (and, for a
            # bound pod, drops its nomination when assuming it).
            if outcome == "bound" and pod is not None and pod.uid == p.pod.uid:
                self.q.delete_nominated_pod_if_exists(pod)
                self.q.done(p.uid)
                del self.current[i]
                self.q.assigned_pod_added(
                    evolve_meta(pod, labels={"app": "x"}).with_node_name("node-1")
                )
            else:
                self.q.done(p.uid)
            return
        p.pod_info = PodInfo.of(pod)  # the informer's latest version, as handleSchedulingFailure
        p.unschedulable_plugins = (
            {"Fit"} if outcome == "rejected"
            else {"PodTopologySpread"} if outcome == "spread" else set()
        )
        p.pending_plugins = {"Pending"} if outcome == "pending" else set()
        self.q.add_unschedulable_if_not_present(p, self.q.scheduling_cycle())

    @rule(event=st.sampled_from([NODE_ADD, PV_ADD, EVENT_UNSCHEDULABLE_TIMEOUT]))
    def cluster_event(self, event: ClusterEvent) -> None:
        self.q.move_all_to_active_or_backoff_queue(event, None, None)

    @rule(i=st.integers(0, N_PODS - 1))
    def activate(self, i: int) -> None:
        pod = self.current.get(i)
        if pod is not None:
            self.q.activate([pod])

    @rule(dt=st.sampled_from([0.3, 1.0, 5.0, 301.0]))
    def tick(self, dt: float) -> None:
        self.clock.advance(dt)
        self.q.flush_backoff_q_completed()
        self.q.flush_unschedulable_pods_leftover()

    @invariant()
    def indexes_agree(self) -> None:
        self.q.check_invariants()

    @invariant()
    def cross_topology_shortcut_agrees_with_the_scan(self) -> None:
        # The kept superset of candidate keys may answer "none" only when the scan does.
        probe = make_pod("probe", labels={"app": "x"}, node_name="node-1")
        got = self.q._unschedulable_pods_with_cross_topology_term(probe)
        keys = self.q._cross_topology_keys
        self.q._cross_topology_keys = {"(scan)"}
        try:
            scanned = self.q._unschedulable_pods_with_cross_topology_term(probe)
        finally:
            self.q._cross_topology_keys = keys
        assert [p.key for p in got] == [p.key for p in scanned]

    @invariant()
    def every_pod_in_exactly_one_place(self) -> None:
        for pod in self.current.values():
            places = self.q.where_is(pod)
            if pod.uid in self.in_flight:
                assert places == ["InFlight"], (pod.metadata.name, places)
            else:
                assert len(places) == 1 and places[0] in PLACES[:3], (pod.metadata.name, places)
        queued = {p.metadata.name for p in self.q.pending_pods()[0]}
        assert queued == {
            p.metadata.name for p in self.current.values() if p.uid not in self.in_flight
        }
        assert {p.uid for p in self.q.in_flight_pods()} == {p.uid for p in self.in_flight.values()}
        counts = self.q.pending_pods_count()
        assert sum(counts.values()) == len(queued)

    @invariant()
    def gated_pods_wait_with_the_unschedulable_pods(self) -> None:
        for pod in self.current.values():
            info = self.q.get_pod(pod.metadata.name, pod.metadata.namespace)
            if info is not None and info.gated():
                assert self.q.where_is(pod) == ["Unschedulable"]
                assert pod.spec.scheduling_gates

    @rule(i=st.integers(0, N_PODS - 1), node=st.sampled_from(NODES))
    def nominate(self, i: int, node: str) -> None:
        """Preemption nominates a pod (queued or in flight) to a node in memory."""
        pod = self.current.get(i)
        if pod is not None:
            info = NominatingInfo(node, NominatingMode.Override)
            self.q.add_nominated_pod(PodInfo.of(pod), info)

    @invariant()
    def nominated_filter_keys_agree_with_recomputation(self) -> None:
        """The nominated pods kept across steps are those a fresh lookup finds."""
        uids = ["", *sorted(p.uid for p in self.current.values())]
        for node in NODES:
            fresh = [
                (pi.pod, pi.pod_level, pi.pod.uid) for pi in self.q.nominated_pods_for_node(node)
            ]
            for min_priority in (0, 2):
                for exclude in uids:
                    kept = self.q.nominated_filter_keys(min_priority, exclude)(node)
                    want = tuple(
                        (pod, level) for pod, level, uid in fresh
                        if uid != exclude and (pod.spec.priority or 0) >= min_priority
                    )
                    assert kept == want
                    assert [p.uid for p, _ in kept] == [p.uid for p, _ in want]

    @invariant()
    def nomination_log_names_every_changed_node(self) -> None:
        """A node the queue's nomination log does not name since a mark has the nominated
        pods it had then (as a pass asks: the nodes some pod is nominated to, keys kept)."""
        log = self.q._nominated_log
        nominated = self.q.nominator.nominated_pods
        now: dict[tuple[str, int], Any] = {}
        for min_priority in (0, 2):
            keys = self.q.nominated_filter_keys(min_priority, "")
            for node in NODES:
                got = keys(node) if node in nominated else ()
                now[node, min_priority] = (got, [p.uid for p, _ in got])
        if self.kept is not None:
            mark, before = self.kept
            changed = log.since(mark)
            assert changed is not None
            for (node, min_priority), was in before.items():
                if node not in changed:
                    assert now[node, min_priority] == was, (node, min_priority)
        self.kept = (log.mark(), now)

    @invariant()
    def nominations_only_for_known_pods(self) -> None:
        uids = {p.uid for p in self.current.values()} | set(self.in_flight)
        assert set(self.q.nominator.nominated_pod_to_node) <= uids


QueueMachine.TestCase.settings = settings(
    max_examples=500,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestQueueStateMachine = QueueMachine.TestCase
