"""backoffQ: backoff arithmetic, ordering windows and the two heaps (backoff_queue_test.go)."""

from __future__ import annotations

import random

import pytest

from kschedlib.backend.queue import BackoffQueue, Heap, QueueMetrics, backoff_duration
from kschedlib.backend.queue.backoff import NO_BACKOFF
from kschedlib.backend.queue.scheduling_queue import priority_sort_less
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.queued_pod_info import QueuedPodInfo

from .test_queue_support import START, make_pod


def qpi(
    name: str, ts: float, *, count: int = 1, plugins: tuple[str, ...] = ("plugin",), prio: int = 0
) -> QueuedPodInfo:
    p = QueuedPodInfo.of(make_pod(name, priority=prio), ts, *plugins)
    p.unschedulable_count = count
    return p


def bq(clock: FakeClock, pop_from_backoff_q: bool = True) -> BackoffQueue:
    return BackoffQueue(clock, 1.0, 10.0, priority_sort_less, pop_from_backoff_q, QueueMetrics())


@pytest.mark.parametrize(
    ("count", "want"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (60, 10.0)],
)
def test_backoff_duration_doubles_up_to_max(count: int, want: float) -> None:
    assert backoff_duration(count, 1.0, 10.0) == want


@pytest.mark.parametrize(
    ("initial_ns", "max_ns", "count", "want_ns"),
    [
        (1, 32, 16, 32),  # "normal"
        (1, 2**31 - 1, 32, 2**31 - 1),  # "overflow_32bit"
        (1, 2**63 - 1, 64, 2**63 - 1),  # "overflow_64bit"
    ],
)
def test_backoff_duration_go_table(initial_ns: int, max_ns: int, count: int, want_ns: int) -> None:
    got = backoff_duration(count, initial_ns / 1e9, max_ns / 1e9)
    assert got == want_ns / 1e9


def test_consecutive_errors_take_over_unschedulable_count() -> None:
    clock = FakeClock(START)
    q = bq(clock)
    p = qpi("p", START, count=4)
    assert q.get_backoff_time(p) == START + 8
    p.backoff_expiration = None
    p.consecutive_errors_count = 1
    assert q.get_backoff_time(p) == START + 1
    never = qpi("n", START, count=0)
    assert q.get_backoff_time(never) == NO_BACKOFF
    assert not q.is_pod_backing_off(never)


def test_backoff_time_is_cached_until_cleared() -> None:
    clock = FakeClock(START)
    q = bq(clock)
    p = qpi("p", START, count=1)
    assert q.get_backoff_time(p) == START + 1
    p.unschedulable_count = 5
    assert q.get_backoff_time(p) == START + 1
    p.backoff_expiration = None
    assert q.get_backoff_time(p) == START + 10


def test_backoff_end_is_truncated_to_the_window() -> None:
    clock = FakeClock(START + 0.3)
    q = bq(clock)
    p = qpi("p", START + 0.3, count=1)
    assert q.get_backoff_time(p) == START + 1
    # Still backing off while the clock is in the window of the backoff end.
    clock.set(START + 1.9)
    assert q.is_pod_backing_off(p)
    clock.set(START + 2.0)
    assert not q.is_pod_backing_off(p)


def test_without_pop_from_backoff_q_the_end_is_exact() -> None:
    clock = FakeClock(START + 0.3)
    q = bq(clock, pop_from_backoff_q=False)
    p = qpi("p", START + 0.3, count=1)
    assert q.get_backoff_time(p) == START + 1.3
    clock.set(START + 1.3)
    assert q.is_pod_backing_off(p)
    clock.set(START + 1.31)
    assert not q.is_pod_backing_off(p)


