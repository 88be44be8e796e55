"""Explanations are built when read from what the cycle left (immutable references): read
long after, across later cycles that changed nodes, pods and the stored score tables, they
equal what reading them at once gives. Beyond ``explain_full_pods`` an explanation keeps the
selected node's scores (or the top nodes' with ``explain_top_nodes``), the rest unchanged."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import Scheduler
from kschedlib.explain import summarised
from kschedlib.results import Explanation
from tests.builders import new_scheduler, node, pod

# (op, argument): add a pod of that many millicores, delete the i-th alive pod, add a node of
# that many cores, delete the i-th node, schedule.
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("pod"), st.sampled_from([100, 300, 700, 1500, 2500])),
        st.tuples(st.just("del-pod"), st.integers(0, 30)),
        st.tuples(st.just("node"), st.integers(1, 4)),
        st.tuples(st.just("del-node"), st.integers(0, 10)),
        st.tuples(st.just("run"), st.just(0)),
    ),
    min_size=5,
    max_size=40,
)


def _drive(ops: list[tuple[str, int]], eager: bool, **kw: Any) -> tuple[list[Any], Scheduler]:
    """Apply ``ops``; each attempt's explanation read at once (``eager``) or kept unread."""
    s = new_scheduler(**kw)
    for fwk in s.frameworks.values():
        if fwk.node_local_cache is not None:
            fwk.node_local_cache.max_entries = 4  # pruned (replaced) often
    nodes, pods, seen = [], [], []
    for i in range(3):
        s.add_node(node(f"n{i}", cpu=str(2 + i)))
        nodes.append(f"n{i}")
    seq = 0
    for op, arg in [*ops, ("run", 0)]:
        if op == "pod":
            s.add_pod(pod(f"p{seq}", cpu=f"{arg}m"))
            pods.append(f"default/p{seq}")
            seq += 1
        elif op == "del-pod" and pods:
            s.delete_pod(pods.pop(arg % len(pods)))
        elif op == "node":
            s.add_node(node(f"n{seq}", cpu=str(arg)))
            nodes.append(f"n{seq}")
            seq += 1
        elif op == "del-node" and len(nodes) > 1:
            s.delete_node(nodes.pop(arg % len(nodes)))  # its pods stay: a ghost NodeInfo
        elif op == "run":
            for r in s.run():
                exp = r.explanation
                seen.append(exp.to_dict() if eager and exp is not None else exp)
    return seen, s


def _as_dicts(seen: list[Any]) -> list[Any]:
    return [e.to_dict() if isinstance(e, Explanation) else e for e in seen]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_lazy_explanations_equal_eager_ones_across_later_cycles(
    ops: list[tuple[str, int]],
) -> None:
    eager, _ = _drive(ops, eager=True)
    lazy, _ = _drive(ops, eager=False)
    assert _as_dicts(lazy) == eager
    top_eager, _ = _drive(ops, eager=True, explain_top_nodes=2)
    top_lazy, _ = _drive(ops, eager=False, explain_top_nodes=2)
    assert _as_dicts(top_lazy) == top_eager


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_beyond_the_bound_an_explanation_keeps_the_selected_node(
    ops: list[tuple[str, int]],
) -> None:
    _, full = _drive(ops, eager=False, explain_full_pods=None)
    _, bounded = _drive(ops, eager=False, explain_full_pods=2)
    want = {k: e.to_dict() for k, e in full.explanations.items()}
    got = {k: e.to_dict() for k, e in bounded.explanations.items()}
    assert got.keys() == want.keys()
    recent = set(bounded._explain_order)
    assert len(recent) <= 2
    for key, g in got.items():
        w = want[key]
        if key in recent or len(w["scores"]) <= 1:
            assert g == w
            continue
        assert list(g["scores"]) == ([w["selected"]] if w["selected"] else [])
        assert g["scores"] == {n: w["scores"][n] for n in g["scores"]}
        assert {**g, "scores": None} == {**w, "scores": None}


def test_summaries_and_the_bound_as_documented() -> None:
    s = new_scheduler(explain_full_pods=1)
    for i in range(4):
        s.add_node(node(f"n{i}", cpu=str(2 + i)))
    s.add_pod(pod("a", cpu="1"))
    (ra,) = s.run()
    s.add_pod(pod("b", cpu="1"))
    (rb,) = s.run()
    a, b = s.explain("default/a"), s.explain("default/b")
    assert a is not None and b is not None
    assert list(a.scores) == [ra.node] and len(b.scores) == 4  # a: summarised; b: in full
    assert a.feasible == ("n0", "n1", "n2", "n3")
    assert ra.explanation is not None and len(ra.explanation.scores) == 4  # as returned
    assert a.scores[ra.node] == ra.explanation.scores[ra.node]
    assert summarised(ra.explanation, 2).scores.keys() <= ra.explanation.scores.keys()
    s.delete_pod("default/b")
    assert not s._explain_order
    unbounded = new_scheduler(explain_full_pods=None)
    unbounded.add_node(node("n0"))
    for name in "xyz":
        unbounded.add_pod(pod(name))
    unbounded.run()
    assert not unbounded._explain_order


