"""DefaultPreemption: eligibility, victim selection, PDBs, candidate counting, the choice of
node and the effects through the host, on a small framework (PrioritySort, NodeResourcesFit,
NodePorts, a Deny filter, DefaultBinder, DefaultPreemption)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.backend.snapshot import Snapshot
from kschedlib.config.loader import load_config
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import FitError, NodeToStatus
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.handle import NoopHostHooks, ObjectStore
from kschedlib.framework.interface import PostFilterResult
from kschedlib.framework.registry import Registry
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.framework.waiting_pods import WaitingPod
from kschedlib.plugins import defaultbinder, nodeports, noderesources, queuesort
from kschedlib.plugins.defaultpreemption import (
    NAME,
    PLUGINS,
    DefaultPreemption,
    DefaultPreemptionArgs,
    Victims,
    filter_pods_with_pdb_violation,
    more_important_pod,
    new,
    pod_terminating_by_preemption,
    sort_slice,
)
from kschedlib.plugins.defaultpreemption.evaluator import aggregate_error_message
from kschedlib.schedule_one import SchedulingAlgorithm

T0 = dt.datetime(2025, 9, 8, 12, 0, tzinfo=dt.timezone.utc)


# --- objects ---------------------------------------------------------------------------------


def mknode(name: str, cpu: str = "4", pods: str = "110") -> Node:
    return Node.from_dict(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}},
        }
    )


def mkpod(
    name: str,
    priority: int = 0,
    cpu: str = "1",
    node: str = "",
    *,
    started_min: int | None = 0,
    labels: dict[str, str] | None = None,
    namespace: str = "default",
    host_port: int = 0,
    policy: str | None = None,
    nominated: str = "",
    deleting: bool = False,
    conditions: Sequence[dict[str, str]] = (),
) -> Pod:
    container: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    spec: dict[str, Any] = {"containers": [container], "priority": priority}
    if node:
        spec["nodeName"] = node
    if policy:
        spec["preemptionPolicy"] = policy
    status: dict[str, Any] = {}
    if node and started_min is not None:
        status["startTime"] = (T0 + dt.timedelta(minutes=started_min)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
    if nominated:
        status["nominatedNodeName"] = nominated
    if conditions:
        status["conditions"] = list(conditions)
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    if deleting:
        meta["deletionTimestamp"] = "2025-09-08T13:00:00Z"
    return Pod.from_dict({"metadata": meta, "spec": spec, "status": status})


def mkpdb(
    name: str,
    allowed: int,
    match: dict[str, str] | None,
    *,
    namespace: str = "default",
    disrupted: Iterable[str] = (),
) -> PodDisruptionBudget:
    spec: dict[str, Any] = {}
    if match is not None:
        spec["selector"] = {"matchLabels": match}
    return PodDisruptionBudget.from_dict(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": {p: "2025-09-08T12:00:00Z" for p in disrupted},
            },
        }
    )


# --- a small framework -----------------------------------------------------------------------


class Deny:
    """Filter rejecting the named nodes as UnschedulableAndUnresolvable."""

    def __init__(self, nodes: Iterable[str]) -> None:
        self.nodes = set(nodes)

    @property
    def name(self) -> str:
        return "Deny"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name in self.nodes:
            return Status(Code.UnschedulableAndUnresolvable, ("node(s) denied",))
        return None


class Nominator:
    def __init__(self, pods: Iterable[Pod]) -> None:
        self.pods = list(pods)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo.of(p) for p in self.pods if p.status.nominated_node_name == node_name]


class Host(NoopHostHooks):
    def __init__(self, fail_on: str = "") -> None:
        super().__init__()
        self.fail_on = fail_on

    def delete_pod(self, pod: Pod, reason: str) -> None:
        if pod.metadata.name == self.fail_on:
            raise RuntimeError(f"cannot delete {pod.metadata.name}")
        super().delete_pod(pod, reason)


class Env:
    """A framework over nodes and running pods, with DefaultPreemption configured by args."""

    def __init__(
        self,
        nodes: Sequence[Node],
        pods: Sequence[Pod] = (),
        *,
        pdbs: Sequence[PodDisruptionBudget] = (),
        nominated: Sequence[Pod] = (),
        deny: Iterable[str] = (),
        args: dict[str, Any] | None = None,
        host: Host | None = None,
        deterministic: bool = True,
    ) -> None:
        reg = Registry()
        for mod in (queuesort, noderesources, nodeports, defaultbinder):
            for spec in mod.PLUGINS:
                reg.register(spec.name, spec.factory, spec.args_type)
        for spec in PLUGINS:
            reg.register(spec.name, spec.factory, spec.args_type)
        deny_plugin = Deny(deny)
        reg.register("Deny", lambda a, h: deny_plugin)
        names = ["PrioritySort", "Deny", "NodeResourcesFit", "NodePorts", "DefaultBinder", NAME]
        cfg = {
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": n} for n in names],
                            "disabled": [{"name": "*"}],
                        }
                    },
                    "pluginConfig": [{"name": NAME, "args": args or {}}],
                }
            ]
        }
        self.objects = ObjectStore()
        for pdb in pdbs:
            self.objects.upsert(pdb)
        self.snapshot = Snapshot.from_objects(pods, nodes)
        self.host = host if host is not None else Host()
        self.fwk = Framework(
            load_config(cfg, reg).profiles[0],
            reg,
            objects=self.objects,
            host=self.host,
            nominator=Nominator(nominated),
            snapshot=self.snapshot,
        )
        self.fwk.deterministic = deterministic  # type: ignore[attr-defined]
        self.plugin: DefaultPreemption = self.fwk.plugins[NAME]

    def statuses(self, pod: Pod) -> tuple[CycleState, NodeToStatus]:
        state = CycleState()
        alg = SchedulingAlgorithm(percentage_of_nodes_to_score=100, deterministic=True)
        with pytest.raises(FitError) as info:
            alg.schedule_pod(self.fwk, state, pod, self.snapshot)
        return state, info.value.diagnosis.node_to_status

    def preempt(self, pod: Pod) -> tuple[PostFilterResult | None, Status | None]:
        state, statuses = self.statuses(pod)
        return self.plugin.post_filter(state, pod, statuses)

    @property
    def victims(self) -> list[str]:
        return sorted(p.metadata.name for p, _ in self.host.deleted)


def message(status: Status | None) -> str:
    assert status is not None
    return status.message()


# --- plugin wiring and args ------------------------------------------------------------------


def test_plugin_spec_and_extension_points() -> None:
    env = Env([mknode("n1")])
    assert [s.name for s in PLUGINS] == [NAME]
    assert PLUGINS[0].args_type is DefaultPreemptionArgs
    points = env.fwk.list_plugins()
    assert points["post_filter"] == [NAME]
    assert NAME in points["pre_enqueue"]
    assert env.plugin.pre_enqueue(mkpod("p")) is None


def test_events_to_register_pod_delete_always_skips() -> None:
    plugin = new(None, object())
    events = plugin.events_to_register()
    assert [e.event for e in events] == [ClusterEvent(EventResource.Pod, ActionType.Delete)]
    hint = events[0].queueing_hint_fn
    assert hint is not None and hint(mkpod("p"), mkpod("q"), None) == QueueingHint.QueueSkip
    sync = DefaultPreemption(DefaultPreemptionArgs(), object(), async_preemption=False)
    assert sync.events_to_register() == []


def test_args_defaults_and_decoding_from_config() -> None:
    env = Env([mknode("n1")], args={"minCandidateNodesPercentage": 20})
    assert env.plugin.args.min_candidate_nodes_percentage == 20
    assert env.plugin.args.min_candidate_nodes_absolute == 100
    assert DefaultPreemptionArgs() == DefaultPreemptionArgs(10, 100)


@pytest.mark.parametrize(
    ("pct", "absolute", "errors"),
    [
        (10, 100, []),
        (0, 1, []),
        (100, 0, []),
        (
            101,
            10,
            [("minCandidateNodesPercentage", "Invalid value: 101: not in valid range [0, 100]")],
        ),
        (
            -1,
            10,
            [("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]")],
        ),
        (10, -1, [("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)")]),
        (
            0,
            0,
            [
                (
                    "minCandidateNodesPercentage",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                ),
                (
                    "minCandidateNodesAbsolute",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
                ),
            ],
        ),
    ],
)
def test_args_validate(pct: int, absolute: int, errors: list[tuple[str, str]]) -> None:
    assert DefaultPreemptionArgs(pct, absolute).validate() == errors


def test_invalid_args_in_config_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"args\.minCandidateNodesAbsolute: Invalid value: -5"):
        Env([mknode("n1")], args={"minCandidateNodesAbsolute": -5})


# --- candidate counting (GetOffsetAndNumCandidates) ------------------------------------------


@pytest.mark.parametrize(
    ("num_nodes", "pct", "absolute", "expected"),
    [
        (0, 10, 100, 0),
        (1, 10, 100, 1),
        (50, 10, 100, 50),  # fewer nodes than the absolute minimum: all of them
        (100, 10, 100, 100),
        (1000, 10, 100, 100),  # 10% = 100
        (5000, 10, 100, 500),  # 10% wins over 100
        (1999, 10, 100, 199),  # integer division
        (1000, 50, 10, 500),
        (1000, 0, 10, 10),
        (1000, 100, 0, 1000),
        (7, 30, 1, 2),
        (7, 5, 0, 0),
    ],
)
def test_calculate_num_candidates(num_nodes: int, pct: int, absolute: int, expected: int) -> None:
    plugin = DefaultPreemption(DefaultPreemptionArgs(pct, absolute), object())
    assert plugin.calculate_num_candidates(num_nodes) == expected


def test_offset_is_zero_when_deterministic_and_random_otherwise() -> None:
    class H:
        deterministic = True

    assert new(None, H()).get_offset_and_num_candidates(500) == (0, 100)
    det_args = DefaultPreemptionArgs(deterministic=True, rng=random.Random(1))
    assert new(det_args, object()).get_offset_and_num_candidates(500) == (0, 100)

    rng_args = DefaultPreemptionArgs(rng=random.Random(7))
    offsets = {new(rng_args, object()).get_offset_and_num_candidates(500)[0] for _ in range(20)}
    assert all(0 <= o < 500 for o in offsets)
    assert len(offsets) > 1
    expected = random.Random(7).randrange(500)
    assert new(DefaultPreemptionArgs(rng=random.Random(7)), object()).get_offset_and_num_candidates(
        500
    ) == (expected, 100)

    class Seeded:
        rng_seed = 3

    got = new(None, Seeded()).get_offset_and_num_candidates(40)
    assert got == (random.Random(3).randrange(40), 40)


def test_dry_run_stops_after_num_candidates_from_the_offset() -> None:
    nodes = [mknode(f"n{i}", cpu="1") for i in range(1, 6)]
    pods = [mkpod(f"low{i}", 0, node=f"n{i}") for i in range(1, 6)]
    env = Env(nodes, pods, args={"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2})
    state, statuses = env.statuses(mkpod("p", 10))
    potential = statuses.nodes_for_status_code(env.snapshot, Code.Unschedulable)
    cands, _, err = env.plugin.evaluator.dry_run_preemption(
        state, mkpod("p", 10), potential, [], 3, 2
    )
    assert err is None
    assert [c.name for c in cands] == ["n4", "n5"]
    cands, _, _ = env.plugin.evaluator.dry_run_preemption(
        state, mkpod("p", 10), potential, [], 4, 2
    )
    assert [c.name for c in cands] == ["n5", "n1"]


def test_dry_run_keeps_looking_past_pdb_violating_candidates() -> None:
    nodes = [mknode(f"n{i}", cpu="1") for i in range(1, 4)]
    pods = [
        mkpod("g1", 0, node="n1", labels={"app": "g"}),
        mkpod("g2", 0, node="n2", labels={"app": "g"}),
        mkpod("free", 0, node="n3"),
    ]
    pdbs = [mkpdb("pdb", 0, {"app": "g"})]
    env = Env(
        nodes,
        pods,
        pdbs=pdbs,
        args={"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
    )
    state, statuses = env.statuses(mkpod("p", 10))
    potential = statuses.nodes_for_status_code(env.snapshot, Code.Unschedulable)
    cands, _, _ = env.plugin.evaluator.dry_run_preemption(
        state, mkpod("p", 10), potential, pdbs, 0, 1
    )
    # The violating candidate found first is kept (the list has room for one of each kind),
    # the search stops at the first non-violating one, which comes first.
    assert [(c.name, c.victims.num_pdb_violations) for c in cands] == [("n3", 0), ("n1", 1)]
    result, status = env.plugin.post_filter(state, mkpod("p", 10), statuses)
    assert result == PostFilterResult("n3") and status is not None
    assert status.code == Code.Success
    assert env.victims == ["free"]


# --- eligibility -----------------------------------------------------------------------------


def test_preemption_policy_never_is_not_eligible() -> None:
    env = Env([mknode("n1", cpu="1")], [mkpod("low", 0, node="n1")])
    result, status = env.preempt(mkpod("p", 100, policy="Never"))
    assert result is None
    assert status is not None and status.code == Code.Unschedulable
    assert message(status) == "preemption: not eligible due to preemptionPolicy=Never."
    assert env.victims == []


TERMINATING = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


def test_terminating_victim_on_the_nominated_node_makes_the_pod_wait() -> None:
    pods = [mkpod("low", 0, node="n1", deleting=True, conditions=[TERMINATING])]
    env = Env([mknode("n1", cpu="1")], pods)
    result, status = env.preempt(mkpod("p", 100, nominated="n1"))
    assert result is None
    assert (
        message(status)
        == "preemption: not eligible due to a terminating pod on the nominated node."
    )


@pytest.mark.parametrize(
    ("pod", "eligible"),
    [
        (mkpod("v", 0, node="n1", deleting=True, conditions=[TERMINATING]), False),
        # Being deleted for another reason: not a victim of our preemption.
        (mkpod("v", 0, node="n1", deleting=True), True),
        (
            mkpod(
                "v",
                0,
                node="n1",
                deleting=True,
                conditions=[{**TERMINATING, "reason": "DeletionByTaintManager"}],
            ),
            True,
        ),
        # The scheduler's condition without a deletion yet.
        (mkpod("v", 0, node="n1", conditions=[TERMINATING]), True),
        # Higher priority than the preemptor: not one of its victims.
        (mkpod("v", 500, node="n1", deleting=True, conditions=[TERMINATING]), True),
    ],
)
def test_pod_eligible_to_preempt_others(pod: Pod, eligible: bool) -> None:
    env = Env([mknode("n1"), mknode("n2")], [pod])
    preemptor = mkpod("p", 100, nominated="n1")
    ok, msg = env.plugin.pod_eligible_to_preempt_others(preemptor, Status(Code.Unschedulable))
    assert ok is eligible
    assert msg == (
        "" if eligible else "not eligible due to a terminating pod on the nominated node."
    )
    assert pod_terminating_by_preemption(pod) is (not eligible or pod.spec.priority == 500)


def test_unresolvable_nominated_node_lets_the_pod_preempt_again() -> None:
    pods = [mkpod("low", 0, node="n1", deleting=True, conditions=[TERMINATING])]
    env = Env([mknode("n1")], pods)
    preemptor = mkpod("p", 100, nominated="n1")
    st = Status(Code.UnschedulableAndUnresolvable, ("gone",))
    assert env.plugin.pod_eligible_to_preempt_others(preemptor, st) == (True, "")
    # A nominated node that no longer exists: eligible.
    gone = mkpod("p", 100, nominated="n9")
    assert env.plugin.pod_eligible_to_preempt_others(gone, Status(Code.Unschedulable)) == (True, "")


# --- candidates and failure messages ---------------------------------------------------------


def test_unresolvable_nodes_are_not_helped_by_preemption() -> None:
    nodes = [mknode("n1", cpu="1"), mknode("n2", cpu="1"), mknode("n3", cpu="1")]
    pods = [mkpod("low1", 0, node="n1"), mkpod("low2", 0, node="n2"), mkpod("high", 500, node="n3")]
    env = Env(nodes, pods, deny=["n1", "n2"])
    result, status = env.preempt(mkpod("p", 100))
    assert result == PostFilterResult("")
    assert status is not None and status.code == Code.Unschedulable
    assert message(status) == (
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert env.victims == []


def test_every_node_unresolvable() -> None:
    env = Env([mknode("n1"), mknode("n2")], deny=["n1", "n2"])
    _, status = env.preempt(mkpod("p", 100))
    assert message(status) == (
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_no_lower_priority_pods() -> None:
    nodes = [mknode("n1", cpu="1"), mknode("n2", cpu="1")]
    pods = [mkpod("same", 100, node="n1"), mkpod("higher", 200, node="n2")]
    env = Env(nodes, pods)
    result, status = env.preempt(mkpod("p", 100))
    assert result == PostFilterResult("")
    assert message(status) == (
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_pod_does_not_fit_even_without_lower_priority_pods() -> None:
    # n1: the low pod frees 1 cpu but a higher-priority pod keeps 2 of 3: 2 are needed.
    nodes = [mknode("n1", cpu="3")]
    pods = [mkpod("low", 0, node="n1"), mkpod("high", 500, cpu="2", node="n1")]
    env = Env(nodes, pods)
    result, status = env.preempt(mkpod("p", 100, cpu="2"))
    assert result == PostFilterResult("")
    assert message(status) == "preemption: 0/1 nodes are available: 1 Insufficient cpu."


def test_host_port_conflict_with_higher_priority_pod() -> None:
    nodes = [mknode("n1"), mknode("n2")]
    pods = [
        mkpod("web1", 500, node="n1", host_port=443),
        mkpod("web2", 500, node="n2", host_port=443),
        mkpod("low", 0, node="n2"),
    ]
    env = Env(nodes, pods)
    _, status = env.preempt(mkpod("p", 100, host_port=443))
    assert message(status) == (
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 node(s) didn't have free ports for the requested pod ports."
    )


# --- victims on a node (selectVictimsOnNode) -------------------------------------------------


def test_fewest_victims_reprieving_most_important_first() -> None:
    # 4 cpu node full with four 1-cpu pods; the preemptor needs 2 cpu: the two least
    # important go, the most important are reprieved.
    pods = [
        mkpod("p5", 5, node="n1"),
        mkpod("p1", 1, node="n1"),
        mkpod("p3", 3, node="n1"),
        mkpod("p2", 2, node="n1"),
    ]
    env = Env([mknode("n1")], pods)
    result, status = env.preempt(mkpod("p", 10, cpu="2"))
    assert result == PostFilterResult("n1")
    assert status == Status(Code.Success)
    assert env.victims == ["p1", "p2"]
    assert all(r == "Preempted by pod uid-p on node n1" for _, r in env.host.deleted)


def test_victims_are_returned_most_important_first() -> None:
    pods = [
        mkpod("a", 1, node="n1"),
        mkpod("b", 3, node="n1"),
        mkpod("c", 2, node="n1"),
        mkpod("d", 9, node="n1"),
    ]
    env = Env([mknode("n1")], pods)
    state, _ = env.statuses(mkpod("p", 10, cpu="3"))
    ni = env.snapshot.get("n1").clone()
    victims, violations, st = env.plugin.select_victims_on_node(
        state, mkpod("p", 10, cpu="3"), ni, []
    )
    assert st is None and violations == 0
    assert [v.metadata.name for v in victims] == ["b", "c", "a"]
    # The copy no longer holds the victims; the snapshot is untouched.
    assert sorted(pi.pod.metadata.name for pi in ni.pods) == ["d"]
    assert len(env.snapshot.get("n1").pods) == 4


def test_equal_priority_older_pod_is_reprieved_first() -> None:
    pods = [
        mkpod("young", 1, node="n1", started_min=30),
        mkpod("old", 1, node="n1", started_min=-600),
    ]
    env = Env([mknode("n1", cpu="2")], pods)
    env.preempt(mkpod("p", 10))
    assert env.victims == ["young"]


def test_pdb_violating_victims_are_reprieved_first() -> None:
    # Both pods have the same priority; the guarded one is the younger: without the PDB it
    # would go, with it the older, unguarded one goes instead.
    pods = [
        mkpod("guarded", 1, node="n1", labels={"app": "g"}, started_min=30),
        mkpod("plain", 1, node="n1", labels={"app": "x"}, started_min=0),
    ]
    env = Env([mknode("n1", cpu="2")], pods, pdbs=[mkpdb("pdb", 0, {"app": "g"})])
    env.preempt(mkpod("p", 10))
    assert env.victims == ["plain"]
    env2 = Env([mknode("n1", cpu="2")], pods)
    env2.preempt(mkpod("p", 10))
    assert env2.victims == ["guarded"]


def test_pdb_violations_are_counted_and_victims_resorted() -> None:
    pods = [
        mkpod("g1", 1, node="n1", labels={"app": "g"}),
        mkpod("g2", 2, node="n1", labels={"app": "g"}),
        mkpod("x", 3, node="n1", labels={"app": "x"}),
    ]
    env = Env([mknode("n1", cpu="3")], pods)
    pdbs = [mkpdb("pdb", 1, {"app": "g"})]
    p = mkpod("p", 10, cpu="3")
    state, _ = env.statuses(p)
    victims, violations, st = env.plugin.select_victims_on_node(
        state, p, env.snapshot.get("n1").clone(), pdbs
    )
    assert st is None
    assert violations == 1  # g2 uses the one allowed disruption, g1 violates
    assert [v.metadata.name for v in victims] == ["x", "g2", "g1"]


def test_unstarted_pods_are_newer_than_started_ones() -> None:
    started = mkpod("s", 1, node="n1", started_min=0)
    fresh = mkpod("f", 1, node="n1", started_min=None)
    assert more_important_pod(started, fresh)
    assert not more_important_pod(fresh, started)
    # Two unstarted pods: the first one asked is "older", as with successive time.Now().
    other = mkpod("g", 1, node="n1", started_min=None)
    assert more_important_pod(fresh, other) and more_important_pod(other, fresh)
    assert more_important_pod(mkpod("hi", 2, node="n1", started_min=None), started)


def test_go_sort_slice_matches_go_on_ties() -> None:
    # Insertion sort up to 12 elements: stable for a strict order.
    items = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    sort_slice(items, lambda x, y: x[0] < y[0])
    assert items == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
    # With an order that always says "less" (unstarted equal pods), Go's insertion sort
    # reverses the slice.
    rev = list(range(8))
    sort_slice(rev, lambda x, y: True)
    assert rev == list(reversed(range(8)))
    rng = random.Random(5)
    for n in (13, 50, 51, 200):
        xs = [rng.randrange(7) for _ in range(n)]
        ys = list(xs)
        sort_slice(ys, lambda a, b: a < b)
        assert ys == sorted(xs)


# --- PDBs (filterPodsWithPDBViolation) -------------------------------------------------------


def _names(pis: list[PodInfo]) -> list[str]:
    return [pi.pod.metadata.name for pi in pis]


def test_pdb_budget_is_consumed_in_order() -> None:
    pis = [PodInfo.of(mkpod(n, 0, node="n1", labels={"app": "g"})) for n in ("a", "b", "c")]
    violating, ok = filter_pods_with_pdb_violation(pis, [mkpdb("pdb", 1, {"app": "g"})])
    assert _names(violating) == ["b", "c"]
    assert _names(ok) == ["a"]


def test_pdb_disrupted_pods_do_not_consume_budget() -> None:
    pis = [PodInfo.of(mkpod(n, 0, node="n1", labels={"app": "g"})) for n in ("a", "b")]
    pdb = mkpdb("pdb", 0, {"app": "g"}, disrupted=["a"])
    violating, ok = filter_pods_with_pdb_violation(pis, [pdb])
    assert _names(violating) == ["b"]
    assert _names(ok) == ["a"]


@pytest.mark.parametrize(
    ("pdb", "pod"),
    [
        (
            mkpdb("other-ns", 0, {"app": "g"}, namespace="kube-system"),
            mkpod("a", 0, node="n1", labels={"app": "g"}),
        ),
        (mkpdb("no-match", 0, {"app": "h"}), mkpod("a", 0, node="n1", labels={"app": "g"})),
        (mkpdb("empty-selector", 0, {}), mkpod("a", 0, node="n1", labels={"app": "g"})),
        (mkpdb("nil-selector", 0, None), mkpod("a", 0, node="n1", labels={"app": "g"})),
        (mkpdb("unlabelled-pod", 0, {"app": "g"}), mkpod("a", 0, node="n1")),
    ],
)
def test_pdb_that_does_not_apply(pdb: PodDisruptionBudget, pod: Pod) -> None:
    violating, ok = filter_pods_with_pdb_violation([PodInfo.of(pod)], [pdb])
    assert violating == [] and _names(ok) == ["a"]


def test_every_matching_pdb_is_charged() -> None:
    pod = mkpod("a", 0, node="n1", labels={"app": "g", "tier": "web"})
    pdbs = [mkpdb("by-app", 1, {"app": "g"}), mkpdb("by-tier", 0, {"tier": "web"})]
    violating, ok = filter_pods_with_pdb_violation([PodInfo.of(pod)], pdbs)
    assert _names(violating) == ["a"] and ok == []


# --- choosing the node (pickOneNodeForPreemption), one criterion per test --------------------


def v(*pods: Pod, pdb: int = 0) -> Victims:
    return Victims(list(pods), pdb)


def pick(nodes_to_victims: dict[str, Victims]) -> str:
    return new(None, object()).evaluator.pick_one_node_for_preemption(nodes_to_victims)


def test_pick_fewest_pdb_violations() -> None:
    assert pick({"n1": v(mkpod("a", 1), pdb=1), "n2": v(mkpod("b", 50), mkpod("c", 50))}) == "n2"


def test_pick_lowest_highest_priority_victim() -> None:
    assert pick({"n1": v(mkpod("a", 5)), "n2": v(mkpod("b", 3), mkpod("c", 2))}) == "n2"


def test_pick_smallest_priority_sum() -> None:
    assert (
        pick({"n1": v(mkpod("a", 3), mkpod("b", 2)), "n2": v(mkpod("c", 3), mkpod("d", 1))}) == "n2"
    )
    # Priorities are shifted to be non-negative: a negative-priority victim still costs.
    assert pick({"n1": v(mkpod("a", 3), mkpod("b", -5)), "n2": v(mkpod("c", 3))}) == "n2"


def test_pick_fewest_victims() -> None:
    # Equal highest priority and equal shifted sum: only the count separates them.
    lowest = -(1 << 31)
    assert pick({"n1": v(mkpod("a", 3), mkpod("b", lowest)), "n2": v(mkpod("c", 3))}) == "n2"


def test_pick_latest_start_of_highest_priority_victims() -> None:
    n1 = v(mkpod("a", 5, node="n1", started_min=0), mkpod("b", 5, node="n1", started_min=120))
    n2 = v(mkpod("c", 5, node="n2", started_min=60), mkpod("d", 5, node="n2", started_min=70))
    assert pick({"n1": n1, "n2": n2}) == "n2"


def test_pick_first_candidate_on_full_tie() -> None:
    a = v(mkpod("a", 5, node="n1", started_min=0))
    b = v(mkpod("b", 5, node="n2", started_min=0))
    assert pick({"n2": b, "n1": a}) == "n2"
    assert pick({"n1": a, "n2": b}) == "n1"
    assert pick({}) == ""


def test_latest_start_time_end_to_end() -> None:
    nodes = [mknode(f"n{i}", cpu="1") for i in range(1, 4)]
    pods = [
        mkpod("a", 1, node="n1", started_min=-1440),
        mkpod("b", 1, node="n2", started_min=-30),
        mkpod("c", 1, node="n3", started_min=-600),
    ]
    env = Env(nodes, pods)
    result, _ = env.preempt(mkpod("p", 10))
    assert result == PostFilterResult("n2")
    assert env.victims == ["b"]


def test_lowest_priority_node_end_to_end() -> None:
    nodes = [mknode("n1", cpu="2"), mknode("n2", cpu="2"), mknode("n3", cpu="2")]
    pods = [
        mkpod("a1", 5, node="n1"),
        mkpod("a2", 5, node="n1"),
        mkpod("b1", 2, node="n2"),
        mkpod("b2", 2, node="n2"),
        mkpod("c1", 1, node="n3"),
        mkpod("c2", 1, node="n3"),
    ]
    env = Env(nodes, pods)
    result, _ = env.preempt(mkpod("p", 10))
    assert result == PostFilterResult("n3")  # lowest highest-victim priority (1 < 2 < 5)
    assert env.victims == ["c1"] or env.victims == ["c2"]


# --- effects ---------------------------------------------------------------------------------


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    nodes = [mknode("n1", cpu="1")]
    nominated = [
        mkpod("lower", 5, cpu="0", nominated="n1"),
        mkpod("higher", 50, cpu="0", nominated="n1"),
        mkpod("elsewhere", 1, cpu="0", nominated="n2"),
    ]
    env = Env(nodes, [mkpod("low", 0, node="n1")], nominated=nominated)
    result, status = env.preempt(mkpod("p", 10))
    assert status is not None and status.code == Code.Success
    assert result == PostFilterResult("n1")
    assert [p.metadata.name for p in env.host.cleared_nominations] == ["lower"]


def test_victims_already_terminating_are_not_deleted_again() -> None:
    pods = [mkpod("going", 0, node="n1", deleting=True), mkpod("low", 0, node="n1")]
    env = Env([mknode("n1", cpu="2")], pods, nominated=[mkpod("lower", 5, nominated="n1")])
    result, _ = env.preempt(mkpod("p", 10, cpu="2"))
    assert result == PostFilterResult("n1")
    assert env.victims == ["low"]
    # Only terminating victims: the asynchronous path does nothing at all.
    env2 = Env(
        [mknode("n1", cpu="1")],
        [mkpod("going", 0, node="n1", deleting=True)],
        nominated=[mkpod("lower", 5, nominated="n1")],
    )
    result2, _ = env2.preempt(mkpod("p", 10))
    assert result2 == PostFilterResult("n1")
    assert env2.victims == [] and env2.host.cleared_nominations == []


def test_waiting_victim_is_rejected_instead_of_deleted() -> None:
    low = mkpod("low", 0, node="n1")
    env = Env([mknode("n1", cpu="1")], [low])
    waiting = WaitingPod(low, {"Gate": 60.0}, 0.0)
    env.fwk.waiting_pods.add(waiting)
    result, _ = env.preempt(mkpod("p", 10))
    assert result == PostFilterResult("n1")
    assert waiting.verdict == Status(Code.Unschedulable, ("preempted",), NAME)
    assert env.victims == []


def test_failed_eviction_sync_and_async() -> None:
    pods = [mkpod("a", 0, node="n1"), mkpod("b", 1, node="n1")]
    env = Env([mknode("n1", cpu="2")], pods, host=Host(fail_on="b"))
    result, status = env.preempt(mkpod("p", 10, cpu="2"))
    # Asynchronous preemption (on in v1.35): the nomination stands, evictions stop.
    assert result == PostFilterResult("n1") and status == Status(Code.Success)
    assert env.victims == []

    env2 = Env([mknode("n1", cpu="2")], pods, host=Host(fail_on="b"))
    sync = DefaultPreemption(DefaultPreemptionArgs(), env2.fwk, async_preemption=False)
    state, statuses = env2.statuses(mkpod("p", 10, cpu="2"))
    result2, status2 = sync.post_filter(state, mkpod("p", 10, cpu="2"), statuses)
    assert result2 is None
    assert status2 is not None and status2.code == Code.Error
    assert status2.message() == "preemption: cannot delete b"


# --- extenders -------------------------------------------------------------------------------


class Ext:
    def __init__(
        self, keep: dict[str, list[str]] | None, *, ignorable: bool = False, fail: bool = False
    ) -> None:
        self.keep = keep
        self.ignorable = ignorable
        self.fail = fail
        self.seen: dict[str, list[str]] = {}

    def supports_preemption(self) -> bool:
        return True

    def is_interested(self, pod: Pod) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return self.ignorable

    def process_preemption(self, pod: Pod, victims: dict[str, list[Pod]]) -> dict[str, list[Pod]]:
        self.seen = {n: [p.metadata.name for p in ps] for n, ps in victims.items()}
        if self.fail:
            raise RuntimeError("extender down")
        assert self.keep is not None
        by_name = {p.metadata.name: p for ps in victims.values() for p in ps}
        return {n: [by_name[x] for x in names] for n, names in self.keep.items()}


def _two_nodes() -> Env:
    nodes = [mknode("n1", cpu="1"), mknode("n2", cpu="1")]
    return Env(nodes, [mkpod("a", 1, node="n1"), mkpod("b", 2, node="n2")])


def test_extender_narrows_candidates() -> None:
    env = _two_nodes()
    ext = Ext({"n2": ["b"]})
    env.fwk.extenders = [ext]  # type: ignore[attr-defined]
    result, _ = env.preempt(mkpod("p", 10))
    assert ext.seen == {"n1": ["a"], "n2": ["b"]}
    assert result == PostFilterResult("n2")
    assert env.victims == ["b"]


def test_extender_errors() -> None:
    env = _two_nodes()
    env.fwk.extenders = [Ext(None, fail=True)]  # type: ignore[attr-defined]
    result, status = env.preempt(mkpod("p", 10))
    assert result is None and status is not None and status.code == Code.Error
    assert message(status) == "preemption: extender down"

    env = _two_nodes()
    env.fwk.extenders = [Ext(None, fail=True, ignorable=True)]  # type: ignore[attr-defined]
    result, _ = env.preempt(mkpod("p", 10))
    assert result == PostFilterResult("n1")

    env = _two_nodes()
    env.fwk.extenders = [Ext({"n1": []})]  # type: ignore[attr-defined]
    _, status = env.preempt(mkpod("p", 10))
    assert message(status) == 'preemption: expected at least one victim pod on node "n1"'

    env = _two_nodes()
    env.fwk.extenders = [Ext({})]  # type: ignore[attr-defined]
    result, status = env.preempt(mkpod("p", 10))
    assert result is None
    assert message(status) == "preemption: no candidate node for preemption"


def test_aggregate_error_message() -> None:
    assert aggregate_error_message(["x"]) == "x"
    assert aggregate_error_message(["x", "x"]) == "x"
    assert aggregate_error_message(["x", "y", "x"]) == "[x, y]"


def test_higher_priority_nominated_pods_hold_their_room() -> None:
    pods = [mkpod("low1", 0, node="n1"), mkpod("low2", 0, node="n1", started_min=5)]
    env = Env([mknode("n1", cpu="2")], pods)
    env.preempt(mkpod("p", 10))
    assert env.victims == ["low2"]
    env2 = Env([mknode("n1", cpu="2")], pods, nominated=[mkpod("big", 50, nominated="n1")])
    env2.preempt(mkpod("p", 10))
    assert env2.victims == ["low1", "low2"]
