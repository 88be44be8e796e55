"""Stored preemption dry runs give bit-for-bit what recomputation gives: random small
clusters with priorities, PDBs and nominated pods scheduled with the store and without it,
every decision, victim, nomination and message compared."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.plugins.defaultpreemption import DefaultPreemption
from kschedlib.plugins.defaultpreemption.dry_run_cache import DryRunCache, DryRunMemo

CPUS = ("500m", "1", "1500m", "2", "3")


def make_node(i: int, cpu: int, taint: bool) -> Node:
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    name = f"n{i:02d}"
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "tier": "a" if i % 2 else "b"}},
        "spec": spec,
        "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "6"}},
    })


def make_pod(name: str, t: dict[str, Any], node: str = "", started: int | None = None,
             nominated: str = "") -> Pod:
    container: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": t["cpu"]}}}
    if t.get("port"):
        container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec: dict[str, Any] = {"containers": [container], "priority": t["priority"]}
    if node:
        spec["nodeName"] = node
    if t.get("never"):
        spec["preemptionPolicy"] = "Never"
    if t.get("tolerate"):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if t.get("selector"):
        spec["nodeSelector"] = {"tier": t["selector"]}
    if t.get("anti"):
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}},
             "topologyKey": "kubernetes.io/hostname"}]}}
    status: dict[str, Any] = {}
    if started is not None:
        status["startTime"] = f"2025-09-08T12:{started:02d}:00Z"
    if nominated:
        status["nominatedNodeName"] = nominated
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}",
                     "labels": {"app": t["app"]}},
        "spec": spec,
        "status": status,
    })


def make_pdb(name: str, app: str, allowed: int) -> PodDisruptionBudget:
    return PodDisruptionBudget.from_dict({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    })


@st.composite
def templates(draw: st.DrawFn, priorities: list[int]) -> dict[str, Any]:
    return {
        "cpu": draw(st.sampled_from(CPUS)),
        "priority": draw(st.sampled_from(priorities)),
        "app": draw(st.sampled_from(["a", "b", "c"])),
        "port": draw(st.integers(0, 5)) == 0,
        "never": draw(st.integers(0, 9)) == 0,
        "tolerate": draw(st.booleans()),
        "selector": draw(st.sampled_from([None, None, None, "a", "b"])),
        "anti": draw(st.integers(0, 7)) == 0,
    }


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    n_nodes = draw(st.integers(2, 9))
    nodes = [(i, draw(st.sampled_from([2, 3, 4])), draw(st.integers(0, 5)) == 0)
             for i in range(n_nodes)]
    running = [
        (draw(templates([0, 0, 1, 2, 5])), draw(st.integers(0, n_nodes - 1)),
         draw(st.one_of(st.none(), st.integers(0, 5))))
        for _ in range(draw(st.integers(0, 3 * n_nodes)))
    ]
    pdbs = [(f"pdb{k}", draw(st.sampled_from(["a", "b", "c"])), draw(st.integers(0, 2)))
            for k in range(draw(st.integers(0, 2)))]
    # Few templates, each varying one field of the first: equal preemptors meet the nodes
    # their predecessors dry-ran, and nearly equal ones must not take their outcomes.
    base = draw(templates([0, 3, 5, 10, 10]))
    kinds = [base]
    for field in draw(st.lists(st.sampled_from(["priority", "cpu", "tolerate", "port"]),
                               min_size=1, max_size=2)):
        kinds.append({**base, field: draw({"priority": st.sampled_from([3, 5, 10, 11]),
                                           "cpu": st.sampled_from(CPUS),
                                           "tolerate": st.booleans(),
                                           "port": st.booleans()}[field])})
    pending = [
        (kinds[draw(st.integers(0, len(kinds) - 1))],
         draw(st.one_of(st.just(-1), st.just(-1), st.integers(0, n_nodes - 1))))
        for _ in range(draw(st.integers(1, 14)))
    ]
    # Between pending pods: (after index, kind, target)
    events = draw(st.lists(
        st.tuples(st.integers(0, len(pending)), st.sampled_from(["pdb", "node", "delete"]),
                  st.integers(0, 9)), max_size=4))
    return {
        "nodes": nodes, "running": running, "pdbs": pdbs, "pending": pending,
        "events": events, "min_abs": draw(st.sampled_from([1, 2, 100])),
        "seed": draw(st.integers(0, 3)), "batch": draw(st.integers(1, 5)),
    }


def run(w: dict[str, Any], reuse: bool, node_local_cache: bool = True) -> list[Any]:
    config = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": w["min_abs"],
                                               "minCandidateNodesPercentage": 10}}]}]}
    sched = Scheduler(config, clock=FakeClock(), seed=w["seed"], explain=False,
                      node_local_cache=node_local_cache)
    plugin = sched.frameworks["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    if not reuse:
        plugin.dry_runs = None
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    for k, (t, node, started) in enumerate(w["running"]):
        sched.add_pod(make_pod(f"r{k:02d}", t, node=f"n{node:02d}", started=started))
    for name, app, allowed in w["pdbs"]:
        sched.add_object(make_pdb(name, app, allowed))
    out: list[Any] = []
    n_nodes = len(w["nodes"])
    for idx, (t, nominated) in enumerate(w["pending"]):
        for after, kind, target in w["events"]:
            if after != idx:
                continue
            if kind == "pdb" and w["pdbs"]:
                name, app, allowed = w["pdbs"][target % len(w["pdbs"])]
                sched.update_object(make_pdb(name, app, (allowed + target) % 3))
            elif kind == "node":
                i, cpu, taint = w["nodes"][target % n_nodes]
                sched.update_node(make_node(i, cpu + 1, taint))
            elif kind == "delete" and sched.bound_pods():
                sched.delete_pod(sched.bound_pods()[target % len(sched.bound_pods())].key)
        sched.add_pod(make_pod(f"p{idx:02d}", t,
                               nominated=f"n{nominated:02d}" if nominated >= 0 else ""))
        if idx % w["batch"] != w["batch"] - 1:
            continue  # pods of one batch are all pending before any runs: nominations pile up
        for r in sched.run():
            out.append((r.pod.key, r.outcome.value, r.node, r.message, r.nominated_node,
                        tuple(v.key for v in r.victims)))
        sched.clock.advance(20)
    for r in sched.run():
        out.append((r.pod.key, r.outcome.value, r.node, r.message, r.nominated_node,
                    tuple(v.key for v in r.victims)))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_same_preemption_decisions_with_and_without_stored_dry_runs(w: dict[str, Any]) -> None:
    assert run(w, reuse=True) == run(w, reuse=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_same_decisions_as_without_any_stored_result(w: dict[str, Any]) -> None:
    """Every reuse on (stored dry runs, node-local verdicts, two-pass verdicts on nodes with
    nominated pods) against none at all."""
    assert run(w, reuse=True) == run(w, reuse=False, node_local_cache=False)


def _small(reuse: bool, nodes: int, running: list[tuple[str, int, dict[str, Any]]]) -> Scheduler:
    sched = Scheduler(clock=FakeClock(), seed=0, explain=False)
    if not reuse:
        sched.frameworks["default-scheduler"].plugins["DefaultPreemption"].dry_runs = None
    for i in range(nodes):
        sched.add_node(make_node(i, 4, False))
    for k, (name, node, t) in enumerate(running):
        sched.add_pod(make_pod(name, {"app": "a", **t}, node=f"n{node:02d}", started=k))
    return sched


def _attempts(sched: Scheduler, *objs: Any) -> list[Any]:
    for o in objs:
        if isinstance(o, Pod):
            sched.add_pod(o)
        else:
            sched.add_object(o)
    return [(r.pod.metadata.name, r.outcome.value, r.node, r.nominated_node,
             tuple(v.metadata.name for v in r.victims), r.message) for r in sched.run()]


def _checked_twice(
    nodes: int, running: list[tuple[str, int, dict[str, Any]]], *batches: tuple[Any, ...]
) -> list[Any]:
    """The attempts with stored outcomes (each found one checked against its recomputation)
    and without; they must agree and some stored outcome must have been found."""
    out = []
    for reuse in (True, False):
        sched = _small(reuse, nodes, running)
        with _Checked() as checked:
            out.append([a for batch in batches for a in _attempts(sched, *batch)])
        assert checked.mismatches == []
        assert (checked.hits > 0) == reuse
    assert out[0] == out[1]
    return out[0]


def _p(name: str, cpu: str, priority: int, **extra: Any) -> Pod:
    nominated = extra.pop("nominated", "")
    return make_pod(name, {"cpu": cpu, "priority": priority, "app": "x", **extra},
                    nominated=nominated)


FOUR_BY_TWO = [(f"r{n}{k}", n, {"cpu": "1", "priority": 0}) for n in range(2) for k in range(4)]


def test_a_preemptor_asking_more_does_not_take_stored_outcomes() -> None:
    """The fragments are part of the key: 1 cpu needs one victim, 3 cpu need three."""
    out = _checked_twice(2, FOUR_BY_TWO, (_p("a", "1", 10),), (_p("b", "3", 10),),
                         (_p("c", "3", 10),))
    assert [len(victims) for _, _, _, _, victims, _ in out if victims] == [1, 3, 3]


def test_a_preemptor_of_lower_priority_does_not_take_stored_outcomes() -> None:
    """The priority is part of the key: it decides which pods may be evicted."""
    running = [(f"h{n}", n, {"cpu": "3", "priority": 5}) for n in range(3)]
    running += [(f"l{n}", n, {"cpu": "1", "priority": 0}) for n in range(3)]
    out = _checked_twice(3, running, (_p("a", "3", 10),), (_p("b", "3", 10),),
                         (_p("c", "3", 3),))
    assert out[-1][1] == "Unschedulable" and out[-1][4] == ()


def test_a_new_nomination_on_an_unchanged_node_is_seen() -> None:
    """Pods nominated to the node with at least the preemptor's priority are part of the key:
    a pod that may not preempt stays nominated to n00 (where "a" did not go) without changing
    it."""
    _checked_twice(2, FOUR_BY_TWO, (_p("a", "2", 10),),
                   (_p("nom", "3", 10, never=True, nominated="n00"), _p("b", "2", 10)),
                   (_p("c", "2", 10),))


def test_a_new_pdb_drops_stored_outcomes() -> None:
    _checked_twice(3, FOUR_BY_TWO + [(f"r2{k}", 2, {"cpu": "1", "priority": 0}) for k in range(4)],
                   (_p("a", "1", 10),), (make_pdb("pdb", "a", 0), _p("b", "1", 10)),
                   (_p("c", "1", 10),))


def test_stored_outcomes_are_reused_and_dropped_when_pdbs_change() -> None:
    sched = Scheduler(clock=FakeClock(), seed=0, explain=False)
    for i in range(3):
        sched.add_node(make_node(i, 2, False))
    low = {"cpu": "1", "priority": 0, "app": "a"}
    for k in range(6):
        sched.add_pod(make_pod(f"r{k}", low, node=f"n{k % 3:02d}", started=k))
    plugin = sched.frameworks["default-scheduler"].plugins["DefaultPreemption"]
    cache = plugin.dry_runs
    assert isinstance(cache, DryRunCache)
    high = {"cpu": "2", "priority": 10, "app": "b"}
    sched.add_pod(make_pod("p0", high))
    first = sched.run()
    assert first[0].victims and len(cache) == 1
    sched.add_object(make_pdb("pdb", "a", 0))
    sched.add_pod(make_pod("p1", high))
    second = sched.run()
    assert second[0].victims  # recomputed with the PDB: still a candidate
    assert len(cache) == 1


class _Checked:
    """Patches DryRunMemo so that every stored outcome found is recomputed and compared."""

    def __init__(self) -> None:
        self.hits = 0
        self.mismatches: list[Any] = []
        self._found: dict[str, Any] = {}
        self._saved: tuple[Any, Any, Any] = (DryRunMemo.find, DryRunMemo.store, DryRunMemo.parts)

    def __enter__(self) -> _Checked:
        find, store, _ = self._saved
        found = self._found

        def checked_find(memo: DryRunMemo, node_info: Any) -> Any:
            nominated, found[node_info.name] = find(memo, node_info)
            return nominated, None  # recompute

        def checked_store(
            memo: DryRunMemo, node_info: Any, nominated: Any, outcome: Any, summary: Any = None
        ) -> None:
            got = found.pop(node_info.name)
            if got is not None:
                self.hits += 1
                victims, num, status = outcome
                same = (
                    len(got[0]) == len(victims)
                    and all(a is b for a, b in zip(got[0], victims, strict=True))
                    and got[1] == num
                    and got[2] == status
                    and (got[2] and got[2].plugin) == (status and status.plugin)
                    and got[3] == summary
                )
                if not same:  # recorded: the scheduler turns exceptions into Error attempts
                    self.mismatches.append((node_info.name, got, outcome))
            store(memo, node_info, nominated, outcome, summary)

        DryRunMemo.find = checked_find  # type: ignore[method-assign]
        DryRunMemo.store = checked_store  # type: ignore[method-assign]
        # The dry run inlines find when it can: make it call find.
        DryRunMemo.parts = lambda memo: None  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        DryRunMemo.find, DryRunMemo.store, DryRunMemo.parts = self._saved  # type: ignore[method-assign]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_every_stored_outcome_found_equals_its_recomputation(w: dict[str, Any]) -> None:
    with _Checked() as checked:
        run(w, reuse=True)
    assert checked.mismatches == []
