"""Opportunistic batching as kube-scheduler v1.35.4 does it: its recorded placements, cycles
and traces (tests/data/batching, copied from shared/bench/batching and shared/traces), every
flush reason, hints that fail, nominated pods, forks, and the gate off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.bench.placements import compare, placements_of, read_placements
from kschedlib.conformance.runner import run_scenario
from kschedlib.conformance.scenario import Scenario
from kschedlib.framework.batch import HINT_NOT_USED, HINT_USED, MAX_BATCH_AGE, NO_HINT
from kschedlib.results import Outcome
from tests.builders import node, pod_dict

DATA = Path(__file__).resolve().parent.parent / "data" / "batching"
SMALL = DATA / "batching-small-affinity-12n"
OFF = "OpportunisticBatching=false"

LIST_SPREAD: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}],
    }],
}


def big(name: str, cpu: str = "3", **spec: Any) -> Pod:
    d = pod_dict(name, cpu=cpu, **spec)
    d["metadata"]["labels"] = {"app": "web"}
    return Pod.from_dict(d)


def cluster(n: int = 6, config: Any = LIST_SPREAD, **kw: Any) -> Scheduler:
    s = Scheduler(config, clock=FakeClock(), deterministic=True, **kw)
    for i in range(n):
        s.add_node(node(f"n{i}", cpu="4"))
    return s


def go(s: Scheduler, p: Pod) -> Any:
    s.add_pod(p)
    r = s.schedule_pod(p)
    assert r is not None
    return r


def flushes(s: Scheduler) -> dict[str, int]:
    return {reason: n for (_, reason), n in s.metrics.batch.cache_flushed.items()}


# --- kube-scheduler's recordings ------------------------------------------------------------


@pytest.mark.parametrize(("gates", "suffix"), [(None, "placements-batching"), (OFF, "placements")])
def test_placements_as_recorded(gates: str | None, suffix: str) -> None:
    counts: dict[str, int] = {}
    ours = placements_of(str(SMALL) + ".json", feature_gates=gates, batch_counts=counts)
    expected = read_placements(f"{SMALL}.{suffix}.txt")
    assert compare(ours, expected)[1] is None
    if gates is None:
        assert counts == {NO_HINT: 3, HINT_USED: 11}
    else:
        assert counts == {}


def test_recorded_placements_differ_with_batching() -> None:
    """The scenario is one where the stale ranking shows: the two files differ."""
    assert read_placements(f"{SMALL}.placements.txt") != read_placements(
        f"{SMALL}.placements-batching.txt"
    )


@pytest.mark.parametrize(("gates", "expected"), [
    (None, "batching.expected.json"), (OFF, "expected.json"),
])
def test_cycles_as_recorded(gates: str | None, expected: str) -> None:
    """Every cycle (feasible nodes, scores, the hint offered) as kube-scheduler recorded it."""
    r = run_scenario(str(SMALL) + ".json", f"{SMALL}.{expected}", gates)
    assert r.error == ""
    assert r.mismatches == []


def replay(name: str) -> list[dict[str, Any]]:
    """The trace's steps through the facade (see shared/traces/README.md); its attempts."""
    scenario = Scenario.load(DATA / f"{name}.json")
    clock = FakeClock()
    s = Scheduler(scenario.config, clock=clock, deterministic=True)
    for n in scenario.nodes:
        s.add_node(n)
    steps = json.loads((DATA / f"{name}.timeline.json").read_text())["steps"]
    out: list[dict[str, Any]] = []
    for step in steps:
        if "create" in step:
            for obj in step["create"]:
                s.add_pod(obj)
        elif "advance" in step:
            clock.advance(step["advance"])
            s.tick()
        elif "settle" in step:
            for r in s.run():
                out.append({"pod": r.pod.key, "node": r.node, "batch": r.batch,
                            "result": r.outcome.value})
    return out


@pytest.mark.parametrize("name", ["trace-batching-001", "trace-batching-002"])
def test_traces(name: str) -> None:
    want = [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]
    attempts = [
        {"pod": a["pod"], "node": a["node"], "batch": a["batch"],
         "result": "Scheduled" if a["result"] == "scheduled" else "Unschedulable"}
        for a in want if a["type"] == "attempt"
    ]
    assert replay(name) == attempts


# --- the default profile never hints ---------------------------------------------------------


