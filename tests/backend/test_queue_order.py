"""Equal-priority pods added at the same clock time pop in arrival order."""

from __future__ import annotations

from kschedlib import FakeClock
from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from tests.builders import new_scheduler, node, pod


def test_frozen_clock_pops_in_arrival_order_through_the_facade() -> None:
    s = new_scheduler()
    s.add_node(node("n1", cpu="100"))
    for i in range(12):
        s.add_pod(pod(f"p{i}"))
    assert [r.key for r in s.run()] == [f"default/p{i}" for i in range(12)]


def test_priority_and_timestamp_still_come_first() -> None:
    clock = FakeClock()
    q = PriorityQueue(clock=clock)
    q.add(pod("early-low", priority=1))
    clock.advance(10)
    q.add(pod("late-low", priority=1))
    q.add(pod("late-high", priority=5))
    q.add(pod("late-low2", priority=1))
    order = []
    while (p := q.pop()) is not None:
        order.append(p.pod.metadata.name)
    assert order == ["late-high", "early-low", "late-low", "late-low2"]


def test_requeued_pod_goes_after_pods_that_arrived_earlier_at_the_same_time() -> None:
    q = PriorityQueue(clock=FakeClock())
    q.add(pod("a"))
    p = q.pop()
    assert p is not None
    q.add(pod("b"))
    q.add(pod("c"))
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle())  # error: backoff
    q.activate([p.pod])
    order = []
    while (x := q.pop()) is not None:
        order.append(x.pod.metadata.name)
    assert order == ["b", "c", "a"]


def test_a_forked_queue_keeps_counting_arrivals() -> None:
    clock = FakeClock()
    parent = PriorityQueue(clock=clock)
    parent.add(pod("a"))
    parent.add(pod("b"))
    fork = PriorityQueue(clock=clock)
    fork.copy_state_from(parent)
    fork.add(pod("c"))
    order = []
    while (p := fork.pop()) is not None:
        order.append(p.pod.metadata.name)
    assert order == ["a", "b", "c"]
