"""PriorityQueue over time: backoff flow, leftover flush, gating, nominator, metrics, ticker."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.pod import Pod
from kschedlib.backend.queue import (
    EVENT_UNSCHEDULED_POD_ADD,
    NominatingInfo,
    NominatingMode,
    PriorityQueue,
    QueueTicker,
    build_queueing_hints,
    pod_scheduling_properties_change,
)
from kschedlib.backend.queue.hints import NODE_TAINT_UPDATE, WILDCARD_ALL
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.status import Status
from kschedlib.framework.types import PodInfo

from .test_queue_support import (
    GATES_EVENT,
    NODE_ADD,
    PROFILE,
    START,
    AllowlistPlugin,
    GatesPlugin,
    evolve_meta,
    evolve_spec,
    hint_queue,
    make_pod,
    names,
    new_queue,
)


def fail(q: PriorityQueue, *plugins: str) -> QueuedPodInfo:
    p = q.pop()
    assert p is not None
    p.unschedulable_plugins = set(plugins)
    p.pending_plugins = set()
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle())
    return p


# --- backoff flow ------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.25, 0.75])
def test_backoff_flow_for_one_to_seven_failures(offset: float) -> None:
    """TestBackOffFlow: 1, 2, 4, 8, 10, 10, 10 s; flushed only after the backoff window ends."""
    clock = FakeClock(START + offset)
    q = new_queue(clock)
    pod = make_pod("test-pod", "test-ns", uid="test-uid")
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        ts = clock.now()
        p = q.pop()
        assert p is not None and p.attempts == i + 1
        p.unschedulable_plugins = {"unsched-plugin"}
        q.add_unschedulable_if_not_present(p, i)
        q.move_all_to_active_or_backoff_queue(
            ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout"), None, None
        )
        assert q.where_is(pod) == ["Backoff"]
        assert p.backoff_expiration is not None
        # The window holding the backoff end still counts as backing off.
        actual = (p.backoff_expiration - ts) // 1 + 1
        assert actual == want and p.unschedulable_count == i + 1
        clock.advance(1.0)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Backoff"]
        clock.advance(actual)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Active"]


def test_backoff_from_a_window_boundary_lasts_one_more_window() -> None:
    """A backoff ending exactly on a window boundary is over only when the next window starts."""
    clock = FakeClock(START)
    q = new_queue(clock)
    pod = make_pod("p")
    q.add(pod)
    for want in [1, 2, 4, 8, 10, 10]:
        ts = clock.now()
        p = fail(q)  # an error: straight to backoffQ
        assert p.backoff_expiration == ts + want
        clock.set(ts + want)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Backoff"]
        clock.set(ts + want + 1)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Active"]


def test_backoff_flow_without_pop_from_backoff_q() -> None:
    clock = FakeClock(START + 0.25)
    q = new_queue(clock, pop_from_backoff_q=False)
    pod = make_pod("p")
    q.add(pod)
    for want in [1, 2, 4, 8, 10, 10]:
        ts = clock.now()
        p = fail(q, "plugin")
        q.move_all_to_active_or_backoff_queue(
            ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout"), None, None
        )
        assert p.backoff_expiration == ts + want
        clock.advance(want - 0.001)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Backoff"]
        clock.advance(0.002)
        q.flush_backoff_q_completed()
        assert q.where_is(pod) == ["Active"]


def test_configured_backoff_bounds() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, pod_initial_backoff=2.0, pod_max_backoff=5.0)
    pod = make_pod("p")
    q.add(pod)
    got = []
    for _ in range(4):
        p = fail(q)  # errors go to backoff directly
        got.append(p.backoff_expiration - clock.now() if p.backoff_expiration else None)
        clock.advance(10)
        q.flush_backoff_q_completed()
    assert got == [2.0, 4.0, 5.0, 5.0]


# --- leftover flush -----------------------------------------------------------------------------


def test_leftover_flush_after_five_minutes() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=[(NODE_ADD, "plugin", hint_queue)])
    old, young = make_pod("old"), make_pod("young", priority=5)
    q.add(old)
    fail(q, "plugin")
    clock.advance(100)
    q.add(young)
    fail(q, "plugin")
    clock.advance(200)  # old: exactly 300 s
    q.flush_unschedulable_pods_leftover()
    assert names(q.unschedulable_pods()) == ["old", "young"]
    clock.advance(0.5)
    q.flush_unschedulable_pods_leftover()
    # Its 1 s backoff is long over: straight to activeQ.
    assert q.where_is(old) == ["Active"] and q.where_is(young) == ["Unschedulable"]
    assert q.metrics.incoming_pods[("active", "UnschedulableTimeout")] == 1
    clock.advance(100)
    q.flush_unschedulable_pods_leftover()
    assert q.unschedulable_pods() == []


def test_leftover_flush_leaves_pods_gated_by_scheduling_gates() -> None:
    clock = FakeClock(START)
    q = new_queue(
        clock, hints=[(GATES_EVENT, "SchedulingGates", hint_queue)], pre_enqueue=[GatesPlugin()]
    )
    gated = make_pod("gated", gates=["g"])
    q.add(gated)
    clock.advance(3600)
    q.flush_unschedulable_pods_leftover()
    assert q.where_is(gated) == ["Unschedulable"]


def test_custom_leftover_duration() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, pod_max_in_unschedulable_pods_duration=60.0)
    pod = make_pod("p")
    q.add(pod)
    fail(q, "plugin")
    clock.advance(61)
    q.flush_unschedulable_pods_leftover()
    assert q.where_is(pod) == ["Active"]


# --- PreEnqueue gating -------------------------------------------------------------------------


def gated_queue(clock: FakeClock) -> PriorityQueue:
    return new_queue(
        clock,
        hints=[
            (GATES_EVENT, "SchedulingGates", hint_queue),
            (NODE_ADD, "NodeResourcesFit", hint_queue),
        ],
        pre_enqueue=[GatesPlugin()],
    )


def test_gated_pod_waits_without_an_attempt_and_is_ungated_by_update() -> None:
    clock = FakeClock(START)
    q = gated_queue(clock)
    pod = make_pod("p", gates=["example.com/a", "example.com/b"])
    q.add(pod)
    info = q.get_pod("p", "ns1")
    assert info is not None
    assert info.gated() and info.gating_plugin == "SchedulingGates"
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert info.gating_plugin_events == (GATES_EVENT,)
    assert (info.attempts, info.unschedulable_count, info.initial_attempt_timestamp) == (0, 0, None)
    assert q.pending_pods_count() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert q.pop() is None
    assert q.metrics.incoming_pods[("unschedulable", EVENT_UNSCHEDULED_POD_ADD.label)] == 1
    # A node event cannot ungate it.
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert q.where_is(pod) == ["Unschedulable"]
    # Removing one gate: still gated.
    one = evolve_spec(pod, scheduling_gates=pod.spec.scheduling_gates[:1])
    q.update(pod, one)
    assert q.where_is(one) == ["Unschedulable"] and info.gated()
    # Removing the last gate: UpdatePodSchedulingGatesEliminated, hint Queue, activeQ.
    clock.advance(60)
    free = evolve_spec(one, scheduling_gates=())
    q.update(one, free)
    assert q.where_is(free) == ["Active"] and not info.gated()
    assert q.pending_pods_count() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
    p = q.pop()
    assert p is info and p.attempts == 1 and p.initial_attempt_timestamp == START + 60


def test_gating_plugin_runs_first_and_all_plugins_must_admit() -> None:
    calls: list[str] = []

    class Recorder:
        def __init__(self, name: str, admit: bool) -> None:
            self.name = name
            self.admit = admit

        def pre_enqueue(self, pod: Pod) -> Status | None:
            calls.append(self.name)
            return None if self.admit else Status.error("no", self.name)

    a, b = Recorder("A", True), Recorder("B", False)
    q = new_queue(pre_enqueue=[a, b])
    pod = make_pod("p")
    q.add(pod)
    assert calls == ["A", "B"]
    info = q.get_pod("p", "ns1")
    assert info is not None and info.gating_plugin == "B"
    calls.clear()
    b.admit = True
    q.activate([pod])
    assert calls == ["B", "A"] and q.where_is(pod) == ["Active"]
    assert q.metrics.pre_enqueue_results[("B", "Error")] == 1


def test_raising_pre_enqueue_plugin_gates_the_pod() -> None:
    class Boom:
        name = "Boom"

        def pre_enqueue(self, pod: Pod) -> Status | None:
            raise RuntimeError("boom")

    q = new_queue(pre_enqueue=[Boom()])
    pod = make_pod("p")
    q.add(pod)
    info = q.get_pod("p", "ns1")
    assert (
        info is not None and info.gating_plugin == "Boom" and q.where_is(pod) == ["Unschedulable"]
    )


def test_pre_enqueue_runs_per_profile() -> None:
    q = PriorityQueue(
        clock=FakeClock(START), pre_enqueue_plugins={"gated-profile": [GatesPlugin()]}
    )
    q.add(make_pod("a", gates=["g"]))
    q.add(make_pod("b", gates=["g"], scheduler_name="gated-profile"))
    assert names(q.pods_in_active_q()) == ["a"]
    assert names(q.unschedulable_pods()) == ["b"]


# --- nominator ---------------------------------------------------------------------------------


def test_nominated_pods_for_node_come_from_the_queue() -> None:
    q = new_queue()
    a = make_pod("a", priority=10)
    b = make_pod("b", priority=5, nominated_node_name="n1")
    q.add(a)
    q.add(b)  # nominated through its status (Add event)
    q.add_nominated_pod(PodInfo.of(a), NominatingInfo("n1", NominatingMode.Override))
    infos = q.nominated_pods_for_node("n1")
    assert [pi.pod.metadata.name for pi in infos] == ["b", "a"]
    queued = q.get_pod("b", "ns1")
    assert queued is not None
    assert infos[0].pod is queued.pod and infos[0] is not queued.pod_info
    assert q.nominated_pods_for_node("n2") == []
    # A nominated pod no longer queued (being scheduled) is represented by its identity only.
    q.pop()
    stub = q.nominated_pods_for_node("n1")[1]
    assert (
        stub.pod.metadata.name == "a" and stub.pod.uid == a.uid and stub.pod.spec.priority is None
    )


def test_nomination_moves_and_clears() -> None:
    q = new_queue()
    pod = make_pod("p")
    q.add_nominated_pod(PodInfo.of(pod), NominatingInfo("n1", NominatingMode.Override))
    q.add_nominated_pod(PodInfo.of(pod), NominatingInfo("n2", NominatingMode.Override))
    assert q.nominator.nominated_pods == {"n2": [q.nominator.nominated_pods["n2"][0]]}
    # Noop mode without status.nominatedNodeName clears it.
    q.add_nominated_pod(PodInfo.of(pod), None)
    assert q.nominator.nominated_pods == {} and q.nominator.nominated_pod_to_node == {}
    q.add_nominated_pod(PodInfo.of(pod), NominatingInfo("n1", NominatingMode.Override))
    q.delete_nominated_pod_if_exists(pod)
    assert q.nominated_pods_for_node("n1") == []


def test_update_keeps_an_in_memory_nomination() -> None:
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    q.add_nominated_pod(PodInfo.of(pod), NominatingInfo("n1", NominatingMode.Override))
    new = evolve_meta(pod, annotations={"x": "y"})
    q.update(pod, new)  # neither version carries a nominatedNodeName: keep n1
    assert q.nominator.nominated_node_of(pod.uid) == "n1"
    moved = new.with_nominated_node_name("n2")
    q.update(new, moved)  # the API now says n2
    assert q.nominator.nominated_node_of(pod.uid) == "n2"
    cleared = evolve_meta(moved.with_nominated_node_name(""), annotations={})
    q.update(moved, cleared)  # nomination removed in the API
    assert q.nominator.nominated_node_of(pod.uid) is None


def test_pod_lister_blocks_nominating_gone_or_bound_pods() -> None:
    live: dict[str, Pod] = {}
    q = new_queue(pod_lister=lambda ns, name: live.get(f"{ns}/{name}"))
    pod = make_pod("p")
    info = PodInfo.of(pod)
    q.add_nominated_pod(info, NominatingInfo("n1", NominatingMode.Override))
    assert q.nominated_pods_for_node("n1") == []
    live[pod.key] = pod.with_node_name("n3")
    q.add_nominated_pod(info, NominatingInfo("n1", NominatingMode.Override))
    assert q.nominated_pods_for_node("n1") == []
    live[pod.key] = pod
    q.add_nominated_pod(info, NominatingInfo("n1", NominatingMode.Override))
    assert [pi.pod.uid for pi in q.nominated_pods_for_node("n1")] == [pod.uid]


# --- metrics and introspection -----------------------------------------------------------------


def test_incoming_pods_metrics() -> None:
    """TestIncomingPodsMetrics, with the event labels this library's events produce."""
    clock = FakeClock(START)
    q = new_queue(clock)
    pods = [make_pod(f"test-pod-{i}", f"ns{i}") for i in range(1, 4)]
    for p in pods:
        q.add(p)
    for _ in pods:
        fail(q, "unschedulable_plugin")
    timeout = ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout")
    q.move_all_to_active_or_backoff_queue(timeout, None, None)
    clock.advance(2)
    q.flush_backoff_q_completed()
    assert dict(q.metrics.incoming_pods) == {
        ("active", EVENT_UNSCHEDULED_POD_ADD.label): 3,
        ("unschedulable", "ScheduleAttemptFailure"): 3,
        ("backoff", "UnschedulableTimeout"): 3,
        ("active", "BackoffComplete"): 3,
    }
    assert q.metrics.total_scheduling_attempts() == 3
    assert q.metrics.unschedulable_reasons[("unschedulable_plugin", PROFILE)] == 3