def test_summaries_name_their_one_node_scores_by_index_and_hold_nothing_tracked() -> None:
    """A summary on the folded path refers to its shared one-node scores by index: its record
    holds no tuple the garbage collector must follow, and it reads as the full one does."""
    import gc

    from kschedlib.results import SCORES_SLOT

    s = new_scheduler(explain_full_pods=1)
    for i in range(4):
        s.add_node(node(f"n{i}", cpu="8"))
    for i in range(6):
        s.add_pod(pod(f"p{i}", cpu="100m"))
    results = s.run()
    full = {r.key: r.explanation for r in results}
    records = [SCORES_SLOT.raw(e) for k, e in s.explanations.items() if k != results[-1].key]
    sel = [r for r in records if type(r) is tuple and len(r) > 8 and r[1] == "sel"]
    assert sel and all(type(r[8]) is int for r in sel[1:])
    # (flat: no tuple in a tuple, so a young collection untracks the record for good)
    assert all(type(y) is not tuple for r in sel[1:] for x in r if type(x) is tuple for y in x)
    assert not any(gc.is_tracked(x) for r in sel[1:] for x in r if type(x) is not tuple)
    for key, exp in s.explanations.items():
        f = full[key]
        assert f is not None
        w = f.to_dict()
        assert exp.to_dict()["scores"] == {n: w["scores"][n] for n in exp.to_dict()["scores"]}


def test_the_table_keeps_folded_explanations_as_plain_tuples_and_reads_explanations() -> None:
    import copy
    import pickle

    from kschedlib.results import ExplanationTable

    s = new_scheduler(explain_full_pods=2)
    for i in range(4):
        s.add_node(node(f"n{i}", cpu="8"))
    for i in range(6):
        s.add_pod(pod(f"p{i}", cpu="100m"))
    results = s.run()
    table = s.explanations
    assert isinstance(table, ExplanationTable)
    stored = {k: dict.__getitem__(table, k) for k in table}
    assert all(type(v) is tuple for v in stored.values())  # (nothing read yet)
    from kschedlib.explain import FIELDS, SUMMARY

    assert {v[0] for k, v in stored.items() if k in s._explain_order} == {FIELDS}
    old = [k for k, v in stored.items() if v[0] == SUMMARY]
    assert old and set(old) == set(stored) - set(s._explain_order)
    copied = table.copy()  # (what is stored: summaries still tuples)
    assert all(type(dict.__getitem__(copied, k)) is tuple for k in old)
    full = {r.key: r.explanation for r in results}  # (built from the fields when read)
    assert all(isinstance(e, Explanation) for e in full.values())
    for key in s._explain_order:
        assert s.explain(key) == full[key] and s.explain(key).to_dict() == full[key].to_dict()
    want = {k: summarised(e, None) for k, e in full.items() if e is not None}
    for key in old:
        exp = s.explain(key)
        assert isinstance(exp, Explanation) and exp is s.explain(key)
        assert exp == want[key] and exp.to_dict() == want[key].to_dict()
    assert pickle.loads(pickle.dumps(copied)) == copied
    assert copy.deepcopy(copied) == table
    assert all(isinstance(v, Explanation) for v in copied.values())
    assert copied.pop(old[0]) == want[old[0]]


def test_plain_dict_copies_of_the_table_hold_explanations_not_stored_tuples() -> None:
    s = new_scheduler(explain_full_pods=2)
    for i in range(3):
        s.add_node(node(f"n{i}", cpu="8"))
    for i in range(5):
        s.add_pod(pod(f"p{i}", cpu="100m"))
    s.run()
    table = s.explanations
    assert any(type(dict.__getitem__(table, k)) is tuple for k in table)
    for copied in (dict(table), {**table}):
        assert set(copied) == set(table)
        assert all(isinstance(v, Explanation) for v in copied.values())
    target: dict[str, object] = {}
    target.update(table)
    assert all(isinstance(v, Explanation) for v in target.values())
    assert table.copy() == table
