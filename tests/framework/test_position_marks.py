"""PositionMarks (node-local results read by snapshot position) against recomputation: the
marks a random run of cache changes leaves name exactly the positions whose NodeInfo may
differ from when it was marked, kept windows are the node list's runs, and scheduling with
the marks decides as recomputation does, also across savepoints, rollbacks and forks."""

from __future__ import annotations

from array import array
from operator import itemgetter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.api.node import Node
from kschedlib.backend.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.node_local_cache import GenerationTable, PositionMarks, pick_array
from tests.backend.test_cache import make_pod
from tests.framework.test_node_local_cache import make_node, run, workloads

N = 12
OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "node", "mark", "window", "sync", "rebuild"]),
        st.integers(0, N - 1),
        st.integers(1, N),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_marks_name_every_changed_position(ops: list[tuple[str, int, int]]) -> None:
    """A position left unmarked (not dirty) holds the very NodeInfo, at the generation, it
    had when it was marked; windows handed out are the node list's round-robin runs."""
    cache = Cache()
    nodes = {f"n{i:02d}": Node.from_dict({"metadata": {"name": f"n{i:02d}"}}) for i in range(N)}
    for node in nodes.values():
        cache.add_node(node)
    snap = Snapshot()
    cache.update_snapshot(snap)
    marks = PositionMarks()
    assert marks.sync(snap, snap.list())
    noted: dict[int, tuple[Any, int]] = {}  # position -> (NodeInfo, generation) when marked
    pods: list[Any] = []
    for k, (op, i, count) in enumerate(ops):
        name = f"n{i:02d}"
        if op == "add":
            pod = make_pod(f"p{k}", name, cpu="10m")
            cache.add_pod(pod)
            pods.append(pod)
        elif op == "remove" and pods:
            cache.remove_pod(pods.pop(i % len(pods)))
        elif op == "node":  # a label change: the node's NodeInfo changes
            old = nodes[name]
            new = Node.from_dict({"metadata": {"name": name, "labels": {"v": str(k)}}})
            cache.update_node(old, new)
            nodes[name] = new
        elif op == "rebuild":  # a node leaves and comes back: a new node list
            cache.remove_node(nodes[name])
            cache.add_node(nodes[name])
        cache.update_snapshot(snap)
        lst = snap.list()
        if not marks.sync(snap, lst):
            continue
        if marks.nodes is lst and op != "rebuild":
            for p in set(range(len(lst))) - marks.dirty:
                ni, gen = noted[p]  # every clean position was marked by the test
                assert lst[p] is ni and ni.generation == gen
        if op == "mark":
            for p in range(i, min(i + count, len(lst))):
                if p in marks.dirty:
                    marks.dirty.discard(p)
                    noted[p] = (lst[p], lst[p].generation)
        if op == "window":
            n = len(lst)
            want = [lst[(i + o) % n] for o in range(min(count, n))]
            got = marks.window(i % n, len(want))
            assert len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True))
            assert marks.is_window(i % n, got)
            if n > 1 and len(got) < n:
                assert not marks.is_window((i + 1) % n, got)
        if marks.dirty == set(range(len(lst))):  # reset (a new list): nothing marked
            noted = {}


def test_marks_need_the_snapshot_node_list() -> None:
    cache = Cache()
    cache.add_node(Node.from_dict({"metadata": {"name": "n0"}}))
    snap = Snapshot()
    cache.update_snapshot(snap)
    marks = PositionMarks()
    assert not marks.sync(snap, list(snap.list()))  # a copy: positions cannot be trusted
    assert not marks.sync(object(), [])  # no change log
    assert marks.sync(snap, snap.list()) and marks.dirty == {0}
    other = Snapshot()
    cache.update_snapshot(other)
    assert marks.sync(other, other.list()) and marks.dirty == {0}  # another snapshot: all dirty


def test_generation_tables_carry_their_marks() -> None:
    from kschedlib.framework.node_local_cache import NodeLocalCache

    c = NodeLocalCache()
    t = c.generation_table("k", set)
    assert isinstance(t, GenerationTable) and t.marks is None
    t[3] = None
    assert c.generation_table("k", set) is t and t == {3: None}


