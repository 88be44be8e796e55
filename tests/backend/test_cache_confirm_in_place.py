"""Confirming an assumed pod in place (the bound object is the assumed one, last on its node)
leaves the cache as removing and re-adding it does: random workloads with preemption, node
updates and deletions run with and without it give the same decisions, and every NodeInfo
the same pods in the same order and the same sums."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.backend.cache.cache import Cache
from tests.framework.test_node_local_cache import run, workloads


def cache_state(sched: Scheduler) -> list[Any]:
    out = []
    for name, ni in sorted(sched.cache.dump().nodes.items()):
        r, nz = ni.requested, ni.non_zero_requested
        out.append((name, [pi.pod.key for pi in ni.pods], r.milli_cpu, r.memory,
                    nz.milli_cpu, nz.memory, sorted(r.scalar_resources.items())))
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_same_decisions_with_and_without_in_place_confirmation(w: dict[str, Any]) -> None:
    fast = run(w, cache=True, explain=False)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(Cache, "_confirm_in_place", lambda self, pod: False)
        slow = run(w, cache=True, explain=False)
    finally:
        mp.undo()
    assert fast == slow


def test_in_place_confirmation_keeps_the_node_as_recomputed() -> None:
    calls: list[bool] = []
    orig = Cache._confirm_in_place

    def spy(self: Cache, pod: Pod) -> bool:
        ok = orig(self, pod)
        calls.append(ok)
        return ok

    mp = pytest.MonkeyPatch()
    mp.setattr(Cache, "_confirm_in_place", spy)
    try:
        states = []
        for use in (True, False):
            if not use:
                mp.setattr(Cache, "_confirm_in_place", lambda self, pod: False)
            s = Scheduler(clock=FakeClock(), deterministic=True, explain=False)
            for i in range(3):
                s.add_node({"metadata": {"name": f"n{i}"},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                                       "pods": "20", "example.com/gpu": "4"}}})
            for i in range(12):
                s.add_pod({"metadata": {"name": f"p{i}", "namespace": "default"},
                           "spec": {"containers": [{"name": "c", "resources": {"requests": {
                               "cpu": "300m", "example.com/gpu": "1" if i % 3 else "0"}},
                               "ports": [{"containerPort": 80, "hostPort": 8000 + i}]}]}})
            s.run()
            states.append(cache_state(s))
    finally:
        mp.undo()
    assert any(calls)
    assert states[0] == states[1]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_shared_allocatable_is_never_changed(w: dict[str, Any]) -> None:
    """Snapshots share each NodeInfo's allocatable with the cache: scheduling (preemption's
    dry runs included) leaves every one equal to its node's status."""
    from kschedlib.api.resource import Resource
    from tests.framework.test_node_local_cache import make_node

    sched = Scheduler(clock=FakeClock(), seed=7, explain=False)
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    for idx, (t, _) in enumerate(w["pods"]):
        sched.add_pod(Pod.from_dict({"metadata": {"name": f"p{idx}", "namespace": "default",
                                                  "labels": {"app": "web"}},
                                     "spec": {**w["templates"][t], "priority": idx % 3 * 10}}))
    sched.run()
    for name, ni in sched.snapshot.node_info_map.items():
        assert ni.node is not None
        want = Resource.from_list(ni.node.status.allocatable)
        assert (ni.allocatable.milli_cpu, ni.allocatable.memory, ni.allocatable.allowed_pod_number,
                ni.allocatable.scalar_resources) == (
            want.milli_cpu, want.memory, want.allowed_pod_number, want.scalar_resources), name
