"""The preemption fast paths decide as the plain algorithms do: the chunked Filter pass over
nodes with nominated pods against the node-by-node loop, the default candidate pick with
victims summaries against the criteria run one by one, and the candidate nodes taken in
snapshot order against the status map sorted by it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import Node, Pod, schedule_one
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.diagnosis import NodeToStatus
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.defaultpreemption.evaluator import Evaluator, Victims, victims_summary
from kschedlib.schedule_one import (
    Rejections,
    SchedulingError,
    _filter_node_local_nominated,
    _filter_nominated_each,
)

# --- the chunked Filter pass -------------------------------------------------------------

_REJECT = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
_UNRESOLVABLE = Status(Code.UnschedulableAndUnresolvable, ("taint",), "TaintToleration")
_VERDICTS = {
    "fits": None,
    "reject": _REJECT,
    "unresolvable": _UNRESOLVABLE,
    "error": Status(Code.Error, ("boom",), "X"),
    "skip": Status(Code.Skip, (), "X"),
}


class _Fwk:
    """Filter runs answered from a script, every call logged."""

    def __init__(self, plain: dict[str, str], nominated: dict[str, str]) -> None:
        self.plain, self.nominated, self.calls = plain, nominated, []  # type: list[Any]

    def run_filter_plugins(self, state: Any, pod: Any, ni: NodeInfo, filters: Any) -> Any:
        self.calls.append(("plain", ni.name))
        return _VERDICTS[self.plain[ni.name]]

    def run_filter_plugins_with_nominated_pods(
        self, state: Any, pod: Any, ni: NodeInfo, filters: Any
    ) -> Any:
        self.calls.append(("nominated", ni.name))
        return _VERDICTS[self.nominated[ni.name]]


def _node(i: int) -> NodeInfo:
    ni = NodeInfo()
    ni.set_node(Node.from_dict({"metadata": {"name": f"n{i:02d}"}}))
    return ni


@st.composite
def filter_cases(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 14))
    verdict = st.sampled_from(sorted(_VERDICTS))
    weights = st.sampled_from(["reject"] * 6 + ["unresolvable", "fits", "error", "skip"])
    return {
        "n": n,
        "nominated": draw(st.sets(st.integers(0, n - 1))),
        "plain": [draw(weights) for _ in range(n)],
        "with_nominated": [draw(weights) for _ in range(n)],
        # what is stored: nothing, the current verdict, or a verdict under another key
        "stored": [draw(st.sampled_from(["none", "current", "stale"])) for _ in range(n)],
        "stale": [draw(verdict) for _ in range(n)],
        "to_find": draw(st.integers(0, 4)),
        "chunk": draw(st.integers(1, 5)),
    }


def _run_filter(case: dict[str, Any], chunked: bool) -> Any:
    nodes = [_node(i) for i in range(case["n"])]
    names = {nodes[i].name for i in case["nominated"]}
    fwk = _Fwk(
        {ni.name: v for ni, v in zip(nodes, case["plain"], strict=True)},
        {ni.name: v for ni, v in zip(nodes, case["with_nominated"], strict=True)},
    )
    table: dict[int, Any] = {}
    nominated_table: dict[int, Any] = {}
    for i, ni in enumerate(nodes):
        how = case["stored"][i]
        nominated = ni.name in names
        current = case["with_nominated" if nominated else "plain"][i]
        if how == "none" or _VERDICTS[current] is not None and not _VERDICTS[current].is_rejected():
            continue  # errors and other codes are never stored
        st_ = _VERDICTS[current] if how == "current" else _VERDICTS[case["stale"][i]]
        if nominated:
            nominated_table[ni.generation] = (("key", ni.name) if how == "current" else "old", st_)
        elif how == "current":
            table[ni.generation] = st_

    def key(name: str) -> tuple[str, str]:
        return ("key", name)

    args = (fwk, None, None, list(nodes), case["to_find"], [], table, names, nominated_table, key)
    try:
        if chunked:
            got: Any = _filter_node_local_nominated(*args)  # type: ignore[arg-type]
        else:
            got = _filter_nominated_each(*args, [])  # type: ignore[arg-type]
        failed = got[1]
        if isinstance(failed, Rejections):  # every node rejected, as two lists
            failed = [(ni.name, st_) for ni, st_ in zip(failed.nodes, failed.statuses, strict=True)]
        out: Any = ([ni.name for ni in got[0]], failed)
    except SchedulingError as exc:
        out = ("error", str(exc))
    name_of = {ni.generation: ni.name for ni in nodes}  # generations differ from run to run
    return (
        out,
        fwk.calls,
        {name_of[g]: v for g, v in table.items()},
        {name_of[g]: v for g, v in nominated_table.items()},
    )


@settings(max_examples=150, deadline=None)
@given(filter_cases())
def test_chunked_filter_pass_equals_the_node_by_node_loop(case: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(schedule_one, "_CHUNK", case["chunk"])
        chunked = _run_filter(case, True)
    assert chunked == _run_filter(case, False)


# --- the default pick ----------------------------------------------------------------------

def _victim(i: int, priority: int, started: int | None) -> Pod:
    status: dict[str, Any] = {}
    if started is not None:
        status["startTime"] = f"2025-09-08T12:{started:02d}:00Z"
    return Pod.from_dict({
        "metadata": {"name": f"v{i}", "namespace": "default", "uid": f"u{i}"},
        "spec": {"containers": [{"name": "c"}], "priority": priority},
        "status": status,
    })


@st.composite
def candidate_maps(draw: st.DrawFn) -> list[tuple[int, list[tuple[int, int | None]]]]:
    victim = st.tuples(st.integers(-2, 2), st.one_of(st.none(), st.integers(0, 5)))
    return draw(st.lists(
        st.tuples(st.integers(0, 2), st.lists(victim, min_size=1, max_size=4)),
        min_size=1, max_size=8,
    ))


class _Interface:
    from kschedlib.plugins.defaultpreemption.evaluator import pod_start_time

    pod_start_time = staticmethod(pod_start_time)
    pod_start_time_is_default = True


@settings(max_examples=150, deadline=None)
@given(candidate_maps(), st.booleans())
def test_default_pick_with_summaries_equals_criteria_one_by_one(
    spec: list[tuple[int, list[tuple[int, int | None]]]], summarized: bool
) -> None:
    ev = Evaluator("DefaultPreemption", None, _Interface())  # type: ignore[arg-type]
    serial = iter(range(1000))
    plain: dict[str, Victims] = {}
    fast: dict[str, Victims] = {}
    for n, (violations, victims) in enumerate(spec):
        pods = [_victim(next(serial), p, s) for p, s in victims]
        # victims come most important first, as select_victims_on_node orders them
        pods.sort(key=lambda p: -(p.spec.priority or 0))
        plain[f"n{n}"] = Victims(list(pods), violations)
        summary = victims_summary(pods, violations) if summarized else None
        fast[f"n{n}"] = Victims(list(pods), violations, summary)
    one_by_one = ev.pick_one_node_for_preemption(plain, ev.default_score_funcs(plain))
    assert ev.pick_one_node_for_preemption(fast) == one_by_one


# --- candidate nodes in snapshot order ------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["none", "unsched", "unresolvable"]), min_size=1, max_size=12),
       st.randoms(use_true_random=False))
def test_candidate_nodes_in_snapshot_order(codes: list[str], rnd: Any) -> None:
    nodes = [_node(i) for i in range(len(codes))]
    snap = Snapshot()
    snap.node_info_map = {ni.name: ni for ni in nodes}
    snap.node_info_list = nodes
    m = NodeToStatus()
    order = list(range(len(nodes)))
    rnd.shuffle(order)  # statuses arrive in any order
    for i in order:
        if codes[i] == "unsched":
            m.set(nodes[i].name, _REJECT)
        elif codes[i] == "unresolvable":
            m.set(nodes[i].name, _UNRESOLVABLE)
    position = {ni.name: i for i, ni in enumerate(nodes)}
    sorted_ = sorted(m.nodes_for_status_code(snap, Code.Unschedulable),
                     key=lambda ni: position[ni.name])
    assert m.listed_with_code(nodes, Code.Unschedulable) == sorted_


# --- the FailedScheduling message ----------------------------------------------------------

def _reference_message(num_nodes: int, m: NodeToStatus) -> str:
    """The histogram of reasons counted node by node."""
    histogram: dict[str, int] = {}
    for _, st_ in m.items():
        for r in st_.reasons:
            histogram[r] = histogram.get(r, 0) + 1
    absent = num_nodes - len(m)
    if absent > 0:
        for r in m.absent_nodes_status.reasons:
            histogram[r] = histogram.get(r, 0) + absent
    parts = sorted(f"{n} {r}" for r, n in histogram.items())
    return f"0/{num_nodes} nodes are available:" + (" " + ", ".join(parts) + "." if parts else "")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "Insufficient cpu"]), max_size=3),
                max_size=10),
       st.integers(0, 3), st.booleans())
def test_fit_error_message_counts_every_node(
    reasons: list[list[str]], absent: int, as_list: bool
) -> None:
    from kschedlib.framework.diagnosis import Diagnosis, FitError

    m = NodeToStatus()
    for i, rs in enumerate(reasons):
        m.set(f"n{i}", Status(Code.Unschedulable, rs if as_list else tuple(rs)))  # type: ignore[arg-type]
    d = Diagnosis(node_to_status=m)
    got = FitError(_victim(0, 0, None), len(reasons) + absent, d).message()
    assert got == _reference_message(len(reasons) + absent, m)
