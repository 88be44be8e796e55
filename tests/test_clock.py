"""FakeClock keeps exact integer nanoseconds inside and speaks seconds at the API."""

from __future__ import annotations

from kschedlib import FakeClock, Pod
from kschedlib.clock import to_ns


def test_steps_add_up_exactly() -> None:
    clock = FakeClock()
    for step in (0.3, 0.3, 0.3, 1.1):
        clock.advance(step)
    assert clock.now() == clock.start + 2  # float seconds ended 0.2 us short before
    assert clock.now_ns() == to_ns(clock.start) + 2_000_000_000
    clock.sleep(0.1)
    clock.advance_to(1_700_000_002.2)
    assert clock.now_ns() == 1_700_000_002_200_000_000
    assert to_ns(0.3) == 300_000_000 and to_ns(2) == 2_000_000_000


def test_timers_fire_at_their_exact_time() -> None:
    clock = FakeClock()
    fired: list[int] = []
    clock.call_later(2, lambda: fired.append(clock.now_ns()))
    for step in (0.3, 0.3, 0.3):
        clock.advance(step)
    clock.advance(1.1)
    assert fired == [to_ns(clock.start) + 2_000_000_000]
    twin = clock.clone()
    assert twin.now_ns() == clock.now_ns() and twin.wall_time() == clock.wall_time()


def test_a_backoff_that_expires_exactly_then_is_over() -> None:
    """A pod rejected once at t0 backs off until the window after t0 + 1 s (v1.35 aligns
    backoffQ to whole seconds): 0.3 + 0.3 + 0.3 + 1.1 s later it is exactly t0 + 2 s, over."""
    from kschedlib.backend.queue.backoff import BackoffQueue
    from kschedlib.backend.queue.metrics import QueueMetrics
    from kschedlib.framework.queued_pod_info import QueuedPodInfo
    from kschedlib.framework.types import PodInfo

    clock = FakeClock()
    q = BackoffQueue(clock, 1.0, 10.0, lambda a, b: False, True, QueueMetrics())
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default", "uid": "p"},
                         "spec": {"containers": [{"name": "c"}]}})
    info = QueuedPodInfo(PodInfo(pod), timestamp=clock.now(), unschedulable_count=1)
    for step in (0.3, 0.3, 0.3):
        clock.advance(step)
    clock.advance(1.1)
    assert not q.is_pod_backing_off(info)
