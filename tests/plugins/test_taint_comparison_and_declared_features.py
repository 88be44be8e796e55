"""TaintTolerationComparisonOperators (Gt/Lt tolerations) and the NodeDeclaredFeatures plugin,
each with its gate on and off."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import FakeClock, Node, Outcome, Pod, Scheduler
from kschedlib.api.node import Taint
from kschedlib.api.pod import Toleration
from kschedlib.api.taints import parse_int64, tolerates
from kschedlib.framework.events import ActionType, QueueingHint
from kschedlib.framework.registry import PluginSpec
from kschedlib.plugins.nodedeclaredfeatures import (
    ERR_REASON_UNSATISFIED,
    NodeDeclaredFeatures,
    infer_for_pod_scheduling,
    new_with_features,
)
from kschedlib.plugins.nodedeclaredfeatures import (
    NAME as NDF,
)
from kschedlib.plugins.nodedeclaredfeatures.nodedeclaredfeatures import (
    is_schedulable_after_node_change,
)


def node(name: str, taints: list[dict[str, str]] | None = None, declared: list[str] | None = None) -> Node:
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"taints": taints or []},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "declaredFeatures": declared or [],
        },
    })


def pod(name: str, **spec: Any) -> Pod:
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c"}], **spec},
    })


# --- Gt / Lt ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "tol", "taint", "want"),
    [
        ("Gt", "900", "950", True),
        ("Gt", "900", "900", False),
        ("Gt", "900", "850", False),
        ("Lt", "100", "50", True),
        ("Lt", "100", "100", False),
        ("Lt", "-5", "-10", True),
        ("Gt", "+5", "6", False),  # not canonical: no plus sign
        ("Gt", "5", "06", False),  # nor leading zeros
        ("Lt", "1", "0", True),
        ("Lt", "1", "-0", False),
        ("Gt", "x", "6", False),
        ("Gt", "5", "6.5", False),
        ("Gt", "5", "", False),
        ("Gt", "5", "9223372036854775808", False),  # out of int64
    ],
)
def test_comparison_operators(op: str, tol: str, taint: str, want: bool) -> None:
    t = Toleration(key="sla", operator=op, value=tol, effect="NoSchedule")
    tn = Taint(key="sla", value=taint, effect="NoSchedule")
    assert tolerates(t, tn, comparison_operators=True) is want
    assert tolerates(t, tn) is False  # the gate off: Gt/Lt tolerate nothing


def test_parse_int64() -> None:
    assert parse_int64("9223372036854775807") == 2**63 - 1
    assert parse_int64("-9223372036854775808") == -(2**63)
    assert parse_int64(" 1") is None and parse_int64("1_0") is None and parse_int64("") is None
    assert parse_int64("0") == 0 and parse_int64("-0") is None and parse_int64("007") is None
    assert parse_int64("-") is None and parse_int64("+1") is None


def sla_cluster(gates: dict[str, bool]) -> Scheduler:
    s = Scheduler(clock=FakeClock(), deterministic=True, feature_gates=gates)
    s.add_node(node("gold", [{"key": "sla", "value": "999", "effect": "NoSchedule"}]))
    s.add_node(node("bronze", [{"key": "sla", "value": "500", "effect": "NoSchedule"}]))
    return s


def test_gt_toleration_through_the_scheduler() -> None:
    tol = [{"key": "sla", "operator": "Gt", "value": "900", "effect": "NoSchedule"}]
    on = sla_cluster({"TaintTolerationComparisonOperators": True})
    on.add_pod(pod("p", tolerations=tol))
    (r,) = on.run()
    assert r.outcome == Outcome.Scheduled and r.node == "gold"
    off = sla_cluster({})
    off.add_pod(pod("p", tolerations=tol))
    (r,) = off.run()
    assert r.outcome == Outcome.Unschedulable
    assert r.message.startswith("0/2 nodes are available: 2 node(s) had untolerated taint(s).")


def test_lt_prefer_no_schedule_scores() -> None:
    s = Scheduler(clock=FakeClock(), deterministic=True,
                  feature_gates={"TaintTolerationComparisonOperators": True})
    s.add_node(node("a", [{"key": "load", "value": "80", "effect": "PreferNoSchedule"}]))
    s.add_node(node("b", [{"key": "load", "value": "20", "effect": "PreferNoSchedule"}]))
    s.add_pod(pod("p", tolerations=[{"key": "load", "operator": "Lt", "value": "50"}]))
    (r,) = s.run()
    assert r.node == "b"
    exp = s.explain("default/p")
    assert exp is not None
    assert exp.scores["b"].plugins["TaintToleration"].normalized == 100
    assert exp.scores["a"].plugins["TaintToleration"].normalized == 0


# --- NodeDeclaredFeatures ---------------------------------------------------------------


class NeedsFoo:
    """A host-registered feature: pods with annotation-free label ``needs=foo`` need Foo."""

    name = "Foo"
    max_version = None

    def infer_for_scheduling(self, p: Pod) -> bool:
        return p.metadata.name.startswith("foo")


class GaFeature(NeedsFoo):
    name = "Old"
    max_version = (1, 30)  # GA before 1.35: present everywhere


HOST = "HostDeclaredFeatures"


def ndf_scheduler(enabled: bool) -> Scheduler:
    """The plugin with a host feature registry, registered under another name."""
    return Scheduler(
        clock=FakeClock(),
        deterministic=True,
        feature_gates={"NodeDeclaredFeatures": enabled},
        plugins={HOST: PluginSpec(HOST, new_with_features([NeedsFoo(), GaFeature()], HOST))},
        config={"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": HOST}]}}}]},
    )


def test_declared_features_filter() -> None:
    s = ndf_scheduler(True)
    assert HOST in s.frameworks["default-scheduler"].plugins
    assert NDF in s.frameworks["default-scheduler"].plugins  # the in-tree one, by the gate
    s.add_node(node("plain"))
    s.add_node(node("fancy", declared=["Foo"]))
    s.add_pod(pod("foo-1"))
    s.add_pod(pod("bar-1"))
    res = {r.key: r for r in s.run()}
    assert res["default/foo-1"].node == "fancy"
    assert res["default/bar-1"].outcome == Outcome.Scheduled
    s.add_pod(pod("foo-2"))
    s.delete_node("fancy")
    (r,) = s.run()
    assert r.outcome == Outcome.Unschedulable
    assert r.message.startswith(f"0/1 nodes are available: 1 {ERR_REASON_UNSATISFIED}: Foo.")
    # The node starts declaring Foo: the pod is requeued by UpdateNodeDeclaredFeature.
    s.update_node(node("plain", declared=["Foo"]))
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled and r.node == "plain"


def test_declared_features_gate_off_does_nothing() -> None:
    s = ndf_scheduler(False)
    pl = s.frameworks["default-scheduler"].plugins[HOST]
    assert NDF not in s.frameworks["default-scheduler"].plugins
    assert isinstance(pl, NodeDeclaredFeatures) and pl.events_to_register() == []
    s.add_node(node("plain"))
    s.add_pod(pod("foo-1"))
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled


def test_inference_and_hints() -> None:
    assert infer_for_pod_scheduling([NeedsFoo(), GaFeature()], pod("foo")) == {"Foo"}
    assert infer_for_pod_scheduling([NeedsFoo()], pod("bar")) == frozenset()
    old, new = node("n", declared=["A"]), node("n", declared=["A", "B"])
    assert is_schedulable_after_node_change(pod("p"), old, new) == QueueingHint.Queue
    assert is_schedulable_after_node_change(pod("p"), old, old) == QueueingHint.QueueSkip
    assert is_schedulable_after_node_change(pod("p"), None, old) == QueueingHint.Queue
    pl = NodeDeclaredFeatures(True, [NeedsFoo()])
    assert pl.sign_pod(pod("foo-1")) == ("Foo",) and pl.sign_pod(pod("bar")) == ()
    ev = NodeDeclaredFeatures(True).events_to_register()[0].event
    assert ev.action_type == ActionType.Add | ActionType.UpdateNodeDeclaredFeature


def test_default_registry_requires_nothing_in_v1_35() -> None:
    s = Scheduler(clock=FakeClock(), feature_gates={"NodeDeclaredFeatures": True})
    s.add_node(node("plain"))
    s.add_pod(pod("foo-1"))
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled


def test_spread_node_taints_policy_honours_comparison_operators() -> None:
    def zoned(name: str, zone: str, taints: list[dict[str, str]]) -> Node:
        n = node(name, taints)
        return Node.from_dict({**n.to_dict(), "metadata": {
            "name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}}})

    spread = [{
        "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}}, "nodeTaintsPolicy": "Honor",
    }]
    tol = [{"key": "sla", "operator": "Gt", "value": "900", "effect": "NoSchedule"}]
    placed = {}
    for enabled in (True, False):
        s = Scheduler(clock=FakeClock(), deterministic=True,
                      feature_gates={"TaintTolerationComparisonOperators": enabled})
        s.add_node(zoned("gold", "z1", [{"key": "sla", "value": "999", "effect": "NoSchedule"}]))
        s.add_node(zoned("plain", "z2", []))
        web = {"metadata": {"labels": {"app": "web"}}}
        s.add_pod(Pod.from_dict({**pod("old").to_dict(), **web, "metadata": {
            "name": "old", "namespace": "default", "uid": "old", "labels": {"app": "web"}},
            "spec": {"nodeName": "plain", "containers": [{"name": "c"}]}}))
        s.add_pod(Pod.from_dict({"metadata": {"name": "new", "namespace": "default",
                                              "labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c"}], "tolerations": tol,
                                          "topologySpreadConstraints": spread}}))
        (r,) = s.run()
        placed[enabled] = r.node
    # On: gold is tolerated, so z1 is a domain with 0 pods and z2 (1 pod) would exceed maxSkew.
    assert placed[True] == "gold"
    # Off: gold is neither tolerated nor a domain; z2 is the only domain.
    assert placed[False] == "plain"


RESTART_ALL = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]


@pytest.mark.parametrize("where", ["containers", "initContainers"])
def test_v1_35_4_registry_requires_restart_all_containers(where: str) -> None:
    """v1.35.4's registry: restartPolicyRules with RestartAllContainers need the feature."""
    from kschedlib.plugins.nodedeclaredfeatures import DEFAULT_FEATURES, infer_for_pod_scheduling

    assert [f.name for f in DEFAULT_FEATURES] == [
        "GuaranteedQoSPodCPUResize", "RestartAllContainersOnContainerExits",
    ]
    containers: dict[str, Any] = {"containers": [{"name": "c"}]}
    if where == "containers":
        containers["containers"] = [{"name": "c", "restartPolicyRules": RESTART_ALL}]
    else:
        containers["initContainers"] = [{"name": "i", "restartPolicy": "Always",
                                         "restartPolicyRules": RESTART_ALL}]
    needy = pod("needy", **containers)
    plain = pod("plain", containers=[{"name": "c", "restartPolicyRules": [
        {"action": "Restart", "exitCodes": {"operator": "NotIn", "values": [0]}}]}])
    assert infer_for_pod_scheduling(DEFAULT_FEATURES, needy) == {
        "RestartAllContainersOnContainerExits"}
    assert infer_for_pod_scheduling(DEFAULT_FEATURES, plain) == frozenset()

    s = Scheduler(clock=FakeClock(), deterministic=True,
                  feature_gates={"NodeDeclaredFeatures": True})
    s.add_node(node("old"))
    s.add_pod(needy)
    (r,) = s.run()
    assert r.outcome == Outcome.Unschedulable
    assert r.message.startswith(
        "0/1 nodes are available: 1 node declared features check failed - unsatisfied "
        "requirements: RestartAllContainersOnContainerExits.")
    s.update_node(node("old", declared=["RestartAllContainersOnContainerExits"]))
    (r,) = s.run()
    assert r.node == "old"


