"""The public surface: exports, Status equality, ConfigError data, object copies, the one
FakeClock, --version."""

from __future__ import annotations

import asyncio

import pytest

import kschedlib
from kschedlib import (
    BasicHandle,
    Code,
    ConfigError,
    FakeClock,
    FieldIssue,
    Node,
    Pod,
    Scheduler,
    Status,
    is_success,
    num_feasible_nodes_to_find,
    unresolvable,
    unschedulable,
)
from kschedlib.testing import make_node, make_pod


def test_every_public_name_resolves() -> None:
    for name in kschedlib.__all__:
        assert getattr(kschedlib, name) is not None, name


def test_plugin_packages_export_what_their_tests_need() -> None:
    from kschedlib.plugins import nodeports, noderesources, nodeunschedulable, schedulinggates
    from kschedlib.plugins import tainttoleration as tt

    for fn in (
        noderesources.is_fit,
        noderesources.is_schedulable_after_pod_scale_down,
        noderesources.least_requested_score,
        noderesources.most_requested_score,
        noderesources.balance_score,
        tt.is_schedulable_after_node_change,
        tt.is_schedulable_after_pod_toleration_change,
        nodeunschedulable.is_schedulable_after_node_change,
        nodeports.is_schedulable_after_pod_deleted,
        schedulinggates.is_schedulable_after_update_pod_scheduling_gates_eliminated,
    ):
        assert callable(fn)
    # percentageOfNodesToScore's adaptive rule: 5000 nodes, 0 (adaptive) -> 10% = 500.
    assert num_feasible_nodes_to_find(0, 5000) == 500
    assert num_feasible_nodes_to_find(None, 50) == 50


def test_basic_handle_runs_a_plugin_like_kube_scheduler_unit_tests() -> None:
    from kschedlib import CycleState, NodeInfo
    from kschedlib.backend.snapshot import Snapshot
    from kschedlib.plugins import tainttoleration

    node = make_node("n1").taint("k", "v").obj()
    snap = Snapshot.from_objects([], [node])
    pl = tainttoleration.new(None, BasicHandle(snap))
    st = pl.filter(CycleState(), make_pod("p").obj(), NodeInfo(node))
    # TaintToleration names itself; the equality rule ignores the plugin.
    assert st == unresolvable("node(s) had untolerated taint(s)")
    assert st is not None and st.plugin == "TaintToleration"


def test_status_equality_ignores_the_plugin_name() -> None:
    a = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
    b = unschedulable("Insufficient cpu")
    assert a == b and hash(a) == hash(b)
    assert a != unresolvable("Insufficient cpu")
    assert a != unschedulable("Insufficient memory")
    assert is_success(None) and not is_success(a)


def test_config_error_carries_field_issues() -> None:
    with pytest.raises(ConfigError) as info:
        Scheduler({"percentageOfNodesToScore": 300, "profiles": [
            {"schedulerName": "a"}, {"schedulerName": "a"}]})
    issues = info.value.errors
    assert FieldIssue(
        "percentageOfNodesToScore", "Invalid value: 300: not in valid range [0-100]"
    ) in issues
    assert any(i.path == "profiles[1].schedulerName" and i.message.startswith("Duplicate value")
               for i in issues)
    assert all(str(i) in str(info.value) for i in issues)
    with pytest.raises(ConfigError) as bad_yaml:
        Scheduler("profiles: [")
    assert len(bad_yaml.value.errors) == 1 and bad_yaml.value.errors[0].path == ""


def test_objects_copy_with_changes_and_round_trip() -> None:
    pod = make_pod("web").label("app", "web").req(cpu="1").obj()
    bound = pod.with_changes({"spec.node_name": "n1", "metadata.labels": {"app": "api"}})
    assert (bound.spec.node_name, bound.labels) == ("n1", {"app": "api"})
    assert (pod.spec.node_name, pod.labels) == ("", {"app": "web"})  # unchanged
    assert Pod.from_dict(bound.to_dict()) == bound
    assert bound.to_dict()["spec"]["nodeName"] == "n1"
    node = make_node("n1").capacity(cpu="4").obj()
    cordoned = node.with_changes({"spec.unschedulable": True})
    assert Node.from_dict(cordoned.to_dict()) == cordoned and cordoned.spec.unschedulable
    assert node.with_changes(kind="Node") == node
    with pytest.raises(AttributeError, match="no field 'node'"):
        pod.with_changes({"spec.node": "n1"})


def test_one_fake_clock_drives_the_scheduler_and_the_leader_elector() -> None:
    from kschedlib.leaderelection import (
        InMemoryLeaseStore,
        InMemoryLock,
        LeaderCallbacks,
        LeaderElectionConfig,
        LeaderElector,
    )

    clock = FakeClock()
    sched = Scheduler(clock=clock, deterministic=True)
    sched.add_node(make_node("n1").capacity(cpu="1").obj())
    led: list[float] = []

    def started() -> None:
        led.append(clock.now())
        sched.add_pod(make_pod("p").req(cpu="100m").obj())
        (result,) = sched.run()
        assert result.node == "n1"

    elector = LeaderElector(
        LeaderElectionConfig(
            lock=InMemoryLock(store=InMemoryLeaseStore(), identity="a"),
            callbacks=LeaderCallbacks(on_started_leading=started, on_stopped_leading=lambda: None),
        ),
        clock=clock, sleep=clock.sleep, async_sleep=clock.async_sleep,
    )

    async def main() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(elector.run_async(stop))
        await clock.async_sleep(5)
        stop.set()
        await task

    asyncio.run(main())
    assert led == [clock.start] and clock.now() >= clock.start + 5
    assert elector.get_leader() == "a"
    assert clock.wall_time().timestamp() == pytest.approx(clock.now())


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from kschedlib.__main__ import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"kschedlib {kschedlib.__version__} (kube-scheduler v1.35)\n"


def test_fake_clock_clone_is_independent() -> None:
    clock = FakeClock()
    clock.advance(5)
    fired: list[float] = []
    clock.call_later(1, lambda: fired.append(clock.now()))
    twin = clock.clone()
    assert twin.now() == clock.now() and twin.wall_time() == clock.wall_time()
    twin.advance(10)
    assert clock.now() == clock.start + 5 and fired == []  # timers stay with the original
    clock.advance(1)
    assert fired == [clock.start + 6]