def test_default_profile_never_hints() -> None:
    s = cluster(config=None)
    fwk = s.frameworks["default-scheduler"]
    assert fwk.sign_pod(big("a")) is None  # PodTopologySpread's system defaults
    results = [go(s, big(f"p{i}")) for i in range(8)]
    assert [r.batch for r in results] == [NO_HINT] * 8
    assert s.metrics.batch.attempts_of(HINT_USED) == 0
    # 6 placed (nothing else to rank after the 5th), then 2 failures that store nothing.
    assert flushes(s) == {"pod_not_batchable": 5, "empty_list": 1}


def test_gate_off_records_nothing() -> None:
    s = cluster(feature_gates=OFF)
    assert s.batching is None
    rs = [go(s, big(f"p{i}")) for i in range(3)]
    assert [r.batch for r in rs] == [None] * 3
    assert not s.metrics.batch.attempts


# --- hints and every flush reason --------------------------------------------------------------


def test_hints_follow_the_ranking_and_keep_the_round_robin_start() -> None:
    s = cluster(6)
    r1 = go(s, big("p1"))
    batch = s.batching.for_profile("default-scheduler") if s.batching else None
    assert batch is not None
    ranking = batch.remaining
    assert r1.batch == NO_HINT and len(ranking) == 5 and r1.node not in ranking
    start = s.algorithm.next_start_node_index
    for i, want in enumerate(ranking[:4], start=2):
        r = go(s, big(f"p{i}"))
        assert (r.batch, r.node) == (HINT_USED, want)
        assert s.algorithm.next_start_node_index == start
    assert batch.batched_pods == 4


def test_signature_change_expiry_and_skipped_cycle() -> None:
    s = cluster(8)
    go(s, big("a1"))
    r = go(s, big("b1", cpu="2500m"))  # another signature: flushed, ranks anew
    assert r.batch == NO_HINT and flushes(s) == {"pod_incompatible": 1}
    assert go(s, big("b2", cpu="2500m")).batch == HINT_USED
    s.clock.advance(MAX_BATCH_AGE + 0.1)  # the injected clock, not the machine's
    assert go(s, big("b3", cpu="2500m")).batch == NO_HINT
    assert flushes(s)["expired"] == 1
    bad = go(s, big("x", nodeSelector={"missing": "label"}))  # fails: stores nothing
    assert bad.outcome == Outcome.Unschedulable and bad.batch == NO_HINT
    assert go(s, big("b4", cpu="2500m")).batch == NO_HINT
    assert flushes(s)["pod_skipped"] == 1


def test_last_node_not_full_and_missing() -> None:
    s = cluster(6)
    go(s, big("s1", cpu="1"))
    # A 1-cpu pod still fits where the last one went: the ranking cannot be reused.
    assert go(s, big("s2", cpu="1")).batch == NO_HINT
    assert flushes(s) == {"node_not_full": 1}
    r = go(s, big("t1"))
    s.delete_node(r.node)
    assert go(s, big("t2")).batch == NO_HINT
    assert flushes(s)["node_missing"] == 1


def test_single_feasible_node_empties_the_batch() -> None:
    s = cluster(2)
    go(s, big("p1"))
    assert go(s, big("p2")).batch == HINT_USED
    assert go(s, big("p3")).outcome == Outcome.Unschedulable
    s.add_node(node("late", cpu="4"))
    assert go(s, big("p4")).batch == NO_HINT  # one feasible node: nothing kept
    assert flushes(s)["empty_list"] == 1


def test_hint_that_no_longer_fits_is_not_used() -> None:
    s = cluster(4)
    go(s, big("p1"))
    batch = s.batching.for_profile("default-scheduler") if s.batching else None
    assert batch is not None
    hinted = batch.remaining[0]
    blocker = Pod.from_dict({**pod_dict("blocker", cpu="2"), "spec": {
        **pod_dict("blocker", cpu="2")["spec"], "nodeName": hinted}})
    s.add_pod(blocker)  # the hinted node fills up behind the batch's back
    r = go(s, big("p2"))
    assert r.batch == HINT_NOT_USED and r.node != hinted and r.outcome == Outcome.Scheduled
    assert s.metrics.batch.attempts_of(HINT_NOT_USED) == 1
    assert hinted not in batch.remaining and r.node not in batch.remaining