def test_pending_pods_summary() -> None:
    clock = FakeClock(START)
    q = new_queue(clock)
    for n in ("a", "b", "c", "d"):
        q.add(make_pod(n))
    fail(q, "plugin")
    fail(q)
    pods, summary = q.pending_pods()
    assert summary == "activeQ:2; backoffQ:1; unschedulablePods:1"
    assert names(pods) == ["a", "b", "c", "d"]
    assert q.pending_pods_count() == {"active": 2, "backoff": 1, "unschedulable": 1, "gated": 0}


# --- ticker ------------------------------------------------------------------------------------


def test_ticker_runs_flushes_on_their_schedule() -> None:
    clock = FakeClock(START + 0.4)
    q = new_queue(clock)
    t = QueueTicker(q)
    assert t.next_tick() == START + 0.4  # leftover flush runs at start
    assert t.run_due() == ["leftover"]
    assert t.next_tick() == START + 1
    clock.set(t.next_tick())
    assert t.run_due() == ["backoff"]
    clock.set(START + 30.4)
    assert t.run_due() == ["backoff", "leftover"]
    assert t.next_tick() == START + 31
    assert t.run_due() == []


def test_ticker_drives_a_pod_back_after_backoff() -> None:
    clock = FakeClock(START + 0.4)
    q = new_queue(clock)
    t = QueueTicker(q)
    pod = make_pod("p")
    q.add(pod)
    fail(q)  # error: 1 s backoff ending at START+1 (its window), over from START+2
    while q.where_is(pod) != ["Active"]:
        clock.set(t.next_tick())
        t.run_due()
    assert clock.now() == START + 2


