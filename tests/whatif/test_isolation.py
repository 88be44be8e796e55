"""What-if state that must not leak or go stale (issue 27): rolled-back and empty transactions
leave the host's objects valid and unchanged, commits deliver every binding, explanation
history and queue entries are never shared between a scheduler and its forks/savepoints, and
``copy.deepcopy(sched)`` works."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kschedlib import FakeClock, Scheduler
from kschedlib.results import Outcome
from tests.whatif.helpers import cache_view, cluster, decisions, node, pod, snapshot_view


class Counting:
    """A custom Score plugin without clone(): prefers the node named by ``favourite``."""

    name = "Counting"

    def __init__(self) -> None:
        self.favourite = "n0"
        self.calls = 0

    def score(self, state: Any, p: Any, node: Any) -> tuple[int, None]:
        self.calls += 1
        return (100 if node.name == self.favourite else 0), None

    def score_extensions(self) -> None:
        return None


CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"score": {"enabled": [{"name": "Counting", "weight": 50}]}}}],
}


def _custom() -> Scheduler:
    s = Scheduler(CONFIG, clock=FakeClock(), seed=1, plugins={"Counting": lambda a, h: Counting()})
    for i in range(3):
        s.add_node(node(f"n{i}"))
    return s


def _parts(s: Scheduler) -> dict[str, Any]:
    fwk = s.frameworks["default-scheduler"]
    return {"queue": s.queue, "cache": s.cache, "snapshot": s.snapshot, "objects": s.objects,
            "framework": fwk, "plugins": dict(fwk.plugins)}


@pytest.mark.parametrize("how", ["empty", "rollback", "exception"])
def test_a_rolled_back_transaction_keeps_the_hosts_objects(how: str) -> None:
    s = _custom()
    live = s.frameworks["default-scheduler"].plugins["Counting"]
    assert isinstance(live, Counting)
    live.favourite = "n2"
    s.add_pod(pod("before"))
    s.run()
    held = _parts(s)
    calls = live.calls
    view = snapshot_view(s)
    try:
        with s.transaction() as txn:
            if how != "empty":
                s.add_pod(pod("inside"))
                s.run()
                s.delete_node("n1")
            if how == "rollback":
                txn.rollback()
            if how == "exception":
                raise KeyError("boom")
    except KeyError:
        pass
    after = _parts(s)
    for name, obj in held.items():
        if name == "plugins":
            assert all(after["plugins"][k] is v for k, v in obj.items()), name
        else:
            assert after[name] is obj, name
    assert live.favourite == "n2"
    assert snapshot_view(s) == view
    assert live.calls >= calls
    s.add_pod(pod("next"))
    [r] = s.run()
    assert r.node == "n2"  # the live plugin's attribute still decides


class Refusing:
    def __init__(self, refuse: str) -> None:
        self.refuse = refuse
        self.calls: list[tuple[str, str]] = []

    def bind(self, p: Any, node_name: str) -> None:
        self.calls.append((p.key, node_name))
        if p.metadata.name == self.refuse:
            raise RuntimeError("refused")


def test_a_binder_error_at_commit_is_a_bind_failure_and_every_binding_is_delivered() -> None:
    binder = Refusing("b")
    s = cluster(3, binder=binder)
    with s.transaction() as txn:
        for name in ("a", "b", "c"):
            s.add_pod(pod(name))
        assert [r.outcome for r in s.run()] == [Outcome.Scheduled] * 3
        txn.commit()
    assert [k for k, _ in binder.calls] == ["default/a", "default/b", "default/c"]
    assert sorted(p.key for p in s.bound_pods()) == ["default/a", "default/c"]
    assert [p.key for p in s.pending_pods()] == ["default/b"]
    assert any(e.reason == "FailedScheduling" and e.pod == "default/b" and "refused" in e.message
               for e in s.events)
    # The failed pod is retried like any bind failure, and binds once the binder accepts.
    binder.refuse = ""
    s.clock.advance(20)
    assert [(r.key, r.outcome) for r in s.run()] == [("default/b", Outcome.Scheduled)]


def test_explanation_history_is_not_shared_with_forks_or_kept_by_rollbacks() -> None:
    s = cluster(3, explain=["default/big"])
    s.add_pod(pod("big", cpu="64"))
    s.run()
    assert len(s.explain_attempts("default/big")) == 1
    f = s.fork()
    f.add_node(node("huge", cpu="128"))
    f.run()
    assert len(f.explain_attempts("default/big")) == 2
    assert len(s.explain_attempts("default/big")) == 1
    with s.transaction():
        s.add_node(node("huge", cpu="128"))
        s.run()
        assert len(s.explain_attempts("default/big")) == 2
    assert [e.feasible for e in s.explain_attempts("default/big")] == [()]
    assert s.explain("default/big") is not None and "huge" not in s.explain("default/big").rejected  # type: ignore[union-attr]


def test_a_parent_event_never_writes_into_a_forks_queue_entry() -> None:
    s = cluster(2, cpu="1")
    s.add_pod(pod("big", cpu="2"))
    assert [r.outcome for r in s.run()] == [Outcome.Unschedulable]
    f = s.fork()
    [entry] = f.queue.unschedulable_pod_infos()
    fields = {k: getattr(entry, k) for k in ("backoff_expiration", "timestamp", "attempts")}
    s.add_node(node("n9", cpu="8"))  # requeues the pod in the parent, after its backoff
    assert s.queue.pods_in_backoff_q() or s.queue.pods_in_active_q()
    assert {k: getattr(entry, k) for k in fields} == fields
    assert f.queue.unschedulable_pod_infos() == [entry]
    # The same for a transaction's savepoint: after a rollback the entry is as it was.
    s2 = cluster(2, cpu="1")
    s2.add_pod(pod("big", cpu="2"))
    s2.run()
    [before] = s2.queue.unschedulable_pod_infos()
    saved = {k: getattr(before, k) for k in fields}
    with s2.transaction():
        s2.add_node(node("n9", cpu="8"))
        s2.clock.advance(30)
        s2.run()
    [again] = s2.queue.unschedulable_pod_infos()
    assert {k: getattr(again, k) for k in fields} == saved
    assert decisions(s2) == []


def test_deepcopy_of_a_scheduler_is_an_independent_fork() -> None:
    s = cluster(3)
    for i in range(3):
        s.add_pod(pod(f"aff-{i}", spec={"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "a"}}}]}}}))
    s.run()  # InterPodAffinity now holds cached state
    c = copy.deepcopy(s)
    assert c is not s and c.cache is not s.cache
    assert cache_view(c) == cache_view(s)
    c.add_pod(pod("x", labels={"app": "x"}))
    c.run()
    assert "default/x" not in {p.key for p in s.bound_pods()}
    assert "default/x" in {p.key for p in c.bound_pods()}


def _spread(name: str, app: str) -> Any:
    return pod(name, labels={"app": app}, spec={
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}}}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 50, "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": app}}}}]}},
    })


def _world() -> Scheduler:
    s = cluster(6, zones=3, cpu="4")
    for i in range(8):
        s.add_pod(_spread(f"web-{i}", "web"))
    s.run()
    return s


@pytest.mark.parametrize("seed", range(4))
def test_after_a_rollback_the_kept_plugin_caches_decide_as_a_scheduler_that_never_forked(
    seed: int,
) -> None:
    """Rollback keeps the host's plugin objects and their caches (keyed by NodeInfo
    generations): the nodes the transaction touched are recomputed, and every later decision
    equals that of a twin that never ran the transaction."""
    s, twin = _world(), _world()
    with s.transaction():
        s.add_node(node("extra", zone="z1", cpu="8"))
        s.delete_pod("default/web-0")
        for i in range(seed + 3):
            s.add_pod(_spread(f"in-{i}", "web" if i % 2 else "api"))
        s.run()
        if seed % 2:
            s.delete_node("n1")
            s.run()
    assert snapshot_view(s) == snapshot_view(twin)
    for r in range(3):
        for w in (s, twin):
            for i in range(4):
                w.add_pod(_spread(f"after-{r}-{i}", "web" if (i + seed) % 2 else "api"))
        assert decisions(s) == decisions(twin)
        assert cache_view(s) == cache_view(twin)
        for w in (s, twin):
            w.delete_pod(f"default/after-{r}-0")
            if r == seed % 3:
                w.delete_node("n2")


def test_eviction_state_is_rolled_back_with_the_transaction() -> None:
    s = cluster(2)
    s.add_pod(pod("p", node_name="n0"))
    ev = s.eviction
    ev_before = (dict(ev._terminating), list(ev.evicted), len(ev.events))
    with s.transaction():
        ev.evict("default/p")  # graceful deletion pending
        assert ev._terminating
    assert s.eviction is ev
    assert (dict(ev._terminating), list(ev.evicted), len(ev.events)) == ev_before
    assert ev.scheduler is s
    s.clock.advance(60)
    s.tick()
    assert [p.key for p in s.bound_pods()] == ["default/p"]
