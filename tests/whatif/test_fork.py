"""Scheduler.fork(): independent, exact, copy-on-write."""

from __future__ import annotations

from typing import Any

from kschedlib import FakeClock, Scheduler
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.framework.queued_pod_info import FORK_COPIED_FIELDS, QueuedPodInfo
from tests.whatif.helpers import cache_view, cluster, decisions, node, pod, snapshot_view


def _loaded() -> Scheduler:
    s = cluster(6, cpu="2")
    for i in range(6):
        s.add_pod(pod(f"run-{i}", cpu="500m", node_name=f"n{i % 6}"))
    for i in range(10):
        s.add_pod(pod(f"p-{i}", cpu="600m"))
    s.run(max_cycles=4)  # some bound, some still queued, snapshot taken
    return s


def test_fork_decides_as_the_parent_would() -> None:
    parent = _loaded()
    child = parent.fork()
    assert decisions(child) == decisions(parent)
    assert snapshot_view(child) == snapshot_view(parent)


def test_changes_in_a_fork_never_show_in_the_parent_and_back() -> None:
    parent = _loaded()
    before = snapshot_view(parent)
    cached_before = cache_view(parent)
    pending_before = sorted(p.key for p in parent.pending_pods())
    child = parent.fork()
    child.delete_node("n0")
    child.add_node(node("extra", cpu="64"))
    child.add_pod(pod("only-in-child"))
    child.run()
    child.delete_pod("default/run-1")
    child.add_object(PodDisruptionBudget.from_dict({"metadata": {"name": "pdb", "namespace": "default"}}))
    assert snapshot_view(parent) == before
    assert cache_view(parent) == cached_before
    assert sorted(p.key for p in parent.pending_pods()) == pending_before
    assert parent.objects.get_object("PodDisruptionBudget", "default/pdb") is None
    # and the other way round
    child2 = parent.fork()
    view2 = snapshot_view(child2)
    cached2 = cache_view(child2)
    parent.delete_node("n1")
    parent.run()
    assert cache_view(child2) == cached2
    assert snapshot_view(child2) == view2


def test_fork_of_a_fork_and_repeated_forks_stay_exact() -> None:
    parent = _loaded()
    a = parent.fork()
    b = a.fork()
    c = parent.fork()
    expected = decisions(parent.fork())
    assert decisions(a) == expected
    assert decisions(b) == expected
    assert decisions(c) == expected


def test_fork_keeps_nominations_and_clock_time() -> None:
    clock = FakeClock(1000.0)
    s = Scheduler(clock=clock, seed=1)
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("low", cpu="800m", node_name="n0", priority=1))
    s.add_pod(pod("high", cpu="800m", priority=100))
    r = s.run()
    assert r[-1].nominated_node == "n0" or r[-1].node == "n0"
    f = s.fork()
    assert f.queue.nominator.nominated_pod_to_node == s.queue.nominator.nominated_pod_to_node
    assert f.clock.now() == 1000.0 and f.clock is not clock
    f.clock.advance(50)
    assert clock.now() == 1000.0


def test_a_fork_binds_with_its_own_binder() -> None:
    calls: list[tuple[str, str]] = []

    class Recorder:
        def bind(self, p: Any, node_name: str) -> None:
            calls.append((p.key, node_name))

    s = cluster(2, binder=Recorder())
    s.add_pod(pod("x"))
    f = s.fork()
    f.run()
    assert calls == []  # the host's binder never hears of the fork's bindings
    s.run()
    assert [c[0] for c in calls] == ["default/x"]


class _Counter:
    """A custom plugin with state: counts the pods it reserved."""

    name = "Counter"

    def __init__(self, handle: Any, count: int = 0) -> None:
        self.handle = handle
        self.count = count

    def reserve(self, state: Any, p: Any, node_name: str) -> None:
        self.count += 1

    def unreserve(self, state: Any, p: Any, node_name: str) -> None:
        self.count -= 1

    def clone(self, handle: Any) -> _Counter:
        return _Counter(handle, self.count)


_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"reserve": {"enabled": [{"name": "Counter"}]}}}],
}


def test_custom_plugins_take_part_through_clone() -> None:
    s = Scheduler(_CONFIG, clock=FakeClock(), plugins={"Counter": lambda args, h: _Counter(h)})
    s.add_node(node("n0"))
    s.add_pod(pod("a"))
    s.run()
    plugin = s.frameworks["default-scheduler"].plugins["Counter"]
    assert plugin.count == 1
    f = s.fork()
    fp = f.frameworks["default-scheduler"].plugins["Counter"]
    assert fp is not plugin and fp.count == 1 and fp.handle is f.frameworks["default-scheduler"]
    f.add_pod(pod("b"))
    f.run()
    assert fp.count == 2 and plugin.count == 1


def test_fork_copy_lists_every_queued_pod_info_field() -> None:
    import attrs

    assert {f.name for f in attrs.fields(QueuedPodInfo)} == FORK_COPIED_FIELDS
    q = QueuedPodInfo.of(pod("q"), 5.0, "NodeResourcesFit")
    q.attempts = 3
    c = q.fork_copy()
    assert attrs.asdict(c, recurse=False) | {"pod_info": None} == attrs.asdict(q, recurse=False) | {"pod_info": None}
    c.unschedulable_plugins.add("X")
    assert "X" not in q.unschedulable_plugins
    assert c.pod_info is not q.pod_info and c.pod is q.pod