def _run_with_transactions(w: dict[str, Any], cache: bool) -> list[Any]:
    """The workload's pods, every third one tried in a transaction that is rolled back and
    every fifth scheduled on a fork first (whose snapshot shares the NodeInfos)."""
    sched = Scheduler(clock=FakeClock(), seed=3, explain=False, node_local_cache=cache)
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    out: list[Any] = []
    for idx, (t, web) in enumerate(w["pods"]):
        labels = {"app": "web"} if web else {"app": f"other-{idx}"}
        pod = Pod.from_dict({
            "metadata": {"name": f"p{idx:03d}", "namespace": "default", "uid": f"u{idx}",
                         "labels": labels},
            "spec": w["templates"][t],
        })
        if idx % 5 == 4:
            fork = sched.fork()
            fork.add_pod(pod)
            out.append([(r.pod.key, r.outcome.value, r.node) for r in fork.run()])
        if idx % 3 == 2:
            with sched.transaction() as txn:
                sched.add_pod(pod)
                out.append([(r.pod.key, r.outcome.value, r.node) for r in sched.run()])
                txn.rollback()
        sched.add_pod(pod)
        out.append([(r.pod.key, r.outcome.value, r.node, r.message) for r in sched.run()])
    out.append(sched.algorithm.next_start_node_index)
    return out


@st.composite
def plain_workloads(draw: st.DrawFn) -> dict[str, Any]:
    """Plain pods (every filter node-local) on nodes that fill up: most windows fit (the
    marks are read), some hold a full or tainted node (the general loop decides)."""
    n_nodes = draw(st.integers(101, 140))
    nodes = [
        (i, draw(st.sampled_from([1, 1, 2])), ("z1", "z2", "z3")[i % 3],
         draw(st.sampled_from([None] * 6 + ["PreferNoSchedule"])), False)
        for i in range(n_nodes)
    ]
    templates = [
        {"containers": [{"name": "c", "resources": {"requests": {
            "cpu": draw(st.sampled_from(["250m", "500m", "750m"])),
            "memory": draw(st.sampled_from(["128Mi", "1Gi"]))}}}],
         **({"tolerations": [{"key": "dedicated", "operator": "Exists"}]}
            if draw(st.booleans()) else {})}
        for _ in range(draw(st.integers(1, 3)))
    ]
    n_pods = draw(st.integers(40, 120))
    pods = [(draw(st.integers(0, len(templates) - 1)), False) for _ in range(n_pods)]
    events = draw(st.lists(
        st.tuples(st.integers(0, n_pods), st.sampled_from(["relabel", "taint", "delete"]),
                  st.integers(0, n_nodes - 1)), max_size=8))
    return {"nodes": nodes, "templates": templates, "pods": pods, "events": events}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(plain_workloads(), workloads()))
def test_marks_decide_as_recomputation(w: dict[str, Any]) -> None:
    """Totals-only cycles (where the marks are read) decide as recomputation without any
    stored result, with node events between cycles."""
    fast = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=True, explain=False)]
    slow = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=False, explain=False)]
    assert fast == slow


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_workloads())
def test_marks_across_transactions_and_forks(w: dict[str, Any]) -> None:
    assert _run_with_transactions(w, cache=True) == _run_with_transactions(w, cache=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(-5, 200), st.integers(1, 600))
def test_uniform_normalize_plugins_normalize_one_for_all(v: int, n: int) -> None:
    """A plugin declaring ``uniform_normalize`` gives for n equal raw scores n copies of
    what it gives for one."""
    from kschedlib.framework.cycle_state import CycleState
    from kschedlib.plugins.tainttoleration.taint_toleration import TaintToleration

    pl = TaintToleration.__new__(TaintToleration)
    assert pl.uniform_normalize
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c"}]}})
    many, one = [v] * n, [v]
    assert pl.normalize_score_values(CycleState(), pod, many) is None
    assert pl.normalize_score_values(CycleState(), pod, one) is None
    assert many == one * n