# --- hint registrations and pod update events ----------------------------------------------------


class _Plugin:
    def __init__(self, name: str, events: list[ClusterEventWithHint] | None) -> None:
        self.name = name
        if events is not None:
            self.events_to_register = lambda: events

    def filter(self, *args: Any) -> None:
        return None


class _ScoreOnly:
    name = "ScoreOnly"

    def score(self, *args: Any) -> tuple[int, None]:
        return 0, None


def test_build_queueing_hints() -> None:
    node_add = ClusterEventWithHint(NODE_ADD, hint_queue)
    regs = build_queueing_hints(
        [
            _Plugin("NoExt", None),
            _Plugin("Empty", []),
            _Plugin("Fit", [node_add]),
            _Plugin("Taints", [node_add, ClusterEventWithHint(NODE_TAINT_UPDATE)]),
            _ScoreOnly(),
            _Plugin("Fit", [node_add]),  # duplicates are registered once
        ]
    )
    # registered hints sit behind the wrong-object-type check; compare what they wrap
    regs = [(ev, name, getattr(fn, "__wrapped__", fn)) for ev, name, fn in regs]
    assert regs == [
        (WILDCARD_ALL, "NoExt", None),
        (NODE_ADD, "Fit", hint_queue),
        (NODE_TAINT_UPDATE, "Fit", None),
        (NODE_ADD, "Taints", hint_queue),
        (NODE_TAINT_UPDATE, "Taints", None),
    ]


