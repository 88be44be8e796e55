"""Scheduler.transaction(): rollback, commit, exceptions, nesting, recorded side effects."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from kschedlib import FakeClock, Scheduler
from kschedlib.whatif import TransactionError
from tests.whatif.helpers import cache_view, cluster, decisions, node, pod, snapshot_view


class Recorder:
    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []
        self.deleted: list[str] = []

    def bind(self, p: Any, node_name: str) -> None:
        self.bound.append((p.key, node_name))

    def delete_pod(self, p: Any, reason: str) -> None:
        self.deleted.append(p.key)


def _base(rec: Recorder | None = None) -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=5, binder=rec, host_hooks=rec)
    for i in range(3):
        s.add_node(node(f"n{i}", cpu="2"))
    s.add_pod(pod("low", cpu="1500m", node_name="n0", priority=1))
    s.add_pod(pod("q1", cpu="300m"))
    return s


def test_rollback_by_default_and_on_rollback() -> None:
    s = _base()
    twin = _base()
    with s.transaction():
        s.add_node(node("big", cpu="32"))
        s.add_pod(pod("t", cpu="1"))
        assert any(r.node for r in s.run())
    assert snapshot_view(s) == snapshot_view(twin)
    assert decisions(s) == decisions(twin)
    with s.transaction() as txn:
        s.delete_node("n1")
        txn.rollback()
        with pytest.raises(TransactionError):
            txn.commit()
    assert snapshot_view(s) == snapshot_view(twin)


def test_commit_keeps_everything() -> None:
    s = _base()
    with s.transaction() as txn:
        s.add_node(node("big", cpu="32"))
        s.add_pod(pod("t", cpu="1"))
        s.run()
        txn.commit()
    assert "default/t" in [p.key for p in s.bound_pods()]
    assert "big" in s.cache.node_names()


def test_an_exception_rolls_back_and_propagates() -> None:
    s = _base()
    twin = _base()
    with pytest.raises(RuntimeError), s.transaction() as txn:
        s.add_pod(pod("t"))
        s.run()
        txn.commit()
        raise RuntimeError("boom")
    assert snapshot_view(s) == snapshot_view(twin)
    assert decisions(s) == decisions(twin)


def test_nested_transactions() -> None:
    s = _base()
    with s.transaction() as outer:
        s.add_node(node("a", cpu="8"))
        with s.transaction() as inner:
            s.add_node(node("b", cpu="8"))
            inner.commit()
        with s.transaction():
            s.add_node(node("c", cpu="8"))
        assert "b" in s.cache.node_names() and "c" not in s.cache.node_names()
        outer.commit()
    assert {"a", "b"} <= set(s.cache.node_names())
    with s.transaction(), s.transaction() as inner:
        s.add_node(node("d", cpu="8"))
        inner.commit()
    assert "d" not in s.cache.node_names()


def test_binder_calls_and_victims_are_recorded_and_delivered_on_commit_only() -> None:
    rec = Recorder()
    s = _base(rec)
    with s.transaction() as txn:
        s.add_pod(pod("high", cpu="1500m", priority=1000))
        s.add_node(node("tmp", cpu="1"))
        s.run()
        assert sorted(p.key for p, _ in txn.bindings) == ["default/high", "default/q1"]
    assert rec.bound == [] and rec.deleted == []
    with s.transaction() as txn:
        s.delete_node("n1")
        s.delete_node("n2")
        s.add_pod(pod("high", cpu="1500m", priority=1000))
        s.run()
        assert [p.key for p, _ in txn.evictions] == ["default/low"]
        txn.commit()
    assert rec.deleted == ["default/low"]
    assert [k for k, _ in rec.bound] == [p.key for p, _ in txn.bindings]
    assert "default/high" in [k for k, _ in rec.bound]


# --- exactness: random event sequences inside a transaction, rolled back ---------------

_EVENT = st.one_of(
    st.tuples(st.just("add_node"), st.integers(0, 5), st.sampled_from(["1", "2", "4"])),
    st.tuples(st.just("delete_node"), st.integers(0, 5), st.just("")),
    st.tuples(st.just("add_pod"), st.integers(0, 30), st.sampled_from(["200m", "700m", "1500m"])),
    st.tuples(st.just("add_high"), st.integers(0, 30), st.sampled_from(["900m", "1800m"])),
    st.tuples(st.just("delete_pod"), st.integers(0, 30), st.just("")),
    st.tuples(st.just("run"), st.integers(1, 4), st.just("")),
    st.tuples(st.just("tick"), st.integers(1, 20), st.just("")),
    st.tuples(st.just("probe"), st.integers(0, 30), st.sampled_from(["500m", "1900m"])),
    st.tuples(st.just("drain"), st.integers(0, 5), st.just("")),
)


def _world(seed: int) -> tuple[Scheduler, FakeClock]:
    clock = FakeClock()
    s = Scheduler(clock=clock, seed=seed)
    for i in range(4):
        s.add_node(node(f"n{i}", zone=f"z{i % 2}", cpu="2"))
    for i in range(4):
        s.add_pod(pod(f"run{i}", cpu="700m", node_name=f"n{i}", priority=1))
    for i in range(5):
        s.add_pod(pod(f"w{i}", cpu="600m", priority=i % 2))
    s.run(max_cycles=2)
    return s, clock


def _apply(s: Scheduler, clock: FakeClock, ev: tuple[str, int, str]) -> None:
    kind, i, arg = ev
    if kind == "add_node":
        name = f"x{i}"
        if name not in s.cache.node_names():
            s.add_node(node(name, zone=f"z{i % 2}", cpu=arg))
    elif kind == "delete_node":
        names = s.cache.node_names()
        if names:
            s.delete_node(names[i % len(names)])
    elif kind in ("add_pod", "add_high"):
        p = pod(f"e{i}", cpu=arg, priority=500 if kind == "add_high" else 0)
        if p.uid not in s._pending and s._cached(p) is None:
            s.add_pod(p)
    elif kind == "delete_pod":
        pods = sorted(s.bound_pods() + s.pending_pods(), key=lambda p: p.key)
        if pods:
            s.delete_pod(pods[i % len(pods)])
    elif kind == "run":
        s.run(max_cycles=i)
    elif kind == "tick":
        s.tick()
    elif kind == "probe":  # questions are asked in forks: they must change nothing here
        s.can_schedule(pod(f"probe{i}", cpu=arg, priority=100))
    elif kind == "drain":
        names = s.cache.node_names()
        if names:
            s.simulate_drain([names[i % len(names)]])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 3),
    events=st.lists(_EVENT, max_size=12),
    after=st.lists(_EVENT.filter(lambda e: e[0] != "tick"), max_size=6),
)
def test_rollback_is_exact(seed: int, events: list[tuple[str, int, str]], after: list[tuple[str, int, str]]) -> None:
    s, clock = _world(seed)
    twin, twin_clock = _world(seed)
    with s.transaction():
        for ev in events:
            _apply(s, clock, ev)
    assert snapshot_view(s) == snapshot_view(twin)
    assert cache_view(s) == cache_view(twin)
    assert s.queue.nominator.nominated_pod_to_node == twin.queue.nominator.nominated_pod_to_node
    assert sorted(p.key for p in s.pending_pods()) == sorted(p.key for p in twin.pending_pods())
    assert [e.message for e in s.events] == [e.message for e in twin.events]
    for ev in after:
        _apply(s, clock, ev)
        _apply(twin, twin_clock, ev)
        assert snapshot_view(s) == snapshot_view(twin)
        assert cache_view(s) == cache_view(twin)
    clock.advance(400)
    twin_clock.advance(400)
    assert decisions(s) == decisions(twin)
    assert snapshot_view(s) == snapshot_view(twin)


def test_fork_inside_transaction_survives_rollback() -> None:
    s = cluster(3)
    with s.transaction():
        s.add_pod(pod("inside"))
        f = s.fork()
    assert "default/inside" in [p.key for p in f.pending_pods()]
    assert "default/inside" not in [p.key for p in s.pending_pods()]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 3),
    before=st.lists(_EVENT, max_size=6),
    in_fork=st.lists(_EVENT, max_size=8),
    in_parent=st.lists(_EVENT, max_size=8),
)
def test_fork_and_parent_each_decide_as_if_alone(
    seed: int,
    before: list[tuple[str, int, str]],
    in_fork: list[tuple[str, int, str]],
    in_parent: list[tuple[str, int, str]],
) -> None:
    parent, clock = _world(seed)
    twin_parent, twin_parent_clock = _world(seed)
    twin_fork, twin_fork_clock = _world(seed)
    for ev in before:
        for s, c in ((parent, clock), (twin_parent, twin_parent_clock), (twin_fork, twin_fork_clock)):
            _apply(s, c, ev)
    fork = parent.fork()
    fork_clock = fork.clock
    # interleave: the fork's events and the parent's, alternately
    for i in range(max(len(in_fork), len(in_parent))):
        if i < len(in_fork):
            _apply(fork, fork_clock, in_fork[i])
            _apply(twin_fork, twin_fork_clock, in_fork[i])
        if i < len(in_parent):
            _apply(parent, clock, in_parent[i])
            _apply(twin_parent, twin_parent_clock, in_parent[i])
    for c in (clock, twin_parent_clock, fork_clock, twin_fork_clock):
        c.advance(400)
    assert decisions(parent) == decisions(twin_parent)
    assert cache_view(parent) == cache_view(twin_parent)
    assert decisions(fork) == decisions(twin_fork)
    assert cache_view(fork) == cache_view(twin_fork)
    assert snapshot_view(fork) == snapshot_view(twin_fork)


def test_after_rollback_everything_points_at_the_scheduler() -> None:
    s = _base()
    with s.transaction():
        s.add_pod(pod("x"))
    assert s._hooks._sched is s
    assert all(f.nominator is s for f in s.frameworks.values())
    assert s.queue.nominator._pod_lister.__self__ is s  # type: ignore[union-attr]
    assert s.queue._namespace_labels.__self__ is s  # type: ignore[union-attr]
    assert all(f.host is s._hooks and f.binder is s._hooks for f in s.frameworks.values())


def test_rollback_restores_the_event_log_and_each_pods_last_failure() -> None:
    s = _base()
    s.add_pod(pod("huge", cpu="64"))
    s.run()
    before = (list(s.events), dict(s.events.last_failure))
    assert "default/huge" in before[1]
    with s.transaction():
        s.add_node(node("big", cpu="80"))
        s.run()  # huge lands: its last failure is dropped inside the transaction
        s.add_pod(pod("huger", cpu="640"))
        s.run()
        assert "default/huge" not in s.events.last_failure
        assert "default/huger" in s.events.last_failure
    assert (list(s.events), dict(s.events.last_failure)) == before