def test_unsatisfied_requirements_are_listed() -> None:
    from kschedlib.framework.cycle_state import CycleState
    from kschedlib.framework.types import NodeInfo
    from kschedlib.plugins.nodedeclaredfeatures.nodedeclaredfeatures import (
        PRE_FILTER_STATE_KEY,
        NodeDeclaredFeatures,
        PreFilterState,
    )

    pl = NodeDeclaredFeatures(True)
    state = CycleState()
    state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset({"FeatureB", "FeatureA", "C"})))
    st = pl.filter(state, pod("p"), NodeInfo(node("n", declared=["C"])))
    assert st is not None and st.reasons == (
        "node declared features check failed - unsatisfied requirements: FeatureA, FeatureB",)


@pytest.mark.parametrize(
    ("rule", "path", "problem"),
    [
        ({"action": "Kill", "exitCodes": {"operator": "In", "values": [1]}}, "action",
         'Unsupported value: "Kill": supported values: "Restart", "RestartAllContainers"'),
        ({"exitCodes": {"operator": "In", "values": [1]}}, "action", "Required value"),
        ({"action": "Restart"}, "exitCodes", "Required value"),
        ({"action": "Restart", "exitCodes": {"operator": "Is", "values": [1]}},
         "exitCodes.operator", 'Unsupported value: "Is": supported values: "In", "NotIn"'),
        ({"action": "Restart", "exitCodes": {"operator": "In", "values": [3, 3]}},
         "exitCodes.values[1]", "Duplicate value: 3"),
    ],
)
def test_restart_policy_rules_are_validated(rule: dict[str, Any], path: str, problem: str) -> None:
    from kschedlib.errors import InvalidObjectError

    with pytest.raises(InvalidObjectError) as exc:
        pod("p", initContainers=[{"name": "i", "restartPolicyRules": [rule]}])
    assert str(exc.value) == (
        f"pod default/p: spec.initContainers[0].restartPolicyRules[0].{path}: {problem}")