def test_nominated_node_takes_precedence_over_the_hint() -> None:
    s = cluster(4)
    go(s, big("p1"))
    d = pod_dict("nom", cpu="3")
    d["metadata"]["labels"] = {"app": "web"}
    d["status"] = {"nominatedNodeName": "n3"}
    r = go(s, Pod.from_dict(d))
    assert (r.node, r.batch) == ("n3", HINT_NOT_USED)
    r2 = go(s, big("after"))
    assert r2.batch == NO_HINT  # the nominated cycle stored no ranking


def test_explanations_carry_the_hint() -> None:
    s = cluster(4)
    go(s, big("p1"))
    r = go(s, big("p2"))
    exp = s.explain(r.pod)
    assert exp is not None and exp.batch == HINT_USED and exp.batch_hint == r.node
    assert exp.feasible == (r.node,) and exp.scores == {}
    assert exp.to_dict()["batchHint"] == r.node


def test_fork_keeps_its_own_batch() -> None:
    s = cluster(6)
    go(s, big("p1"))
    f = s.fork()
    a, b = go(s, big("p2")), go(f, big("p2"))
    assert (a.node, a.batch) == (b.node, b.batch) == (a.node, HINT_USED)
    assert go(f, big("p3")).batch == HINT_USED
    assert s.batching is not None and f.batching is not None
    sb, fb = s.batching.for_profile("default-scheduler"), f.batching.for_profile("default-scheduler")
    assert sb is not None and fb is not None
    assert (len(sb.remaining), len(fb.remaining)) == (4, 3)
    assert s.metrics.batch.attempts_of(HINT_USED) == 1


def test_transaction_rollback_restores_the_batch() -> None:
    s = cluster(6)
    go(s, big("p1"))
    with s.transaction() as t:
        assert go(s, big("p2")).batch == HINT_USED
        t.rollback()
    assert go(s, big("p2")).batch == HINT_USED
    # The metrics are rolled back too, and the batch still counts into the scheduler's.
    assert s.metrics.batch.attempts_of(HINT_USED) == 1
    assert go(s, big("p3")).batch == HINT_USED
    assert s.metrics.batch.attempts_of(HINT_USED) == 2


def test_capacity_takes_the_hints_too() -> None:
    """capacity()'s replica loop places replicas as full cycles with batching do."""
    s = cluster(6)
    report = s.capacity(big("tmpl"))
    assert report.batched == 0 and report.count == 6
    t = cluster(6)
    nodes = [go(t, big(f"r{i}")).node for i in range(6)]
    assert [n for _, n in report.replicas] == nodes
    assert t.metrics.batch.attempts_of(HINT_USED) == 5


@pytest.mark.parametrize(("flags", "suffix", "shown"), [
    ([], "placements-batching", "hint_used 11, no_hint 3"),
    (["--no-batching"], "placements", "off"),
    (["--feature-gates", OFF], "placements", "off"),
])
def test_bench_placements_flag(
    flags: list[str], suffix: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kschedlib.bench.__main__ import main

    assert main([str(SMALL) + ".json", "--placements", f"{SMALL}.{suffix}.txt", *flags]) == 0
    assert capsys.readouterr().out == (
        f"placements identical: 14 pods compared, identical (batching: {shown})\n"
    )


def test_signatures_as_kube_scheduler_signs() -> None:
    """InterPodAffinity signs the labels only (not the namespace); with
    ignorePreferredTermsOfExistingPods, nothing; PodTopologySpread adds nothing without
    default constraints."""
    s = cluster(1)
    fwk = s.frameworks["default-scheduler"]

    def p(ns: str, app: str) -> Pod:
        d = pod_dict("x", cpu="1", namespace=ns)
        d["metadata"]["labels"] = {"app": app}
        return Pod.from_dict(d)

    assert fwk.sign_pod(p("a", "web")) == fwk.sign_pod(p("b", "web")) is not None
    assert fwk.sign_pod(p("a", "web")) != fwk.sign_pod(p("a", "db"))
    cfg = json.loads(json.dumps(LIST_SPREAD))
    cfg["profiles"][0]["pluginConfig"].append(
        {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}})
    fwk2 = cluster(1, config=cfg).frameworks["default-scheduler"]
    assert fwk2.sign_pod(p("a", "web")) == fwk2.sign_pod(p("a", "db")) is not None
