"""Explanations recorded on the position-marks score path (node names and generations read
by snapshot position, no NodeInfo touched) equal those the per-node path records, read at
once or long after, across node updates (taints, capacity) and removals."""

from __future__ import annotations

import copy
import gc
import pickle
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import Scheduler
from kschedlib.framework import reuse
from kschedlib.results import FEASIBLE_SLOT, REJECTED_SLOT, SCORES_SLOT, Explanation
from tests.builders import new_scheduler, node_dict, pod

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("pod"), st.sampled_from([100, 300, 700, 1500])),
        st.tuples(st.just("del-pod"), st.integers(0, 30)),
        st.tuples(st.just("node"), st.integers(1, 4)),
        st.tuples(st.just("taint"), st.integers(0, 10)),
        st.tuples(st.just("grow"), st.integers(0, 10)),
        st.tuples(st.just("del-node"), st.integers(0, 10)),
        st.tuples(st.just("run"), st.just(0)),
    ),
    min_size=5,
    max_size=40,
)


def _node(name: str, cpu: int, tainted: bool = False) -> dict[str, Any]:
    d = node_dict(name, cpu=str(cpu))
    if tainted:  # a PreferNoSchedule taint: TaintToleration's scores differ between nodes
        d["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]}
    return d


def _drive(ops: list[tuple[str, int]], eager: bool, **kw: Any) -> tuple[list[Any], Scheduler]:
    s = new_scheduler(**kw)
    for fwk in s.frameworks.values():
        if fwk.node_local_cache is not None:
            fwk.node_local_cache.max_entries = 4  # pruned (replaced) often
    nodes: dict[str, tuple[int, bool]] = {}
    pods: list[str] = []
    seen: list[Any] = []
    for i in range(6):
        s.add_node(_node(f"n{i}", 2 + i % 3))
        nodes[f"n{i}"] = (2 + i % 3, False)
    seq = 0
    for op, arg in [*ops, ("run", 0)]:
        names = list(nodes)
        if op == "pod":
            s.add_pod(pod(f"p{seq}", cpu=f"{arg}m"))
            pods.append(f"default/p{seq}")
            seq += 1
        elif op == "del-pod" and pods:
            s.delete_pod(pods.pop(arg % len(pods)))
        elif op == "node":
            nodes[f"m{seq}"] = (arg, False)
            s.add_node(_node(f"m{seq}", arg))
            seq += 1
        elif op in ("taint", "grow"):
            name = names[arg % len(names)]
            cpu, tainted = nodes[name]
            nodes[name] = (cpu + 1, tainted) if op == "grow" else (cpu, not tainted)
            s.update_node(_node(name, *nodes[name]))
        elif op == "del-node" and len(nodes) > 1:
            name = names[arg % len(names)]
            del nodes[name]
            s.delete_node(name)
        elif op == "run":
            for r in s.run():
                exp = r.explanation
                seen.append(exp.to_dict() if eager and exp is not None else exp)
    return seen, s


def _as_dicts(seen: list[Any]) -> list[Any]:
    return [e.to_dict() if isinstance(e, Explanation) else e for e in seen]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_marks_path_explanations_equal_per_node_ones(ops: list[tuple[str, int]]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reuse, "_window_marks", lambda *a: (None, 0))  # the per-node path
        want, _ = _drive(ops, eager=True)
        want_top, _ = _drive(ops, eager=True, explain_top_nodes=2)
    lazy, _ = _drive(ops, eager=False)
    assert _as_dicts(lazy) == want
    eager, _ = _drive(ops, eager=True)
    assert eager == want
    top_lazy, _ = _drive(ops, eager=False, explain_top_nodes=2)
    assert _as_dicts(top_lazy) == want_top


def test_the_marks_path_records_explanations() -> None:
    calls: list[int] = []
    record = reuse._ScoreMarks.window_record

    def counted(self: Any) -> Any:
        calls.append(len(self.names))
        return record(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reuse._ScoreMarks, "window_record", counted)
        seen, _ = _drive([("pod", 300), ("run", 0), ("taint", 1), ("pod", 100)], eager=True)
    assert calls  # names and generations were read by position
    assert all(e is not None and len(e["scores"]) == len(e["feasible"]) for e in seen)


def _without_stored_results(s: Scheduler) -> None:
    for fwk in s.frameworks.values():
        fwk.node_local_cache = None  # the general score path: totals added up by the cycle


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_totals_added_up_when_read_equal_the_cycles(ops: list[tuple[str, int]]) -> None:
    # The folded path's explanations keep no totals: they are the weighted sums of the
    # normalized scores, added up when read. The general path keeps the cycle's own totals.
    with pytest.MonkeyPatch.context() as mp:
        real = new_scheduler

        def general(**kw: Any) -> Scheduler:
            s = real(**kw)
            _without_stored_results(s)
            return s

        mp.setattr(sys.modules[__name__], "new_scheduler", general)
        want, _ = _drive(ops, eager=True)
    lazy, _ = _drive(ops, eager=False)
    assert _as_dicts(lazy) == want


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_summaries_on_both_paths_keep_the_selected_node(ops: list[tuple[str, int]]) -> None:
    for per_node in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            if per_node:  # names read from the stored rows by generation
                mp.setattr(reuse, "_window_marks", lambda *a: (None, 0))
            _, full = _drive(ops, eager=False, explain_full_pods=None)
            _, bounded = _drive(ops, eager=False, explain_full_pods=1)
        want = {k: e.to_dict() for k, e in full.explanations.items()}
        got = {k: e.to_dict() for k, e in bounded.explanations.items()}
        assert got.keys() == want.keys()
        for key, g in got.items():
            w = want[key]
            if key in bounded._explain_order:
                assert g == w
                continue
            assert list(g["scores"]) == ([w["selected"]] if w["scores"] else [])
            assert g["scores"] == {n: w["scores"][n] for n in g["scores"]}
            assert {**g, "scores": None} == {**w, "scores": None}


def test_a_recorded_attempt_leaves_nothing_for_the_collector_to_follow() -> None:
    s = new_scheduler(explain_full_pods=1)
    for i in range(4):
        s.add_node(_node(f"n{i}", 2 + i))
    s.add_pod(pod("a", cpu="100m"))
    s.add_pod(pod("b", cpu="100m"))
    ra, rb = s.run()
    stored = dict.get(s.explanations, "default/a")  # (a summary: a flat tuple, no table)
    exps = (ra.explanation, rb.explanation, s.explain("default/a"))  # (built when read)
    for _ in range(4):  # (a tuple is left alone once its items are: a pass may see it first)
        gc.collect()
    assert type(stored) is tuple and not gc.is_tracked(stored)
    for exp in exps:
        assert exp is not None
        raw = SCORES_SLOT.raw(exp)
        # One record for the feasible names, the scores and the (no) rejected nodes.
        assert type(raw) is tuple and raw is FEASIBLE_SLOT.raw(exp) is REJECTED_SLOT.raw(exp)
        assert not gc.is_tracked(raw)
    a = s.explain("default/a")
    assert a is not None and list(a.scores) == [ra.node] and len(a.feasible) == 4
    assert a.rejected == {} and a.rejected is not rb.explanation.rejected  # (one each)
    full = ra.explanation
    assert full is not None and len(full.scores) == 4
    assert a.scores[ra.node] == full.scores[ra.node]
    assert pickle.loads(pickle.dumps(full)) == full and copy.deepcopy(full) == full
    assert copy.deepcopy(a) == a and not hasattr(copy.copy(a), "x")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_generations_read_through_a_short_change_log(ops: list[tuple[str, int]]) -> None:
    # An explanation keeps the marks' base copy of the generations and a prefix of their
    # change log; a new base is taken when the log is long (here after two changes).
    want, _ = _drive(ops, eager=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reuse, "_LOG_LIMIT", 32)
        lazy, _ = _drive(ops, eager=False)
        _, bounded = _drive(ops, eager=False, explain_full_pods=1)
    assert _as_dicts(lazy) == want
    _, full = _drive(ops, eager=False, explain_full_pods=None)
    got = {k: e.to_dict() for k, e in bounded.explanations.items()}
    for key, w in ((k, e.to_dict()) for k, e in full.explanations.items()):
        assert got[key]["scores"] == {n: w["scores"][n] for n in got[key]["scores"]}
        assert got[key]["feasible"] == w["feasible"]