@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        ((), []),
        (("pod0", "pod1"), ["pod0"]),
        (("pod2", "pod3"), ["pod2"]),
        (("pod0", "pod1", "pod2", "pod3"), ["pod0", "pod2"]),
        (("pod0", "pod2"), ["pod0", "pod2"]),
        (("pod1", "pod3"), []),
    ],
)
@pytest.mark.parametrize("enabled", [True, False])
def test_pop_all_backoff_completed(
    in_backoff: tuple[str, ...], want: list[str], enabled: bool
) -> None:
    """TestBackoffQueue_popEachBackoffCompleted: pod0/pod1 rejected, pod2/pod3 errored."""
    clock = FakeClock(START + 0.5)
    now = clock.now()
    infos = {
        "pod0": qpi("pod0", now - 2),
        "pod1": qpi("pod1", now + 1),
        "pod2": qpi("pod2", now - 2, plugins=()),
        "pod3": qpi("pod3", now + 1, plugins=()),
    }
    q = bq(clock, enabled)
    for n in in_backoff:
        q.add(infos[n], "UnscheduledPodAdd")
    got = [p.pod.metadata.name for p in q.pop_all_backoff_completed()]
    assert got == want
    assert len(q) == len(in_backoff) - len(want)


@pytest.mark.parametrize(
    ("enabled", "want"),
    [
        (True, ["pod5", "pod4", "pod2", "pod3"]),
        (False, ["pod5", "pod4", "pod3", "pod2"]),
    ],
)
def test_backoff_queue_ordering(enabled: bool, want: list[str]) -> None:
    """TestBackoffQueueOrdering: within a window, higher priority first (PopFromBackoffQ)."""
    clock = FakeClock(START)
    now = START
    infos = [
        qpi("pod0", now, prio=1),
        qpi("pod1", now - 1, prio=1),
        qpi("pod2", now - 2 + 0.001, prio=2),
        qpi("pod3", now - 2, prio=1),
        qpi("pod4", now - 2, prio=2),
        qpi("pod5", now - 3, prio=1),
    ]
    q = bq(clock, enabled)
    for p in infos:
        q.add(p, "UnscheduledPodAdd")
    assert [p.pod.metadata.name for p in q.pop_all_backoff_completed()] == want


def test_add_moves_between_the_two_heaps_and_counts_once() -> None:
    metrics = QueueMetrics()
    q = BackoffQueue(FakeClock(START), 1.0, 10.0, priority_sort_less, True, metrics)
    p = qpi("p", START, plugins=())
    q.add(p, "E1")
    assert q.pod_error_backoff_q.has(p) and not q.pod_backoff_q.has(p)
    p.unschedulable_plugins.add("X")
    q.add(p, "E2")
    assert q.pod_backoff_q.has(p) and not q.pod_error_backoff_q.has(p)
    assert metrics.incoming_pods == {("backoff", "E1"): 1}
    assert q.len_backoff() == 1 and len(q) == 1


def test_pop_backoff_ignores_the_error_heap() -> None:
    q = bq(FakeClock(START))
    q.add(qpi("err", START, plugins=()), "E")
    assert q.pop_backoff() is None
    q.add(qpi("rej", START + 100), "E")
    popped = q.pop_backoff()
    assert popped is not None and popped.pod.metadata.name == "rej"


def test_heap_matches_sorted_order_and_keeps_its_index() -> None:
    rng = random.Random(7)
    h: Heap[tuple[str, int]] = Heap(lambda t: t[0], lambda a, b: a[1] < b[1])
    live: dict[str, int] = {}
    for step in range(2000):
        op = rng.random()
        key = f"k{rng.randrange(40)}"
        if op < 0.5:
            v = rng.randrange(100)
            h.add_or_update((key, v))
            live[key] = v
        elif op < 0.7:
            removed = h.delete_key(key)
            assert (removed is None) == (key not in live)
            live.pop(key, None)
        elif op < 0.9:
            top = h.pop()
            if live:
                assert top is not None and top[1] == min(live.values())
                del live[top[0]]
            else:
                assert top is None
        else:
            got = h.get_by_key(key)
            assert (got is None) == (key not in live)
        if step % 50 == 0:
            h.check()
    h.check()
    assert sorted(h.keys()) == sorted(live)


def test_heap_tie_order_follows_go_container_heap() -> None:
    """Equal items come out in the order Go's sift rules give (not insertion order)."""
    h: Heap[tuple[str, int]] = Heap(lambda t: t[0], lambda a, b: a[1] < b[1])
    for k in ("a", "b", "c", "d", "e"):
        h.add_or_update((k, 0))
    out = []
    while (t := h.pop()) is not None:
        out.append(t[0])
    # Go: Pop swaps the root with the last item and sifts down; ties never swap.
    assert out == ["a", "e", "d", "c", "b"]
