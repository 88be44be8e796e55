"""The totals the scheduling cycle ranks nodes by (``relative=True``: a score equal on every
node left out) differ from the full totals by one amount common to all nodes, so they rank
the nodes identically: random workloads, every cycle checked against the full totals."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.framework.cycle_state import CycleState
from tests.framework.test_node_local_cache import make_node, workloads


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_relative_totals_rank_as_the_totals(w: dict[str, Any]) -> None:
    sched = Scheduler(clock=FakeClock(), seed=7, explain=False)
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    fwk = sched.frameworks["default-scheduler"]
    for i, (t, _) in enumerate(w["pods"]):
        pod = Pod.from_dict({"metadata": {"name": f"p{i}", "namespace": "default",
                                          "labels": {"app": "web"}}, "spec": w["templates"][t]})
        sched.cache.update_snapshot(sched.snapshot)
        nodes = sched.snapshot.node_infos().list()
        state = CycleState()
        _, st, _ = fwk.run_pre_filter_plugins(state, pod)
        if st is None:
            feasible = [ni for ni in nodes if fwk.run_filter_plugins(state, pod, ni) is None]
            if len(feasible) > 1 and fwk.run_pre_score_plugins(state, pod, feasible) is None:
                full, st1 = fwk.run_score_plugins_totals(state.clone(), pod, feasible)
                rel, st2 = fwk.run_score_plugins_totals(state.clone(), pod, feasible,
                                                        relative=True)
                assert st1 == st2
                if st1 is None:
                    assert len({a - b for a, b in zip(full, rel, strict=True)}) == 1
        sched.add_pod(pod)
        sched.schedule_pod(pod)


def test_relative_totals_leave_out_the_common_amount() -> None:
    """On untainted nodes TaintToleration gives every node 100 (weight 3): left out."""
    sched = Scheduler(clock=FakeClock(), explain=False)
    for i in range(4):
        sched.add_node(make_node(i, 4, "z1", None, False))
    fwk = sched.frameworks["default-scheduler"]
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "img:1"}]}})
    sched.cache.update_snapshot(sched.snapshot)
    nodes = sched.snapshot.node_infos().list()
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod)
    assert fwk.run_pre_score_plugins(state, pod, nodes) is None
    full, _ = fwk.run_score_plugins_totals(state.clone(), pod, nodes)
    rel, _ = fwk.run_score_plugins_totals(state.clone(), pod, nodes, relative=True)
    assert {a - b for a, b in zip(full, rel, strict=True)} == {300}