def test_cow_shares_node_infos_until_written() -> None:
    s = _loaded()
    s.cache.update_snapshot(s.snapshot)
    f = s.fork()
    shared = [n for n in s.snapshot.node_info_map if s.snapshot.node_info_map[n] is f.snapshot.node_info_map[n]]
    assert len(shared) == len(s.snapshot.node_info_map)
    f.add_pod(pod("new", node_name="n2"))
    f.cache.update_snapshot(f.snapshot)
    assert f.snapshot.node_info_map["n2"] is not s.snapshot.node_info_map["n2"]
    assert f.snapshot.node_info_map["n3"] is s.snapshot.node_info_map["n3"]
    assert "default/new" not in [p.pod.key for p in s.snapshot.node_info_map["n2"].pods]


def test_queued_pods_are_copied_on_write() -> None:
    def world() -> tuple[Scheduler, FakeClock]:
        clock = FakeClock()
        s = Scheduler(clock=clock, seed=4)
        for i in range(3):
            s.add_node(node(f"n{i}", cpu="1"))
        for i in range(8):
            s.add_pod(pod(f"p{i}", cpu="600m", priority=i % 3))
        s.run()  # 3 scheduled, 5 unschedulable
        clock.advance(2)
        s.add_pod(pod("late", cpu="100m"))
        return s, clock

    parent, clock = world()
    twin, twin_clock = world()
    fork = parent.fork()
    assert fork.queue.get_pod("p5", "default") is parent.queue.get_pod("p5", "default")  # shared
    # the fork changes every queued pod: attempts, backoff, updates, moves
    fork.add_node(node("big", cpu="8"))
    fork.update_pod(pod("p6", cpu="500m", priority=2))
    fork.clock.advance(30)
    decisions(fork)
    assert fork.queue.get_pod("p5", "default") is None
    # the parent (and a twin that was never forked) go on the same way
    for s, c in ((parent, clock), (twin, twin_clock)):
        s.delete_pod("default/p0")
        c.advance(20)
        s.tick()
    assert decisions(parent) == decisions(twin)
    assert cache_view(parent) == cache_view(twin)
    assert [(p.key, p.attempts) for p in parent.queue.unschedulable_pod_infos()] == [
        (p.key, p.attempts) for p in twin.queue.unschedulable_pod_infos()
    ]


class _Gate:
    """A Permit plugin that makes every pod wait 10 s."""

    name = "Gate"

    def permit(self, state: Any, p: Any, node_name: str) -> tuple[Any, float]:
        from kschedlib.framework.status import Code, Status

        return Status(Code.Wait, ("wait",)), 10.0


def test_pods_waiting_at_permit_are_forked() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"permit": {"enabled": [{"name": "Gate"}]}}}],
    }
    clock = FakeClock()
    s = Scheduler(config, clock=clock, plugins={"Gate": lambda args, h: _Gate()})
    s.add_node(node("n0"))
    s.add_pod(pod("w"))
    assert s.run()[0].outcome.value == "Waiting"
    f = s.fork()
    assert [p.key for p in f.waiting_pods()] == ["default/w"]
    fwk = f.frameworks["default-scheduler"]
    wp = fwk.get_waiting_pod("default-w")
    assert wp is not None
    wp.allow("Gate")
    assert [r.outcome.value for r in f.run()] == ["Scheduled"]
    assert [p.key for p in s.waiting_pods()] == ["default/w"]  # still waiting in the parent
    clock.advance(11)
    assert [r.outcome.value for r in s.run()] == ["Unschedulable"]


def test_in_tree_stateful_plugins_are_cloned() -> None:
    s = cluster(2)
    fwk = s.frameworks["default-scheduler"]
    dra = fwk.plugins["DynamicResources"]
    dra._in_flight["uid-1"] = "claim"
    vb = fwk.plugins["VolumeBinding"]
    f = s.fork()
    ffwk = f.frameworks["default-scheduler"]
    fdra = ffwk.plugins["DynamicResources"]
    assert fdra is not dra and fdra._in_flight == {"uid-1": "claim"}
    fdra._in_flight.clear()
    assert dra._in_flight == {"uid-1": "claim"}
    fvb = ffwk.plugins["VolumeBinding"]
    assert fvb is not vb and fvb.binder.pv_cache is not vb.binder.pv_cache
    assert ffwk.plugins["DefaultPreemption"].handle is ffwk


def test_workloads_and_eviction_state_are_forked() -> None:
    s = cluster(2)
    ev = s.eviction
    f = s.fork()
    assert f.workload_manager is not s.workload_manager
    assert f._eviction is not None and f._eviction is not ev
    assert f._eviction.scheduler is f and ev.scheduler is s
    with s.transaction():
        s.add_pod(pod("x"))
    assert s._eviction is not None and s._eviction.scheduler is s
