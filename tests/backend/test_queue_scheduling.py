"""PriorityQueue: add/pop/update/delete/activate, in-flight events and requeueing
(scheduling_queue_test.go)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kschedlib.api.pod import Pod
from kschedlib.backend.queue import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    InFlightEvent,
    PriorityQueue,
    QueueingStrategy,
)
from kschedlib.errors import QueueError
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.queued_pod_info import QueuedPodInfo

from .test_queue_support import (
    CSI_NODE_UPDATE,
    NODE_ADD,
    PROFILE,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    START,
    AllowlistPlugin,
    HintCounter,
    evolve_meta,
    evolve_spec,
    hint_queue,
    hint_skip,
    make_pod,
    names,
    new_queue,
)

HIGH, MID, LOW = 1000, 500, 0

HIGH_POD = make_pod("hpp", "ns1", uid="hppns1", priority=HIGH)
HIGH_NOMINATED = make_pod("hpp", "ns1", uid="hppns1", priority=HIGH, nominated_node_name="node1")
MED_POD = make_pod("mpp", "ns2", uid="mppns2", priority=MID, nominated_node_name="node1")
UNSCHED_POD = make_pod("up", "ns1", uid="upns1", priority=LOW, nominated_node_name="node1")

POD1 = make_pod("targetpod", uid="pod1")
POD2 = make_pod("targetpod2", uid="pod2")
POD3 = make_pod("targetpod3", uid="pod3")


def pop(q: PriorityQueue, want: Pod | None = None) -> QueuedPodInfo:
    p = q.pop()
    assert p is not None
    if want is not None:
        assert p.pod.uid == want.uid
    return p


def requeue(
    q: PriorityQueue, p: QueuedPodInfo, *plugins: str, pending: tuple[str, ...] = ()
) -> None:
    """What the scheduler does on failure: record the rejectors, then hand the pod back."""
    p.unschedulable_plugins = set(plugins)
    p.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle())


def lookup(pod: Pod, *plugins: str) -> QueuedPodInfo:
    """newQueuedPodInfoForLookup: a fresh QueuedPodInfo, as a test hands back after a failure."""
    return QueuedPodInfo.of(pod, 0.0, *plugins)


def in_flight_view(q: PriorityQueue) -> list[object]:
    return [
        e.event if isinstance(e, InFlightEvent) else e.metadata.name for e in q.in_flight_events()
    ]


def test_add_pops_by_priority_and_records_nominations() -> None:
    q = new_queue()
    q.add(MED_POD)
    q.add(UNSCHED_POD)
    q.add(HIGH_POD)
    assert q.nominator.nominated_pod_to_node == {MED_POD.uid: "node1", UNSCHED_POD.uid: "node1"}
    assert [r.uid for r in q.nominator.nominated_pods_for_node("node1")] == [
        MED_POD.uid,
        UNSCHED_POD.uid,
    ]
    assert pop(q).pod is HIGH_POD
    assert pop(q).pod is MED_POD
    assert pop(q).pod is UNSCHED_POD
    assert q.pop() is None
    assert len(q.nominator.nominated_pods["node1"]) == 2


def test_equal_priority_pops_in_timestamp_order() -> None:
    clock = FakeClock(START)
    q = new_queue(clock)
    for i in range(5):
        q.add(make_pod(f"p{i}"))
        clock.advance(0.5)
    assert [pop(q).pod.metadata.name for _ in range(5)] == [f"p{i}" for i in range(5)]


def test_pop_counts_attempts_cycles_and_tracks_in_flight() -> None:
    q = new_queue()
    q.add(POD1)
    assert q.scheduling_cycle() == 0
    p = pop(q, POD1)
    assert p.attempts == 1 and q.scheduling_cycle() == 1
    assert p.initial_attempt_timestamp == START
    assert q.in_flight_pods() == [POD1]
    assert q.where_is(POD1) == ["InFlight"]
    assert q.metrics.scheduling_attempts[PROFILE] == 1
    q.done(POD1.uid)
    q.done(POD1.uid)  # idempotent
    assert q.in_flight_pods() == []


# --- in-flight events (Test_InFlightPods) -------------------------------------------------

A = "fooPlugin1"
HINTS_Q = [(PV_ADD, A, hint_queue), (NODE_ADD, A, hint_queue), (PVC_ADD, A, hint_queue)]


def test_interested_events_are_recorded_only_while_pods_are_in_flight() -> None:
    q = new_queue(hints=[(PV_ADD, A, hint_queue)])
    q.add(POD1)
    q.move_all_to_active_or_backoff_queue(PVC_ADD, None, None)  # nobody in flight
    pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    q.move_all_to_active_or_backoff_queue(PV_UPDATE, None, None)  # no plugin cares
    assert in_flight_view(q) == ["targetpod", PV_ADD]
    assert q.metrics.in_flight_events["PersistentVolumeAdd"] == 1


def test_error_failure_goes_to_backoff_and_prunes_events() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=HINTS_Q)
    q.add(POD1)
    clock.advance(1)
    q.add(POD2)
    q.move_all_to_active_or_backoff_queue(PVC_ADD, None, None)
    pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    pop(q, POD2)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    q.add_unschedulable_if_not_present(lookup(POD1), q.scheduling_cycle())
    assert names(q.pods_in_backoff_q()) == ["targetpod"]
    assert in_flight_view(q) == ["targetpod2", NODE_ADD]
    q.move_all_to_active_or_backoff_queue(CSI_NODE_UPDATE, None, None)  # not of interest
    q.add_unschedulable_if_not_present(lookup(POD2), q.scheduling_cycle())
    assert names(q.pods_in_backoff_q()) == ["targetpod", "targetpod2"]
    assert in_flight_view(q) == []
    assert sum(q.metrics.in_flight_events.values()) == 0


def test_intermediate_pod_done_keeps_events_of_older_pods() -> None:
    clock = FakeClock(START)
    hints = [
        (PV_ADD, A, hint_queue),
        (NODE_ADD, A, hint_queue),
        (EVENT_ASSIGNED_POD_ADD, A, hint_queue),
    ]
    q = new_queue(clock, hints=hints)
    for p in (POD1, POD2, POD3):
        q.add(p)
        clock.advance(1)
    q.move_all_to_active_or_backoff_queue(PVC_ADD, None, None)
    pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    pop(q, POD2)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    pop(q, POD3)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(lookup(POD2), q.scheduling_cycle())
    assert names(q.pods_in_backoff_q()) == ["targetpod2"]
    assert names(q.in_flight_pods()) == ["targetpod", "targetpod3"]
    assert in_flight_view(q) == [
        "targetpod",
        PV_ADD,
        NODE_ADD,
        "targetpod3",
        EVENT_ASSIGNED_POD_ADD,
    ]


def test_events_before_pop_are_ignored() -> None:
    q = new_queue(hints=[(EVENT_ASSIGNED_POD_ADD, A, hint_skip)])
    q.add(POD1)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(lookup(POD1, A), q.scheduling_cycle())
    assert names(q.unschedulable_pods()) == ["targetpod"]
    assert q.in_flight_events() == []


@pytest.mark.parametrize(
    ("event", "hints", "plugins", "pending", "want"),
    [
        # No rejecting plugin: an error, retried after backoff whatever happened.
        (EVENT_ASSIGNED_POD_ADD, [(EVENT_ASSIGNED_POD_ADD, A, hint_queue)], (), (), "Backoff"),
        # The rejecting plugin registered no hint for the event that happened.
        (NODE_ADD, [(EVENT_ASSIGNED_POD_ADD, A, hint_queue)], (A,), (), "Unschedulable"),
        # The rejecting plugin's hint says QueueSkip.
        (
            EVENT_ASSIGNED_POD_ADD,
            [(EVENT_ASSIGNED_POD_ADD, A, hint_skip)],
            (A,),
            (),
            "Unschedulable",
        ),
        # A Queue from a rejecting plugin beats a Skip from another: after backoff.
        (
            EVENT_ASSIGNED_POD_ADD,
            [
                (EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_skip),
                (EVENT_ASSIGNED_POD_ADD, A, hint_queue),
            ],
            (A, "fooPlugin2"),
            (),
            "Backoff",
        ),
        # A Queue from a Pending plugin skips backoff.
        (
            EVENT_ASSIGNED_POD_ADD,
            [
                (EVENT_ASSIGNED_POD_ADD, "fooPlugin3", hint_skip),
                (EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_queue),
                (EVENT_ASSIGNED_POD_ADD, A, hint_queue),
            ],
            ("fooPlugin2", "fooPlugin3"),
            (A,),
            "Active",
        ),
    ],
)
def test_failed_pod_is_requeued_by_events_seen_in_flight(
    event: ClusterEvent,
    hints: list[tuple[ClusterEvent, str, Callable[..., object]]],
    plugins: tuple[str, ...],
    pending: tuple[str, ...],
    want: str,
) -> None:
    q = new_queue(hints=hints)  # type: ignore[arg-type]
    q.add(POD1)
    p = pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(event, None, None)
    requeue(q, p, *plugins, pending=pending)
    assert q.where_is(POD1) == [want]
    assert q.in_flight_pods() == []


def test_pending_plugin_queue_from_event_seen_while_another_pod_was_in_flight() -> None:
    clock = FakeClock(START)
    hints = [
        (EVENT_ASSIGNED_POD_ADD, "fooPlugin3", hint_skip),
        (EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_queue),
        (EVENT_ASSIGNED_POD_ADD, A, hint_queue),
    ]
    q = new_queue(clock, hints=hints)
    q.add(POD1)
    clock.advance(1)
    q.add(POD2)
    p1 = pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    p2 = pop(q, POD2)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle())  # error: backoff
    requeue(q, p2, "fooPlugin2", "fooPlugin3", pending=(A,))
    assert names(q.pods_in_active_q()) == ["targetpod2"]
    assert names(q.pods_in_backoff_q()) == ["targetpod"]
    assert q.in_flight_events() == []


def test_pop_clears_rejectors_and_gating() -> None:
    # v1.35 activeQueue.unlockedPop: UnschedulablePlugins and PendingPlugins are cleared on
    # every pop, so a later requeue consults only the new attempt's rejectors.
    q = new_queue(hints=[(PV_ADD, A, hint_queue)])
    q.add(POD1)
    p = pop(q, POD1)
    requeue(q, p, "fooPlugin2", pending=(A,))
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)  # pending plugin: active again
    p = pop(q, POD1)
    assert p.unschedulable_plugins == set() and p.pending_plugins == set()
    assert p.gating_plugin == "" and not p.gated()
    assert all(v == 0 for v in q.metrics.unschedulable_reasons.values())
    requeue(q, p)  # failed with an error this time
    assert q.where_is(POD1) == ["Backoff"]
    assert q.backoff_q.pod_error_backoff_q.has(p)


def test_pop_twice_for_the_same_pod_discards_the_duplicate() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=HINTS_Q + [(CSI_NODE_UPDATE, A, hint_queue)])
    q.add(POD1)
    clock.advance(1)
    q.add(POD2)
    pop(q, POD1)
    pop(q, POD2)
    q.add(POD1)  # an Add for a pod being scheduled (a bug upstream): it lands in activeQ
    clock.advance(1)
    q.add(POD3)
    pop(q, POD3)  # the pod1 copy is discarded on the way
    assert q.pods_in_active_q() == []
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    for p in (POD1, POD2, POD3):
        q.add_unschedulable_if_not_present(lookup(p), q.scheduling_cycle())
    assert names(q.pods_in_backoff_q()) == ["targetpod", "targetpod2", "targetpod3"]
    assert q.in_flight_pods() == []
    q.check_invariants()


# --- move request during the cycle (AddUnschedulableIfNotPresent_Backoff) -------------------


def test_move_request_during_the_cycle_sends_failed_pods_to_backoff() -> None:
    clock = FakeClock(START)
    q = new_queue(clock)
    pods = [make_pod(f"pod{i}", f"ns{i}", priority=i) for i in range(10)]
    for pod in pods:
        q.add(pod)
    popped = [pop(q) for _ in range(9)]
    assert [p.pod.metadata.name for p in popped] == [f"pod{i}" for i in range(9, 0, -1)]
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    old_cycle = q.scheduling_cycle()
    assert pop(q).pod is pods[0]
    for info in popped:
        q.add_unschedulable_if_not_present(lookup(info.pod, "plugin"), old_cycle)
    assert names(q.pods_in_backoff_q()) == [f"pod{i}" for i in range(1, 10)]
    assert q.unschedulable_pods() == []


def test_move_request_with_skip_hint_leaves_failed_pod_unschedulable() -> None:
    q = new_queue(hints=[(NODE_ADD, "NodeResourcesFit", hint_skip)])
    q.add(POD1)
    p = pop(q)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    requeue(q, p, "NodeResourcesFit")
    assert q.where_is(POD1) == ["Unschedulable"]


def test_add_unschedulable_if_not_present_refuses_queued_pods() -> None:
    q = new_queue()
    q.add(POD1)
    p = pop(q)
    q.add(POD1)  # re-added while in flight: now also in activeQ
    with pytest.raises(
        QueueError, match="Pod ns1/targetpod is already present in the active queue"
    ):
        requeue(q, p, "plugin")
    assert q.in_flight_pods() == []  # the attempt is over either way
    assert q.where_is(POD1) == ["Active"]
    assert p.unschedulable_count == 0  # nothing was applied
    q.check_invariants()
    p2 = pop(q)
    requeue(q, p2, "plugin")
    with pytest.raises(QueueError, match="unschedulable queue"):
        q.add_unschedulable_if_not_present(lookup(POD1, "plugin"), 0)
    assert q.where_is(POD1) == ["Unschedulable"]


def test_add_unschedulable_counts_rejections_and_errors() -> None:
    clock = FakeClock(START)
    q = new_queue(clock)
    q.add(POD1)
    p = pop(q)
    requeue(q, p)
    assert (p.unschedulable_count, p.consecutive_errors_count) == (0, 1)
    clock.advance(5)
    q.flush_backoff_q_completed()
    p = pop(q)
    requeue(q, p, "plugin")
    assert (p.unschedulable_count, p.consecutive_errors_count) == (1, 0)
    assert p.timestamp == START + 5


# --- pop from backoffQ (TestPriorityQueue_Pop) ----------------------------------------------


@pytest.mark.parametrize(("enabled", "want"), [(True, ["mpp", "hpp"]), (False, ["mpp"])])
def test_pop_falls_back_to_backoff_q(enabled: bool, want: list[str]) -> None:
    q = new_queue(pop_from_backoff_q=enabled)
    q.add(MED_POD)
    q.backoff_q.add(q.new_queued_pod_info(HIGH_POD, "plugin"), EVENT_UNSCHEDULED_POD_ADD.label)
    q.backoff_q.add(
        q.new_queued_pod_info(make_pod("hpp2", uid="hpp2ns1", priority=HIGH)),
        EVENT_UNSCHEDULED_POD_ADD.label,
    )
    got = []
    while (p := q.pop()) is not None:
        got.append(p.pod.metadata.name)
    assert got == want
    if enabled:
        assert q.metrics.incoming_pods[("active", "PopFromBackoffQ")] == 1


# --- Update ---------------------------------------------------------------------------------

QUEUE_PLUGIN, SKIP_PLUGIN = "queuePlugin", "skipPlugin"
UPDATE_HINTS = [
    (EVENT_UNSCHEDULED_POD_UPDATE, QUEUE_PLUGIN, hint_queue),
    (EVENT_UNSCHEDULED_POD_UPDATE, SKIP_PLUGIN, hint_skip),
]


def annotated(pod: Pod, value: str) -> Pod:
    return evolve_meta(pod, annotations={**pod.metadata.annotations, "foo": value})


def test_update_unknown_pod_adds_it_to_active_q() -> None:
    q = new_queue(hints=UPDATE_HINTS)
    new = annotated(MED_POD, "test")
    q.update(MED_POD, new)
    assert q.where_is(new) == ["Active"]
    assert q.get_pod("mpp", "ns2") is not None
    assert q.nominator.nominated_node_of(MED_POD.uid) == "node1"
    assert q.metrics.incoming_pods[("active", EVENT_UNSCHEDULED_POD_UPDATE.label)] == 1


def test_update_adds_nomination() -> None:
    q = new_queue(hints=UPDATE_HINTS)
    q.update(HIGH_POD, HIGH_NOMINATED)
    assert q.where_is(HIGH_NOMINATED) == ["Active"]
    assert len(q.nominator.nominated_pods) == 1


def test_update_in_active_q_keeps_it_there_with_the_new_version() -> None:
    q = new_queue(hints=UPDATE_HINTS)
    q.add(HIGH_POD)
    new = annotated(HIGH_POD, "x")
    q.update(HIGH_POD, new)
    p = q.get_pod("hpp", "ns1")
    assert p is not None and p.pod is new and q.where_is(new) == ["Active"]


def test_update_in_backoff_q_stays_there() -> None:
    q = new_queue(hints=UPDATE_HINTS)
    info = q.new_queued_pod_info(MED_POD)
    q.backoff_q.add(info, EVENT_UNSCHEDULED_POD_ADD.label)
    new = annotated(MED_POD, "x")
    q.update(MED_POD, new)
    assert q.where_is(new) == ["Backoff"] and info.pod is new


@pytest.mark.parametrize(
    ("plugin", "advance", "want"),
    [
        (QUEUE_PLUGIN, 0.0, "Backoff"),  # hint Queue, still backing off
        (QUEUE_PLUGIN, 10.0, "Active"),  # hint Queue, backoff over
        (SKIP_PLUGIN, 0.0, "Unschedulable"),  # hint QueueSkip
    ],
)
def test_update_in_unschedulable_pods_asks_the_hints(
    plugin: str, advance: float, want: str
) -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=UPDATE_HINTS)
    info = q.new_queued_pod_info(MED_POD, plugin)
    info.unschedulable_count = 1
    q._unschedulable_add_or_update(info, EVENT_UNSCHEDULED_POD_ADD.label)
    clock.advance(advance)
    new = annotated(MED_POD, "test")
    q.update(MED_POD, new)
    assert q.where_is(new) == [want]
    assert info.pod is new


def test_update_in_flight_only_records_events() -> None:
    q = new_queue(hints=[(EVENT_UNSCHEDULED_POD_UPDATE, "fakePlugin", hint_queue)])
    q.add(POD1)
    pop(q, POD1)
    new = evolve_spec(POD1, tolerations=make_pod("x", tolerations=1).spec.tolerations)
    q.update(POD1, new)
    assert q.where_is(new) == ["InFlight"]
    evs = [e for e in q.in_flight_events() if isinstance(e, InFlightEvent)]
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.UnscheduledPod, ActionType.UpdatePodToleration)
    ]
    assert evs[0].old_obj is POD1 and evs[0].new_obj is new
    # The rejection by fakePlugin may be fixed by that update: backoffQ, not unschedulable.
    q.add_unschedulable_if_not_present(lookup(new, "fakePlugin"), q.scheduling_cycle())
    p = q.backoff_q.get(new.key)
    assert p is not None and p.pod is new


# --- Delete / Activate ------------------------------------------------------------------------


def test_delete_removes_pod_and_nomination() -> None:
    q = new_queue()
    q.update(HIGH_POD, HIGH_NOMINATED)
    q.add(UNSCHED_POD)
    q.delete(HIGH_NOMINATED)
    assert q.where_is(UNSCHED_POD) == ["Active"] and q.where_is(HIGH_POD) == []
    assert list(q.nominator.nominated_pod_to_node) == [UNSCHED_POD.uid]
    q.delete(UNSCHED_POD)
    assert q.nominator.nominated_pods == {}
    q.delete(make_pod("ghost"))  # unknown: ignored
    q.check_invariants()


@pytest.mark.parametrize("where", ["unschedulable", "backoff", "active", "nowhere"])
def test_activate(where: str) -> None:
    q = new_queue()
    pod = HIGH_NOMINATED
    info = QueuedPodInfo.of(pod, START)
    if where == "unschedulable":
        q._unschedulable_add_or_update(info, EVENT_UNSCHEDULED_POD_ADD.label)
    elif where == "backoff":
        q.backoff_q.add(info, EVENT_UNSCHEDULED_POD_ADD.label)
    elif where == "active":
        q.add(pod)
    q.activate({"test_pod": pod})
    assert q.where_is(pod) == ([] if where == "nowhere" else ["Active"])
    if where in ("unschedulable", "backoff"):
        assert q.metrics.incoming_pods[("active", "ForceActivate")] == 1


def test_activate_in_flight_pod_records_force_activate() -> None:
    q = new_queue()
    q.add(HIGH_NOMINATED)
    pop(q)
    q.activate([HIGH_NOMINATED])
    evs = [e for e in q.in_flight_events() if isinstance(e, InFlightEvent)]
    assert len(evs) == 1 and evs[0].event == EVENT_FORCE_ACTIVATE
    assert evs[0].old_obj is None and evs[0].new_obj is HIGH_NOMINATED
    # Another pod's activation is not recorded.
    q.activate([MED_POD])
    assert len(q.in_flight_events()) == 2
    # When the pod fails, the ForceActivate meant for it requeues it despite any hint.
    q.add_unschedulable_if_not_present(lookup(HIGH_NOMINATED, "plugin"), q.scheduling_cycle())
    assert q.where_is(HIGH_NOMINATED) == ["Backoff"]


# --- PreEnqueue (moveToActiveQ / moveToBackoffQ) ---------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "labels", "event", "from_backoff", "enabled", "want_unsched", "want_ok"),
    [
        ([], ["p"], "UnscheduledPodAdd", False, True, 0, True),
        ([[], []], ["p"], "UnscheduledPodAdd", False, True, 1, False),
        ([["foo", "bar"], ["foo"]], ["bar"], "UnscheduledPodAdd", False, True, 1, False),
        ([["foo", "bar"], ["foo"]], ["bar"], "BackoffComplete", False, False, 1, False),
        ([["foo", "bar"], ["foo"]], ["bar"], "BackoffComplete", True, True, 0, True),
        ([["foo", "bar"], ["foo"]], ["bar"], "ForceActivate", False, True, 1, False),
        ([["foo", "bar"], ["foo"]], ["bar"], "ForceActivate", True, True, 0, True),
        ([["foo", "bar"], ["bar"]], ["bar"], "UnscheduledPodAdd", False, True, 0, True),
    ],
)
def test_move_to_active_q_runs_pre_enqueue(
    plugins: list[list[str]],
    labels: list[str],
    event: str,
    from_backoff: bool,
    enabled: bool,
    want_unsched: int,
    want_ok: bool,
) -> None:
    pls = [AllowlistPlugin(a, name=f"pl{i}") for i, a in enumerate(plugins)]
    q = new_queue(
        pre_enqueue=pls, pod_initial_backoff=30, pod_max_backoff=60, pop_from_backoff_q=enabled
    )
    pod = make_pod("bar", labels={k: "" for k in labels})
    assert q._move_to_active_q(q.new_queued_pod_info(pod), event, from_backoff) is want_ok
    assert len(q.unschedulable_pods()) == want_unsched
    q.update(pod, annotated(pod, ""))  # an update the plugins don't care about
    assert len(q.unschedulable_pods()) == want_unsched


@pytest.mark.parametrize(
    ("plugins", "labels", "enabled", "want_ok"),
    [
        ([], ["p"], True, True),
        ([[], []], ["p"], False, True),
        ([[], []], ["p"], True, False),
        ([["foo", "bar"], ["foo"]], ["bar"], False, True),
        ([["foo", "bar"], ["foo"]], ["bar"], True, False),
        ([["foo", "bar"], ["bar"]], ["bar"], True, True),
    ],
)
def test_move_to_backoff_q_runs_pre_enqueue(
    plugins: list[list[str]], labels: list[str], enabled: bool, want_ok: bool
) -> None:
    pls = [AllowlistPlugin(a, name=f"pl{i}") for i, a in enumerate(plugins)]
    q = new_queue(pre_enqueue=pls, pop_from_backoff_q=enabled)
    pod = make_pod("bar", labels={k: "" for k in labels})
    info = q.new_queued_pod_info(pod)
    assert q._move_to_backoff_q(info, EVENT_UNSCHEDULED_POD_ADD.label) is want_ok
    assert q.where_is(pod) == (["Backoff"] if want_ok else ["Unschedulable"])


# --- isPodWorthRequeuing ----------------------------------------------------------------------


NODE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
NODE_UPDATE = ClusterEvent(EventResource.Node, ActionType.Update)


def _worth_cases() -> list[tuple[object, ...]]:
    c = HintCounter()
    pod = make_pod("pod1", uid="1")
    other = make_pod("pod-different", "ns2", uid="2")
    return [
        (
            "no hint for the event",
            c,
            ({"fooPlugin1"}, set()),
            NODE_ADD,
            None,
            [(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", c.queue)],
            QueueingStrategy.QueueSkip,
            0,
        ),
        (
            "hint error counts as Queue",
            c,
            ({"fooPlugin1"}, set()),
            NODE_ADD,
            None,
            [(NODE_ADD, "fooPlugin1", c.error)],
            QueueingStrategy.QueueAfterBackoff,
            1,
        ),
        (
            "no hint fn counts as Queue",
            c,
            ({"fooPlugin1"}, set()),
            NODE_ADD,
            None,
            [(NODE_ADD, "fooPlugin1", None)],
            QueueingStrategy.QueueAfterBackoff,
            0,
        ),
        (
            "wildcard",
            c,
            ({"fooPlugin1"}, set()),
            EVENT_UNSCHEDULABLE_TIMEOUT,
            None,
            [],
            QueueingStrategy.QueueAfterBackoff,
            0,
        ),
        (
            "wildcard for this pod",
            c,
            ({"fooPlugin1"}, set()),
            EVENT_FORCE_ACTIVATE,
            pod,
            [],
            QueueingStrategy.QueueAfterBackoff,
            0,
        ),
        (
            "wildcard for another pod",
            c,
            ({"fooPlugin1"}, set()),
            EVENT_FORCE_ACTIVATE,
            other,
            [],
            QueueingStrategy.QueueSkip,
            0,
        ),
        (
            "pending plugin queue is immediate",
            c,
            ({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}),
            NODE_ADD,
            None,
            [
                (NODE_ADD, "fooPlugin1", c.queue),
                (NODE_ADD, "fooPlugin2", c.queue),
                (NODE_ADD, "fooPlugin3", c.queue),
                (NODE_ADD, "fooPlugin4", c.error),
            ],
            QueueingStrategy.QueueImmediately,
            2,
        ),
        (
            "unschedulable plugin queue is after backoff",
            c,
            ({"fooPlugin1", "fooPlugin2"}, set()),
            NODE_ADD,
            None,
            [(NODE_ADD, "fooPlugin1", c.skip), (NODE_ADD, "fooPlugin2", c.queue)],
            QueueingStrategy.QueueAfterBackoff,
            2,
        ),
        (
            "hints of other plugins are ignored",
            c,
            ({"fooPlugin1", "fooPlugin2"}, set()),
            NODE_ADD,
            None,
            [
                (NODE_ADD, "fooPlugin1", c.skip),
                (NODE_ADD, "fooPlugin2", c.skip),
                (NODE_ADD, "fooPlugin3", c.queue),
            ],
            QueueingStrategy.QueueSkip,
            2,
        ),
        (
            "specific node update stops at the first Queue",
            c,
            ({"fooPlugin1", "fooPlugin2"}, set()),
            NODE_LABEL,
            None,
            [
                (NODE_LABEL, "fooPlugin1", c.queue),
                (NODE_LABEL, "fooPlugin2", c.queue),
                (NODE_UPDATE, "fooPlugin1", c.queue),
                (NODE_ADD, "fooPlugin1", c.queue),
            ],
            QueueingStrategy.QueueAfterBackoff,
            1,
        ),
        (
            "registration with wildcard resource",
            c,
            ({"fooPlugin1"}, set()),
            NODE_ADD,
            None,
            [(ClusterEvent(EventResource.WildCard, ActionType.Add), "fooPlugin1", c.queue)],
            QueueingStrategy.QueueAfterBackoff,
            1,
        ),
        (
            "wildcard registration",
            c,
            ({"fooPlugin1"}, set()),
            ClusterEvent(
                EventResource.Node, ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
            ),
            None,
            [(ClusterEvent(EventResource.WildCard, ActionType.All), "fooPlugin1", c.queue)],
            QueueingStrategy.QueueAfterBackoff,
            1,
        ),
    ]


@pytest.mark.parametrize(
    ("name", "counter", "rejectors", "event", "new_obj", "hints", "want", "calls"),
    _worth_cases(),
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_is_pod_worth_requeuing(
    name: str,
    counter: HintCounter,
    rejectors: tuple[set[str], set[str]],
    event: ClusterEvent,
    new_obj: Pod | None,
    hints: list[tuple[ClusterEvent, str, Callable[..., object] | None]],
    want: QueueingStrategy,
    calls: int,
) -> None:
    counter.count = 0
    q = new_queue(hints=hints)  # type: ignore[arg-type]
    info = QueuedPodInfo.of(make_pod("pod1", uid="1"), START)
    info.unschedulable_plugins, info.pending_plugins = set(rejectors[0]), set(rejectors[1])
    assert q._is_pod_worth_requeuing(info, event, None, new_obj) == want
    assert counter.count == calls


def test_hint_results_are_counted() -> None:
    c = HintCounter()
    q = new_queue(hints=[(NODE_ADD, "b", c.skip), (NODE_ADD, "a", c.error)])
    info = QueuedPodInfo.of(make_pod("p"), START, "b", "a")
    q._is_pod_worth_requeuing(info, NODE_ADD, None, None)
    assert q.metrics.queueing_hint_results[("a", "NodeAdd", "Error")] == 1
    assert q.metrics.queueing_hint_results[("b", "NodeAdd", "QueueSkip")] == 1


# --- MoveAllToActiveOrBackoffQueue ------------------------------------------------------------


@pytest.mark.parametrize(
    ("pending", "hint", "advance", "want"),
    [
        (True, hint_queue, 0.0, "Active"),
        (False, hint_queue, 0.0, "Backoff"),
        # 1 s of backoff ends with the window after its end: 2 s later the pod is not backing off.
        (False, hint_queue, 2.0, "Active"),
        (False, hint_skip, 0.0, "Unschedulable"),
    ],
)
def test_move_all_with_queueing_hint(
    pending: bool, hint: Callable[..., object], advance: float, want: str
) -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=[(NODE_ADD, "foo", hint)])  # type: ignore[list-item]
    pod = make_pod("pod1", labels={"foo": "bar"})
    q.add(pod)
    p = pop(q)
    if pending:
        requeue(q, p, pending=("foo",))
    else:
        requeue(q, p, "foo")
    assert q.where_is(pod) == ["Unschedulable"]
    clock.advance(advance)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert q.where_is(pod) == [want]


def test_move_all_pre_check_filters_and_is_not_called_for_uninteresting_events() -> None:
    clock = FakeClock(START)
    q = new_queue(clock, hints=[(NODE_ADD, "plugin", hint_queue)])
    pods = [make_pod(f"p{i}", priority=i) for i in range(5)]
    for pod in pods:
        q.add(pod)
        requeue(q, pop(q), "plugin")

    def boom(pod: Pod) -> bool:
        raise AssertionError("preCheck shouldn't be called")

    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None, boom)
    assert len(q.unschedulable_pods()) == 5
    q.move_all_to_active_or_backoff_queue(
        EVENT_UNSCHEDULABLE_TIMEOUT, None, None, lambda p: (p.spec.priority or 0) >= 2
    )
    assert names(q.pods_in_backoff_q()) == ["p2", "p3", "p4"]
    assert names(q.unschedulable_pods()) == ["p0", "p1"]


def test_assigned_pod_added_moves_pods_with_matching_affinity_or_spread() -> None:
    q = new_queue(
        hints=[
            (ClusterEvent(EventResource.Pod, ActionType.Add), "InterPodAffinity", hint_queue),
            (ClusterEvent(EventResource.Pod, ActionType.Add), "PodTopologySpread", hint_queue),
        ]
    )
    affine = make_pod("affine", affinity_to={"app": "db"})
    other = make_pod("other", affinity_to={"app": "web"})
    spread = make_pod("spread")
    spread_other_ns = make_pod("spread2", "ns9")
    for pod, plugin in (
        (affine, "InterPodAffinity"),
        (other, "InterPodAffinity"),
        (spread, "PodTopologySpread"),
        (spread_other_ns, "PodTopologySpread"),
    ):
        q.add(pod)
        requeue(q, pop(q), plugin)
    db = make_pod("db-0", labels={"app": "db"}, node_name="n1")
    q.assigned_pod_added(db)
    assert names(q.pods_in_backoff_q()) == ["affine", "spread"]
    assert names(q.unschedulable_pods()) == ["other", "spread2"]


def test_assigned_pod_updated_scale_down_considers_every_pod() -> None:
    q = new_queue(
        hints=[
            (
                ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
                "NodeResourcesFit",
                hint_queue,
            )
        ]
    )
    pod = make_pod("big")
    q.add(pod)
    requeue(q, pop(q), "NodeResourcesFit")
    old = make_pod("small", cpu="2", node_name="n1")
    new = make_pod("small", cpu="1", node_name="n1")
    event = ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown)
    q.assigned_pod_updated(old, new, event)
    assert q.where_is(pod) == ["Backoff"]


# --- gating ------------------------------------------------------------------------------------


def test_gated_pod_moves_only_on_events_of_its_gating_plugin() -> None:
    """MoveAllToActiveOrBackoffQueueWithQueueingHint, gated cases."""
    gate_events = [(EVENT_UNSCHEDULED_POD_UPDATE, "SchedulingGates", hint_queue)]
    c = HintCounter()
    q = new_queue(
        hints=[(NODE_ADD, "foo", c.error), *gate_events],
        pre_enqueue=[AllowlistPlugin(["foo"], name="foo")],
    )
    pod = make_pod("pod1")
    q.add(pod)  # gated by "foo" (no "foo" label)
    info = q.get_pod("pod1", "ns1")
    assert info is not None and info.gating_plugin == "foo"
    assert info.gating_plugin_events == (NODE_ADD,)
    # Gated by foo, which registered NodeAdd: the hint is asked (an error counts as Queue) and
    # PreEnqueue runs again; the pod stays gated.
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert c.count == 1 and q.where_is(pod) == ["Unschedulable"]
    # Gated by "foo", which registered nothing for the update: no hint is asked at all.
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULED_POD_UPDATE, None, None)
    assert c.count == 1


def test_add_twice_keeps_one_entry_with_fresh_info() -> None:
    clock = FakeClock(START)
    q = new_queue(clock)
    q.add(POD1)
    first = q.get_pod("targetpod", "ns1")
    clock.advance(3)
    q.add(POD1)
    second = q.get_pod("targetpod", "ns1")
    assert second is not first and second is not None and second.timestamp == START + 3
    assert q.where_is(POD1) == ["Active"] and len(q.pods_in_active_q()) == 1
    # Added again while waiting as unschedulable: back to activeQ, still one entry.
    requeue(q, pop(q), "plugin")
    q.add(POD1)
    assert q.where_is(POD1) == ["Active"]
    q.check_invariants()


def test_update_of_unknown_and_delete_of_unknown_pods() -> None:
    q = new_queue()
    q.delete(POD1)
    assert q.pending_pods()[1] == "activeQ:0; backoffQ:0; unschedulablePods:0"
    q.update(None, POD2)  # no old version: treated as a new unscheduled pod
    assert q.where_is(POD2) == ["Active"]
    q.check_invariants()


def test_deep_copy_is_independent() -> None:
    info = QueuedPodInfo.of(make_pod("p", affinity_to={"a": "b"}), START, "X")
    info.pending_plugins.add("Y")
    info.gating_plugin = "G"
    c = info.deep_copy()
    c.unschedulable_plugins.add("Z")
    c.pending_plugins.clear()
    c.update(make_pod("p", labels={"new": ""}))
    assert info.unschedulable_plugins == {"X"} and info.pending_plugins == {"Y"}
    assert info.pod.metadata.labels == {} and c.pod.metadata.labels == {"new": ""}
    assert c.gating_plugin == "G" and c.timestamp == START and c.gated()
