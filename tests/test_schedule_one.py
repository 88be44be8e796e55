"""The scheduling algorithm: node counting, round-robin, host selection, FitError text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.runtime import NodePluginScores
from kschedlib.framework.status import Code, Status, unresolvable, unschedulable
from kschedlib.schedule_one import SchedulingAlgorithm, num_feasible_nodes_to_find
from tests.framework.fakes import Fake, make_framework, node, pod


@pytest.mark.parametrize(
    ("pct", "nodes", "expected"),
    [
        (None, 50, 50),
        (None, 99, 99),
        (None, 100, 100),
        (None, 1000, 420),  # 50 - 1000/125 = 42%
        (None, 5000, 500),  # 10%
        (None, 6000, 500),  # 50 - 48 = 2% -> floor 5% = 300 ... but min 100
        (0, 20000, 1000),  # 5% floor
        (100, 5000, 5000),
        (1, 5000, 100),  # never under 100
        (30, 1000, 300),
    ],
)
def test_num_feasible_nodes_to_find(pct: int | None, nodes: int, expected: int) -> None:
    if nodes == 6000:
        expected = 6000 * 5 // 100
    assert num_feasible_nodes_to_find(pct, nodes) == expected


def _scored(name: str, filter_fn: object) -> Fake:
    return Fake(name, [], filter=filter_fn, pre_score=lambda *a: None,  # type: ignore[arg-type]
                score=lambda *a: (0, None))


def test_round_robin_start_index_carries_over() -> None:
    seen: list[str] = []

    def f(state: CycleState, p: object, ni: object) -> Status | None:
        seen.append(ni.name)  # type: ignore[attr-defined]
        return None

    nodes = [node(f"n{i:03d}") for i in range(200)]
    fwk, snap = make_framework([_scored("F", f)], nodes=nodes)
    algo = SchedulingAlgorithm(percentage_of_nodes_to_score=10)  # 10% of 200 -> min 100
    feasible, _, _ = algo.find_nodes_that_fit_pod(fwk, CycleState(), pod(), snap)
    # The search stops at the first feasible node beyond the 100 needed (n100, dropped).
    assert len(feasible) == 100 and seen[0] == "n000" and seen[-1] == "n100"
    assert feasible[-1].name == "n099"
    assert algo.next_start_node_index == 100
    seen.clear()
    algo.find_nodes_that_fit_pod(fwk, CycleState(), pod(), snap)
    assert seen[0] == "n100" and seen[-1] == "n000"
    assert algo.next_start_node_index == 0


def test_rejected_nodes_after_enough_feasible_ones_count_into_the_start_index() -> None:
    """kube-scheduler (parallelism 1) keeps filtering after the last needed feasible node
    until one more feasible node turns up: the rejected nodes in between are in the
    diagnosis and advance nextStartNodeIndex."""
    rejected = {i for i in range(250) if i % 4 == 3} | set(range(200, 206))

    def f(state: CycleState, p: object, ni: object) -> Status | None:
        i = int(ni.name[1:])  # type: ignore[attr-defined]
        return unschedulable("no") if i in rejected else None

    nodes = [node(f"n{i:03d}") for i in range(250)]
    fwk, snap = make_framework([_scored("F", f)], nodes=nodes)
    algo = SchedulingAlgorithm(percentage_of_nodes_to_score=0)  # adaptive: 48% of 250 = 120
    expected = [  # (first feasible, last feasible, rejected recorded, last rejected, next index)
        ("n000", "n158", 40, "n159", 160),
        ("n160", "n074", 46, "n075", 76),
        ("n076", "n241", 46, "n239", 242),
        ("n242", "n150", 40, "n151", 152),
    ]
    for first, last, n_rejected, last_rejected, next_index in expected:
        feasible, diagnosis, _ = algo.find_nodes_that_fit_pod(fwk, CycleState(), pod(), snap)
        assert len(feasible) == 120
        assert (feasible[0].name, feasible[-1].name) == (first, last)
        statuses = diagnosis.node_to_status
        assert len(statuses) == n_rejected
        assert statuses.get(last_rejected).reasons == ("no",)
        assert statuses.get(feasible[-1].name).code == Code.UnschedulableAndUnresolvable
        assert algo.next_start_node_index == next_index


def test_without_score_plugins_the_first_feasible_node_is_enough() -> None:
    seen: list[str] = []

    def f(state: CycleState, p: object, ni: object) -> Status | None:
        seen.append(ni.name)  # type: ignore[attr-defined]
        return unschedulable("no") if ni.name == "n000" else None  # type: ignore[attr-defined]

    nodes = [node(f"n{i:03d}") for i in range(200)]
    fwk, snap = make_framework([Fake("F", [], filter=f)], nodes=nodes)
    algo = SchedulingAlgorithm(percentage_of_nodes_to_score=0)
    feasible, _, _ = algo.find_nodes_that_fit_pod(fwk, CycleState(), pod(), snap)
    assert [ni.name for ni in feasible] == ["n001"] and seen == ["n000", "n001", "n002"]
    assert algo.next_start_node_index == 2


def test_one_feasible_node_is_chosen_without_scoring() -> None:
    log: list[str] = []
    f = Fake("F", log, filter=lambda s, p, ni: None if ni.name == "b" else unschedulable("no"),
             pre_score=lambda *x: None, score=lambda *x: (0, None))
    fwk, snap = make_framework([f], nodes=[node("a"), node("b")])
    res = SchedulingAlgorithm().schedule_pod(fwk, CycleState(), pod(), snap)
    assert res.suggested_host == "b" and res.feasible_nodes == 1 and res.evaluated_nodes == 2
    assert "pre_score:F" not in log


def test_deterministic_tie_break_and_seeded_random() -> None:
    scores = [NodePluginScores(n, [], s) for n, s in [("c", 5), ("a", 5), ("b", 3)]]
    assert SchedulingAlgorithm(deterministic=True).select_host(scores) == "a"
    picks = {SchedulingAlgorithm(seed=s).select_host(scores) for s in range(40)}
    assert picks == {"a", "c"}
    assert SchedulingAlgorithm(seed=7).select_host(scores) == SchedulingAlgorithm(seed=7).select_host(scores)


def test_no_nodes_error() -> None:
    fwk, snap = make_framework([])
    with pytest.raises(NoNodesAvailableError, match="no nodes available to schedule pods"):
        SchedulingAlgorithm().schedule_pod(fwk, CycleState(), pod(), snap)


def test_fit_error_message_histogram_sorted_as_strings() -> None:
    reasons = {"n1": "Insufficient cpu", "n2": "node(s) had untolerated taint(s)"}
    f = Fake("F", [], filter=lambda s, p, ni: unschedulable(reasons.get(ni.name, "Insufficient cpu")))
    nodes = [node(f"n{i}") for i in range(1, 12)]
    fwk, snap = make_framework([f], nodes=nodes)
    with pytest.raises(FitError) as exc:
        SchedulingAlgorithm().schedule_pod(fwk, CycleState(), pod(), snap)
    assert str(exc.value) == (
        "0/11 nodes are available: 1 node(s) had untolerated taint(s), 10 Insufficient cpu."
    )
    assert exc.value.diagnosis.unschedulable_plugins == {"F"}


def test_pre_filter_result_nodes_left_out_get_the_plugin_message() -> None:
    pf = Fake("PF", [], pre_filter=lambda s, p, n: (PreFilterResult(frozenset({"a"})), None),
              filter=lambda s, p, ni: unschedulable("busy"))
    fwk, snap = make_framework([pf], nodes=[node("a"), node("b"), node("c")])
    with pytest.raises(FitError) as exc:
        SchedulingAlgorithm().schedule_pod(fwk, CycleState(), pod(), snap)
    d = exc.value.diagnosis
    assert d.node_to_status.get("b").reasons == ("node(s) didn't satisfy plugin(s) [PF]",)
    assert str(exc.value) == (
        "0/3 nodes are available: 1 busy, 2 node(s) didn't satisfy plugin(s) [PF]."
    )


def test_pre_filter_rejection_message_and_post_filter_message() -> None:
    d = Diagnosis()
    d.pre_filter_msg = 'persistentvolumeclaim "x" not found'
    d.post_filter_msg = "not found"
    d.node_to_status.absent_nodes_status = unresolvable(d.pre_filter_msg)
    assert FitError(pod(), 3, d).message() == (
        '0/3 nodes are available: persistentvolumeclaim "x" not found. not found'
    )


def test_nominated_node_fast_path_evaluates_only_that_node() -> None:
    seen: list[str] = []

    def f(state: CycleState, p: object, ni: object) -> Status | None:
        seen.append(ni.name)  # type: ignore[attr-defined]
        return None

    fwk, snap = make_framework([Fake("F", [], filter=f)], nodes=[node("a"), node("b")])
    p = pod().with_nominated_node_name("b")
    res = SchedulingAlgorithm().schedule_pod(fwk, CycleState(), p, snap)
    assert res.suggested_host == "b" and res.nominated_fast_path and seen == ["b"]


def test_filter_error_aborts_the_cycle() -> None:
    from kschedlib.schedule_one import SchedulingError

    f = Fake("F", [], filter=lambda *x: Status.error("boom"))
    fwk, snap = make_framework([f], nodes=[node("a")])
    with pytest.raises(SchedulingError, match="boom"):
        SchedulingAlgorithm().schedule_pod(fwk, CycleState(), pod(), snap)
    assert Code.Error.name == "Error"


class FakeExtender:
    name = "ext"

    def __init__(self, *, ignorable: bool = False, fail: bool = False) -> None:
        self.ignorable = ignorable
        self.fail = fail

    def filter(self, pod, nodes):  # type: ignore[no-untyped-def]
        if self.fail:
            raise RuntimeError("extender down")
        keep = [n for n in nodes if n.name != "b"]
        return keep, {"b": "ext says no", "c": "maybe"}, {"c": "never"}

    def prioritize(self, pod, nodes):  # type: ignore[no-untyped-def]
        return [(n.name, 10 if n.name == "c" else 1) for n in nodes], 2

    def is_interested(self, pod):  # type: ignore[no-untyped-def]
        return True

    def is_ignorable(self) -> bool:
        return self.ignorable


def test_extenders_filter_and_prioritize() -> None:
    from kschedlib.framework.diagnosis import Diagnosis

    fwk, snap = make_framework([], nodes=[node("a"), node("b"), node("c")])
    algo = SchedulingAlgorithm(extenders=[FakeExtender()])
    d = Diagnosis()
    kept = algo.find_nodes_that_pass_extenders(pod(), list(snap.list()), d)
    assert [n.name for n in kept] == ["a", "c"]
    assert d.node_to_status.get("b").code == Code.Unschedulable
    assert d.node_to_status.get("c").code == Code.UnschedulableAndUnresolvable  # takes precedence
    scores = algo.prioritize_nodes(fwk, CycleState(), pod(), list(snap.list()))
    totals = {s.name: s.total_score for s in scores}
    assert totals == {"a": 1 * 2 * 10, "b": 20, "c": 10 * 2 * 10}  # score x weight x 100/10


def test_ignorable_extender_errors_are_skipped() -> None:
    from kschedlib.framework.diagnosis import Diagnosis
    from kschedlib.schedule_one import SchedulingError

    _, snap = make_framework([], nodes=[node("a")])
    nodes = list(snap.list())
    ok = SchedulingAlgorithm(extenders=[FakeExtender(ignorable=True, fail=True)])
    assert ok.find_nodes_that_pass_extenders(pod(), nodes, Diagnosis()) == nodes
    bad = SchedulingAlgorithm(extenders=[FakeExtender(fail=True)])
    with pytest.raises(SchedulingError, match="extender down"):
        bad.find_nodes_that_pass_extenders(pod(), nodes, Diagnosis())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=90), st.integers(0, 50),
       st.booleans())
def test_select_host_from_totals_draws_as_select_host(
    totals: list[int], seed: int, deterministic: bool
) -> None:
    """The totals path (tie positions, all-tie shortcut) picks the node select_host picks,
    drawing the same numbers from the RNG."""
    from kschedlib.framework.types import NodeInfo

    nodes = []
    for i in range(len(totals)):
        ni = NodeInfo()
        ni.name = f"n{(i * 7) % 31:02d}-{i}"  # names not in list order
        nodes.append(ni)
    scores = [NodePluginScores(ni.name, [], t) for ni, t in zip(nodes, totals, strict=True)]
    a = SchedulingAlgorithm(seed=seed, deterministic=deterministic)
    b = SchedulingAlgorithm(seed=seed, deterministic=deterministic)
    assert a._select_host_from_totals(nodes, list(totals)) == b.select_host(scores)
    assert a.rng.random() == b.rng.random()


def test_select_host_from_totals_many_ties_draws_as_select_host() -> None:
    """Ties drawn on both sides of the index-walk limit pick and draw as select_host does."""
    from kschedlib.framework.types import NodeInfo

    for ties in (2, 31, 32, 33, 70, 200):
        totals = [5] * ties + [1] * 20 + [3] * 7
        totals = totals[1::2] + totals[::2]  # ties spread out
        nodes = []
        for i in range(len(totals)):
            ni = NodeInfo()
            ni.name = f"n{(i * 7) % 31:02d}-{i}"
            nodes.append(ni)
        scores = [NodePluginScores(ni.name, [], t) for ni, t in zip(nodes, totals, strict=True)]
        for seed in range(20):
            a = SchedulingAlgorithm(seed=seed)
            b = SchedulingAlgorithm(seed=seed)
            assert a._select_host_from_totals(nodes, list(totals)) == b.select_host(scores)
            assert a.rng.random() == b.rng.random()