def test_with_node_name_is_what_evolve_gives() -> None:
    """Pod.with_node_name copies the fields as they are: equal to attrs.evolve's copy, the
    original untouched, on the pods of the conformance corpus."""
    import json

    import attrs

    from tests.corpus import CORPUS

    pods = [make_pod("a", "", cpu="1"), Pod.from_dict({
        "metadata": {"name": "b", "namespace": "x", "labels": {"k": "v"}},
        "spec": {"containers": [{"name": "c"}], "schedulerName": "",
                 "tolerations": [{"key": "k", "operator": "Exists"}]}})]
    for path in sorted(CORPUS.glob("*.json"))[:120]:
        if path.name.endswith(".expected.json"):
            continue
        data = json.loads(path.read_text())
        pods.extend(Pod.from_dict(d) for d in [*data.get("pods", []), *data.get("pending", [])])
    assert len(pods) > 100
    for pod in pods:
        before = attrs.evolve(pod)
        bound = pod.with_node_name("node-9")
        assert bound == attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name="node-9"))
        assert type(bound) is type(pod) and type(bound.spec) is type(pod.spec)
        assert pod == before and bound.spec is not pod.spec


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.data())
def test_dirty_offsets_match_a_scan_of_the_window(n: int, data: Any) -> None:
    """dirty_offsets (whichever way it walks) lists the window's dirty offsets in order."""
    marks = PositionMarks()
    marks.nodes = list(range(n))
    marks.dirty = set(data.draw(st.lists(st.integers(0, n - 1), max_size=n)))
    start = data.draw(st.integers(0, n - 1))
    count = data.draw(st.integers(0, n))
    expected = [o for o in range(count) if (start + o) % n in marks.dirty]
    assert marks.dirty_offsets(start, count) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 400), st.data())
def test_dirty_offsets_of_a_window_dirty_throughout(n: int, data: Any) -> None:
    """A window every position of which is dirty (as after a reset) lists all its offsets,
    whatever else is dirty."""
    marks = PositionMarks()
    marks.nodes = list(range(n))
    start = data.draw(st.integers(0, n - 1))
    count = data.draw(st.integers(0, n))
    window = {(start + o) % n for o in range(count)}
    others = data.draw(st.lists(st.integers(0, n - 1), max_size=n))
    marks.dirty = window | set(others)
    expected = [o for o in range(count) if (start + o) % n in marks.dirty]
    assert expected == list(range(count))
    assert marks.dirty_offsets(start, count) == expected
    marks.dirty.discard((start + count // 2) % n)  # one hole: the general walk
    expected = [o for o in range(count) if (start + o) % n in marks.dirty]
    assert marks.dirty_offsets(start, count) == expected


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([0, 0, 1, -1, 7, 2**40, -(2**63), 2**63 - 1]), min_size=N,
             max_size=N),
    st.lists(st.integers(0, N - 1), min_size=1, max_size=N - 2, unique=True),
)
def test_values_move_with_their_nodes_when_nodes_go(vals: list[int], gone: list[int]) -> None:
    """After nodes are removed, each surviving position's value is the one noted for its
    node (the zero column included, which is rebuilt rather than picked)."""
    cache = Cache()
    nodes = [Node.from_dict({"metadata": {"name": f"n{i:02d}", "labels": {
        "topology.kubernetes.io/zone": f"z{i % 3}"}}}) for i in range(N)]
    for node in nodes:
        cache.add_node(node)
    snap = Snapshot()
    cache.update_snapshot(snap)
    marks = PositionMarks()
    assert marks.sync(snap, snap.list())
    marks.dirty.clear()
    marks.values[:] = array("q", vals)
    by_name = {ni.name: v for ni, v in zip(snap.list(), vals, strict=True)}
    for i in gone:
        cache.remove_node(nodes[i])
        cache.update_snapshot(snap)
        assert marks.sync(snap, snap.list())
        assert marks.nodes is snap.list() and not marks.dirty  # followed, not reset
        assert marks.values.tolist() == [by_name[ni.name] for ni in snap.list()]


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40), st.randoms())
def test_pick_array_is_the_plain_pick(vals: list[int], rnd: Any) -> None:
    at = list(range(len(vals)))
    rnd.shuffle(at)
    for typecode in ("q", "b"):
        column = array(typecode, vals if typecode == "q" else [v % 100 for v in vals])
        for picked in (at[:2], at):
            if len(picked) < 2:
                continue
            pick = itemgetter(*picked)
            got = pick_array(column, pick)
            assert got.typecode == typecode
            assert got == array(typecode, pick(column))
