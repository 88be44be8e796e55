"""Pods that fit nowhere: the bulk read of stored verdicts (and its diagnosis, message,
preemption pre-check and requeueing) gives what recomputation gives, cycle by cycle."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kschedlib.framework.status import Code, Status, shared, shared_rejection


def make_node(i: int, cpu: int, taint: bool, unschedulable: bool) -> Node:
    spec: dict[str, Any] = {"unschedulable": unschedulable}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    name = f"n{i:03d}"
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "tier": "a" if i % 2 else "b"}},
        "spec": spec,
        "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "20"}},
    })


# (cpu, priority, tolerates the taint, node selector): the first ones fit almost anywhere,
# "3" fits only on an emptyish 4-cpu node, "5" and the unknown tier fit nowhere.
KINDS = (
    ("250m", 0, False, None),
    ("1", 0, True, None),
    ("3", 10, True, None),
    ("3", 0, False, "a"),
    ("5", 10, True, None),
    ("5", 0, False, None),
    ("100m", 10, True, "c"),
)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    n_nodes = draw(st.integers(101, 125))  # over 100: adaptive sampling and the start index
    nodes = [
        (i, draw(st.sampled_from([2, 4, 4])), draw(st.integers(0, 5)) == 0,
         draw(st.integers(0, 12)) == 0)
        for i in range(n_nodes)
    ]
    pods = draw(st.lists(st.integers(0, len(KINDS) - 1), min_size=10, max_size=60))
    events = draw(st.lists(
        st.tuples(st.integers(0, len(pods)), st.sampled_from(["taint", "delete", "tick"]),
                  st.integers(0, n_nodes - 1)), max_size=8))
    return {"nodes": nodes, "pods": pods, "events": events}


def run(w: dict[str, Any], cache: bool, explain: bool) -> list[Any]:
    clock = FakeClock()
    sched = Scheduler(clock=clock, seed=3, explain=explain, node_local_cache=cache)
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    out: list[Any] = []
    bound: list[str] = []
    for idx, kind in enumerate(w["pods"]):
        for after, what, target in w["events"]:
            if after != idx:
                continue
            if what == "taint":
                i, cpu, taint, unsched = w["nodes"][target]
                sched.update_node(make_node(i, cpu, not taint, unsched))
            elif what == "tick":
                clock.advance(301.0)  # unschedulable pods flushed back, retried
            elif bound:
                sched.delete_pod(bound.pop(0))
        cpu, prio, tolerates, tier = KINDS[kind]
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            "priority": prio,
        }
        if tolerates:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if tier:
            spec["nodeSelector"] = {"tier": tier}
        sched.add_pod(Pod.from_dict({
            "metadata": {"name": f"p{idx:03d}", "namespace": "default", "uid": f"u{idx}"},
            "spec": spec,
        }))
        for r in sched.run():
            if r.node and r.outcome.value == "Scheduled":
                bound.append(r.pod.key)
            out.append((r.pod.key, r.outcome.value, r.node, r.message, r.nominated_node,
                        tuple(v.key for v in r.victims),
                        # as JSON: the order of the rejected nodes is compared too
                        json.dumps(r.explanation.to_dict()) if r.explanation is not None
                        else None))
    out.append(sched.algorithm.next_start_node_index)
    out.append([(e.type, e.reason, e.pod, e.message, e.timestamp) for e in sched.events])
    out.append(sorted(p.key for p in sched.queue.unschedulable_pods()))
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_pods_that_fit_nowhere_decide_as_recomputation(w: dict[str, Any]) -> None:
    assert run(w, cache=True, explain=True) == run(w, cache=False, explain=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_without_explanations_too(w: dict[str, Any]) -> None:
    fast = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=True, explain=False)]
    slow = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=False, explain=True)]
    assert fast == slow


def _histogram_message(num_nodes: int, statuses: list[tuple[str, Status]]) -> str:
    """The FailedScheduling text counted node by node (what ``FitError.message`` must give)."""
    counts: dict[str, int] = {}
    for _, s in statuses:
        for r in s.reasons:
            counts[r] = counts.get(r, 0) + 1
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    return f"0/{num_nodes} nodes are available: " + ", ".join(parts) + "."


@given(st.lists(st.integers(0, 3), min_size=1, max_size=40))
def test_message_counts_runs_of_shared_statuses_as_every_node(picks: list[int]) -> None:
    pool = [
        shared_rejection(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit"),
        shared_rejection(Code.UnschedulableAndUnresolvable,
                         ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit"),
        Status(Code.Unschedulable, ("node(s) had untolerated taint {dedicated: x}",)),
        Status(Code.Unschedulable, ("Insufficient cpu",)),  # equal to pool[0], not shared
    ]
    pairs = [(f"n{i:03d}", pool[k]) for i, k in enumerate(picks)]
    d = Diagnosis()
    d.node_to_status.set_all([name for name, _ in pairs], [s for _, s in pairs])
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}, "spec": {}})
    assert FitError(pod, len(pairs), d).message() == _histogram_message(len(pairs), pairs)


def test_shared_statuses_are_one_object_per_code_reasons_and_plugin() -> None:
    a = shared(Status(Code.Unschedulable, ("x-shared-test",), "P"))
    assert shared(Status(Code.Unschedulable, ("x-shared-test",), "P")) is a
    assert shared_rejection(Code.Unschedulable, ("x-shared-test",), "P") is a
    other = shared(Status(Code.Unschedulable, ("x-shared-test",), "Q"))
    assert other is not a and other.plugin == "Q"  # equal (plugins are not compared), not one
    err = Status.error("boom", "P")
    assert shared(err) is err


def test_nodes_for_status_code_sees_codes_set_in_bulk_and_one_by_one() -> None:
    class Lister:
        def __init__(self, names: list[str]) -> None:
            self.names = names

        def list(self) -> list[str]:
            return self.names

        def get(self, name: str) -> str:
            return name

    m = NodeToStatus()
    unresolvable = Status(Code.UnschedulableAndUnresolvable, ("no",))
    m.set_all(["a", "b"], [unresolvable, unresolvable])
    lister = Lister(["a", "b", "c"])
    assert m.nodes_for_status_code(lister, Code.Unschedulable) == []  # type: ignore[arg-type]
    m.set("c", Status(Code.Unschedulable, ("maybe",)))
    assert m.nodes_for_status_code(lister, Code.Unschedulable) == ["c"]  # type: ignore[arg-type]
    m.set("c", unresolvable)  # overwritten: the kept codes are a superset, the scan decides
    assert m.nodes_for_status_code(lister, Code.Unschedulable) == []  # type: ignore[arg-type]


@st.composite
def fit_cases(draw: st.DrawFn) -> tuple[dict[str, str], list[tuple[dict[str, str], int]]]:
    qty = st.sampled_from(["0", "1", "2", "3", "5"])
    request = {"cpu": draw(qty), "memory": draw(st.sampled_from(["0", "1Gi", "3Gi", "9Gi"]))}
    if draw(st.booleans()):
        request["ephemeral-storage"] = draw(st.sampled_from(["1Gi", "20Gi"]))
    if draw(st.integers(0, 4)) == 0:
        request["example.com/gpu"] = "1"
    nodes = draw(st.lists(st.tuples(
        st.fixed_dictionaries({"cpu": qty, "memory": st.sampled_from(["2Gi", "8Gi"]),
                               "ephemeral-storage": st.sampled_from(["10Gi", "30Gi"]),
                               "example.com/gpu": st.sampled_from(["0", "1"])}),
        st.integers(0, 3)), min_size=1, max_size=12))
    return request, nodes


@settings(max_examples=60, deadline=None)
@given(fit_cases())
def test_fit_verdicts_kept_per_shortage_pattern_equal_fresh_ones(
    case: tuple[dict[str, str], list[tuple[dict[str, str], int]]],
) -> None:
    from kschedlib.backend.snapshot import Snapshot
    from kschedlib.framework.cycle_state import CycleState
    from kschedlib.framework.handle import BasicHandle
    from kschedlib.framework.types import NodeInfo
    from kschedlib.plugins.noderesources import new_fit
    from kschedlib.plugins.noderesources.fit import PRE_FILTER_STATE_KEY, _status_of, fits_request

    request, nodes = case
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}, "spec": {
        "containers": [{"name": "c", "resources": {"requests": request}}]}})
    plugin = new_fit(None, BasicHandle(Snapshot()))
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    s = state.read(PRE_FILTER_STATE_KEY)
    for i, (alloc, n_running) in enumerate(nodes):
        node = Node.from_dict({"metadata": {"name": f"n{i}"}, "status": {
            "allocatable": {**alloc, "pods": "2"}}})
        running = [Pod.from_dict({"metadata": {"name": f"r{i}-{j}", "namespace": "default"},
                                  "spec": {"nodeName": f"n{i}", "containers": [
                                      {"name": "c", "resources": {"requests": {
                                          "cpu": "1", "memory": "1Gi"}}}]}})
                   for j in range(n_running)]
        ni = NodeInfo(node, *running)
        got = plugin.filter(state, pod, ni)  # kept verdicts build up across the nodes
        short = fits_request(s.request, ni)
        want = _status_of(short) if short else None
        assert got == want