def test_plugin_without_events_makes_every_event_interesting() -> None:
    q = new_queue(hints=build_queueing_hints([_Plugin("NoExt", None)]))
    pod = make_pod("p")
    q.add(pod)
    fail(q, "NoExt")
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert q.where_is(pod) == ["Backoff"]


@pytest.mark.parametrize(
    ("change", "want"),
    [
        ({}, [ActionType.Update]),
        ({"labels": {"a": "b"}}, [ActionType.UpdatePodLabel]),
        ({"cpu": "500m"}, [ActionType.UpdatePodScaleDown]),
        ({"cpu": "2"}, [ActionType.Update]),
        ({"gates": ()}, [ActionType.UpdatePodSchedulingGatesEliminated]),
        ({"tolerations": 1}, [ActionType.UpdatePodToleration]),
        (
            {"labels": {"a": "b"}, "gates": (), "tolerations": 2},
            [
                ActionType.UpdatePodLabel,
                ActionType.UpdatePodSchedulingGatesEliminated,
                ActionType.UpdatePodToleration,
            ],
        ),
    ],
)
def test_pod_scheduling_properties_change(change: dict[str, Any], want: list[ActionType]) -> None:
    old = make_pod("p", cpu="1", gates=["g"])
    kwargs: dict[str, Any] = {"cpu": "1", "gates": ["g"]}
    kwargs.update(change)
    new = make_pod("p", **kwargs)
    got = pod_scheduling_properties_change(new, old)
    assert got == [ClusterEvent(EventResource.UnscheduledPod, a) for a in want]
    bound = pod_scheduling_properties_change(new.with_node_name("n"), old)
    assert {e.resource for e in bound} == {EventResource.AssignedPod}


