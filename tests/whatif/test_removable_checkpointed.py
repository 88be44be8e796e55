"""removable_nodes drains candidates in place on a checkpointed fork (a failed drain is undone
by replaying the accepted drains on the checkpoint): the same report, node by node, as
draining each candidate in a transaction, on random clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Scheduler
from kschedlib.api.workloads import PodDisruptionBudget, ReplicaSet
from kschedlib.errors import InvalidObjectError
from kschedlib.whatif import drain
from kschedlib.whatif.drain import removable_nodes
from tests.whatif.helpers import cache_view, pod

OWNERS = [("ReplicaSet", "rs"), ("ReplicaSet", "rs"), ("ReplicaSet", "rs"), None,
          ("DaemonSet", "ds")]


def _cluster(n: int, zones: int, seed: int, pods: list[tuple[int, int, int, int]],
             pdb: int | None) -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=seed)
    for i in range(n):
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": {
                "kubernetes.io/hostname": f"n{i:03d}", "topology.kubernetes.io/zone": f"z{i % zones}"}},
            "status": {"allocatable": {"cpu": str(1 + i % 3), "memory": "8Gi", "pods": "110"}},
        }))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "default"}}))
    if pdb is not None:
        s.add_object(PodDisruptionBudget.from_dict({
            "metadata": {"name": "budget", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "guarded"}}},
            "status": {"disruptionsAllowed": pdb},
        }))
    for k, (at, cpu, owner, app) in enumerate(pods):
        spec: dict[str, Any] = {}
        if app == 2:  # spread among its own kind, so moves depend on the other nodes
            spec = {"topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "spread"}}}]}
        s.add_pod(pod(f"p{k}", cpu=f"{cpu}m", node_name=f"n{at % n:03d}",
                      owner=OWNERS[owner], labels={"app": ["a", "guarded", "spread"][app]},
                      spec=spec))
    return s


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(3, 14),
    zones=st.integers(1, 3),
    seed=st.integers(0, 1000),
    pods=st.lists(
        st.tuples(st.integers(0, 40), st.sampled_from([100, 300, 700, 1200]),
                  st.integers(0, len(OWNERS) - 1), st.integers(0, 2)),
        max_size=30,
    ),
    pdb=st.sampled_from([None, 0, 1, 3]),
    shuffle=st.randoms(use_true_random=False),
    mode=st.sampled_from(["schedule", "fit"]),
)
def test_checkpointed_equals_transactions(
    n: int, zones: int, seed: int, pods: list[tuple[int, int, int, int]], pdb: int | None,
    shuffle: Any, mode: str,
) -> None:
    s = _cluster(n, zones, seed, pods, pdb)
    before = cache_view(s)
    names = [f"n{i:03d}" for i in range(n)] + ["ghost"]
    shuffle.shuffle(names)
    fast = removable_nodes(s, names, mode=mode)
    slow = removable_nodes(s, names, checkpoints=False, mode=mode)
    assert fast.removable == slow.removable
    assert fast.not_removable == slow.not_removable
    assert cache_view(s) == before  # asked in a fork


def test_a_failed_drain_after_accepted_ones_is_undone_by_replay(monkeypatch: Any) -> None:
    # Small nodes fill up: drains succeed, then fail, then the cluster must be the one the
    # earlier successes left (the next candidates see it).
    pods = [(i, 700, 0, 0) for i in range(12)] + [(i, 300, 0, 2) for i in range(0, 12, 2)]
    s = _cluster(12, 3, 5, pods, None)
    slow = removable_nodes(s, checkpoints=False)
    calls: list[str] = []
    real = drain._drain

    def counting(sched: Scheduler, nodes: Any, *args: Any, **kwargs: Any) -> Any:
        calls.extend(nodes)
        return real(sched, nodes, *args, **kwargs)

    monkeypatch.setattr(drain, "_drain", counting)
    fast = removable_nodes(s)
    assert fast == slow
    assert fast.removable and any("unschedulable" in why for why in fast.not_removable.values())
    tried = [n for n in calls if n not in fast.not_removable or "unschedulable" in fast.not_removable[n]]
    assert len(calls) > len(set(calls)) and len(tried) == len(calls)  # accepted drains replayed


def _identical(n: int, per_node: int, cpu: str = "4") -> Scheduler:
    """Nodes holding ``per_node`` identical pods each, that fill up as nodes go: the last
    candidates' pods need more than the others have left (their drains are doomed)."""
    s = Scheduler(clock=FakeClock(), seed=3)
    for i in range(n):
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": {
                "kubernetes.io/hostname": f"n{i:03d}", "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
        }))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "default"}}))
    for i in range(n):
        for k in range(per_node):
            s.add_pod(pod(f"p{i}-{k}", cpu="500m", node_name=f"n{i:03d}", owner=OWNERS[0],
                          labels={"app": "a"}))
    return s