def test_pod_update_events_reach_only_matching_registrations() -> None:
    """An update event of an unscheduled pod asks Pod registrations with overlapping actions."""
    c_label: list[Any] = []
    c_tol: list[Any] = []

    def label_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        c_label.append(new)
        return QueueingHint.QueueSkip

    def toleration_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        c_tol.append(new)
        return QueueingHint.Queue

    q = new_queue(
        hints=[
            (ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel), "L", label_hint),
            (ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration), "T", toleration_hint),
        ]
    )
    pod = make_pod("p")
    q.add(pod)
    fail(q, "L", "T")
    relabeled = evolve_meta(pod, labels={"a": "b"})
    q.update(pod, relabeled)
    assert (len(c_label), len(c_tol)) == (1, 0) and q.where_is(pod) == ["Unschedulable"]
    tolerating = evolve_spec(relabeled, tolerations=make_pod("x", tolerations=1).spec.tolerations)
    q.update(relabeled, tolerating)
    assert (len(c_label), len(c_tol)) == (1, 1) and q.where_is(pod) == ["Backoff"]


def test_event_registered_by_the_gating_plugin_rechecks_pre_enqueue() -> None:
    allow = AllowlistPlugin([], name="Quota")
    q = new_queue(hints=[(NODE_ADD, "Quota", hint_queue)], pre_enqueue=[allow])
    pod = make_pod("p", labels={"team-a": ""})
    q.add(pod)
    assert q.where_is(pod) == ["Unschedulable"] and allow.calls == 1
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert q.where_is(pod) == ["Unschedulable"] and allow.calls == 2
    allow.allowlists.append("team-a")
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert q.where_is(pod) == ["Active"] and allow.calls == 3
    info = q.pop()
    assert info is not None and info.attempts == 1 and not info.gated()