def test_doomed_drains_roll_back_without_a_replay(monkeypatch: Any) -> None:
    # 12 nodes of 4 CPUs with 1 CPU used each: 9 can go, then every drain needs more CPU
    # than the other nodes have left. Those run in a transaction: no accepted drain is
    # replayed, the report is the one a transaction per candidate gives, and the spare
    # capacity kept along the way is what a recount of the working cluster gives.
    s = _identical(12, 2)
    slow = removable_nodes(s, checkpoints=False)
    calls: list[str] = []
    real = drain._drain
    spares: list[Any] = []
    real_init = drain._Spare.__init__

    def keep(self: Any, work: Scheduler) -> None:
        real_init(self, work)
        spares.append(self)

    def counting(sched: Scheduler, nodes: Any, *args: Any, **kwargs: Any) -> Any:
        calls.extend(nodes)
        if len(spares) == 1:  # the working cluster's spare capacity, kept vs recounted
            live, fresh = spares[0], drain._Spare.__new__(drain._Spare)
            real_init(fresh, sched)
            assert (live.cpu, live.memory, live.pods) == (fresh.cpu, fresh.memory, fresh.pods)
        return real(sched, nodes, *args, **kwargs)

    monkeypatch.setattr(drain._Spare, "__init__", keep)
    monkeypatch.setattr(drain, "_drain", counting)
    fast = removable_nodes(s)
    assert fast == slow
    assert len(fast.removable) == 9 and len(fast.not_removable) == 3
    assert all("Insufficient cpu" in why for why in fast.not_removable.values())
    assert len(calls) == len(set(calls)) == 12  # nothing replayed


def test_a_drain_stopped_at_its_first_failure_reports_the_same_first_blocker() -> None:
    s = _identical(4, 7)
    for names in (["n000"], ["n000", "n001"], ["n001", "n002", "n003"]):
        full = drain.simulate_drain(s, names)
        with s.transaction():
            short = drain.drain_in_place(s, names, stop_at_failure=True)
        assert not full.success and not short.success
        assert full.blockers[0] == short.blockers[0]
        assert len(short.blockers) == 1 < len(full.blockers)


def test_fit_mode_places_round_robin_on_the_first_node_that_passes_the_filters() -> None:
    # n000..n003 (one zone: node order is name order); n002 has no room left. Draining n000
    # in fit mode: the search starts at the first node and moves on after each placement,
    # skipping the drained node (tainted) and the full one.
    s = Scheduler(clock=FakeClock(), seed=3)
    for i in range(4):
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
            "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
        }))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "default"}}))
    for k in range(3):
        s.add_pod(pod(f"m{k}", cpu="500m", node_name="n000", owner=OWNERS[0]))
    s.add_pod(pod("full", cpu="2", node_name="n002", owner=OWNERS[0]))
    placer = drain.FitPlacer()
    with s.transaction():
        report = drain.drain_in_place(s, ["n000"], placer=placer)
    assert [(p.pod, p.destination) for p in report.pods] == [
        ("default/m0", "n001"), ("default/m1", "n003"), ("default/m2", "n001"),
    ]
    assert placer.last == 2  # after n001 (the drained node stays listed while its pods move)
    # The same cluster in schedule mode removes the same nodes here; a bad mode is refused.
    assert removable_nodes(s, mode="fit") == removable_nodes(s)
    with pytest.raises(InvalidObjectError):
        removable_nodes(s, mode="best")


def test_fit_mode_undoes_the_cursor_of_a_failed_drain() -> None:
    # Doomed and replayed failures both leave the cursor where the accepted drains put it:
    # the checkpointed report equals a transaction per candidate (checked above on random
    # clusters), here on a cluster that fills up.
    s = _identical(12, 2)
    assert removable_nodes(s, mode="fit") == removable_nodes(s, mode="fit", checkpoints=False)
