"""Objects the API server would reject are a clear InvalidObjectError (object + field path)
and change nothing; YAML as kubectl writes it and quantities as Go's UnmarshalJSON reads
them are accepted."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib import Node, Pod
from kschedlib.api.loader import load_objects
from kschedlib.cli.simulate import main as simulate_main
from kschedlib.errors import InvalidObjectError
from tests.builders import new_scheduler, node_dict, pod_dict


def _pod(**spec: Any) -> dict[str, Any]:
    return pod_dict("p", **spec)


POD_CASES = [
    ("negative request", pod_dict("p", cpu="-10"),
     "spec.containers[0].resources.requests[cpu]", "must be greater than or equal to 0"),
    ("negative limit",
     {**pod_dict("p"), "spec": {"containers": [
         {"name": "c", "resources": {"limits": {"memory": "-1Gi"}}}]}},
     "spec.containers[0].resources.limits[memory]", "must be greater than or equal to 0"),
    ("empty name", {**pod_dict("p"), "metadata": {"namespace": "default", "name": ""}},
     "metadata.name", "Required value"),
    ("missing name", {**pod_dict("p"), "metadata": {"namespace": "default"}},
     "metadata.name", "Required value"),
    ("bad name", pod_dict("Web_1"), "metadata.name", "RFC 1123 subdomain"),
    ("bad namespace", pod_dict("p", namespace="Team.A"), "metadata.namespace", "RFC 1123 label"),
    ("maxSkew 0", _pod(topologySpreadConstraints=[
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].maxSkew", "must be greater than zero"),
    ("missing topologyKey", _pod(topologySpreadConstraints=[
        {"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].topologyKey", "Required value"),
    ("container port 0",
     {**pod_dict("p"), "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]}},
     "spec.containers[0].ports[0].containerPort", "between 1 and 65535"),
    ("host port too big",
     {**pod_dict("p"), "spec": {"containers": [
         {"name": "c", "ports": [{"containerPort": 80, "hostPort": 70000}]}]}},
     "spec.containers[0].ports[0].hostPort", "between 1 and 65535"),
    ("priority beyond int32", pod_dict("p", priority=2**31),
     "spec.priority", "must be between -2147483648 and 2147483647"),
    ("invalid selector value", _pod(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "not valid!"}},
            "topologyKey": "kubernetes.io/hostname"}]}}),
     "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
     ".labelSelector.matchLabels[app]", "a valid label must be an empty string"),
    ("invalid expression value", _pod(affinity={"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
            "labelSelector": {"matchExpressions": [
                {"key": "app", "operator": "In", "values": ["bad value"]}]},
            "topologyKey": "zone"}}]}}),
     "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
     ".podAffinityTerm.labelSelector.matchExpressions[0].values[0]", "a valid label"),
    ("affinity without topologyKey", _pod(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}),
     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
     "Required value"),
]


@pytest.mark.parametrize(("data", "path", "text"), [c[1:] for c in POD_CASES],
                         ids=[c[0] for c in POD_CASES])
def test_invalid_pod_is_rejected_with_its_field_path(data: dict[str, Any], path: str,
                                                     text: str) -> None:
    with pytest.raises(InvalidObjectError) as exc:
        Pod.from_dict(data)
    assert exc.value.field == path
    assert text in exc.value.problem
    assert exc.value.obj.startswith("pod ")
    s = new_scheduler()
    with pytest.raises(InvalidObjectError):
        s.add_pod(data)
    assert s.pending_pods() == []  # nothing half-applied


def test_negative_cpu_pod_cannot_overcommit_a_node() -> None:
    s = new_scheduler()
    s.add_node(node_dict("n1", cpu="1"))
    with pytest.raises(InvalidObjectError):
        s.add_pod(pod_dict("neg", cpu="-10"))
    for i in range(5):
        s.add_pod(pod_dict(f"p{i}", cpu="2"))
    assert all(r.node is None for r in s.run())


@pytest.mark.parametrize(("data", "path"), [
    (node_dict("n1", cpu="-4"), "status.capacity[cpu]"),
    ({**node_dict("n1"), "status": {"allocatable": {"memory": "-1"}}}, "status.allocatable[memory]"),
    (node_dict("Node_1"), "metadata.name"),
    ({"kind": "Node", "metadata": {}}, "metadata.name"),
])
def test_invalid_node_is_rejected(data: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidObjectError) as exc:
        Node.from_dict(data)
    assert exc.value.field == path


def test_node_from_a_pod_is_a_wrong_kind_error() -> None:
    with pytest.raises(InvalidObjectError) as exc:
        Node.from_dict(pod_dict("p"))
    assert exc.value.field == "kind" and '"Node"' in exc.value.problem
    with pytest.raises(InvalidObjectError):
        Pod.from_dict(node_dict("n"))


def test_missing_namespace_defaults_to_default_as_kubectl() -> None:
    p = Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert p.metadata.namespace == "default" and p.key == "default/p"


def test_go_test_tables_can_skip_validation() -> None:
    n = Node.from_dict({"metadata": {"name": "A"}}, validate=False)
    assert n.metadata.name == "A"


def test_unquoted_yaml_timestamp_is_a_timestamp() -> None:
    [p] = load_objects(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
        "  creationTimestamp: 2025-09-01T06:00:00Z\nspec:\n  containers: [{name: c}]\n"
    )
    assert p.metadata.creation_timestamp.isoformat() == "2025-09-01T06:00:00+00:00"


@pytest.mark.parametrize("raw", [" 1", "1 ", "\t2Gi\n"])
def test_quantity_with_surrounding_spaces_parses_as_go_unmarshal_json(raw: str) -> None:
    n = Node.from_dict(node_dict("n1", cpu=raw))
    assert str(n.status.allocatable["cpu"]) == raw.strip()


def test_deep_nesting_is_a_typed_error_in_the_api_and_the_cli(tmp_path: Path) -> None:
    depth = 20_000
    text = '{"kind": "List", "items": [' + "[" * depth + "]" * depth + "]}"
    (tmp_path / "deep.json").write_text(text)
    err = io.StringIO()
    assert simulate_main([str(tmp_path)], io.StringIO(), err) == 2
    assert "nested too deeply" in err.getvalue() or "InvalidObjectError" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    for doc in ("kind: List\nitems: " + "[" * depth + "]" * depth,
                '{"kind": "List", "items": ' + "[" * depth + "]" * depth + "}",
                '{"kind": "Pod", "metadata": ' + '{"a": ' * depth + "1" + "}" * depth + "}"):
        with pytest.raises(InvalidObjectError):  # typed, never RecursionError
            load_objects(doc)
    scenario = tmp_path / "deep-scenario.json"
    scenario.write_text('{"name": "x", "nodes": ' + "[" * depth + "]" * depth + "}")
    err = io.StringIO()
    assert simulate_main([str(scenario)], io.StringIO(), err) == 2
    assert "Traceback" not in err.getvalue()


def test_non_utf8_file_in_a_folder_is_a_typed_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text(json.dumps(node_dict("n1")))
    (tmp_path / "bad.yaml").write_bytes(b"kind: Pod\nmetadata: {name: \xff\xfe}\n")
    err = io.StringIO()
    assert simulate_main([str(tmp_path)], io.StringIO(), err) == 2
    assert "bad.yaml" in err.getvalue() and "not UTF-8" in err.getvalue()


def test_pod_built_in_code_without_namespace_is_rejected_by_add_pod() -> None:
    import attrs

    p = Pod.from_dict(pod_dict("p"))
    bare = attrs.evolve(p, metadata=attrs.evolve(p.metadata, namespace=""))
    s = new_scheduler()
    with pytest.raises(InvalidObjectError) as exc:
        s.add_pod(bare)
    assert exc.value.field == "metadata.namespace"
    assert s.pending_pods() == []


_BAD_TERM = {"labelSelector": {"matchLabels": {"app": "not valid!"}},
             "topologyKey": "kubernetes.io/hostname"}
_VALUE_MSG = (
    'values[0][app]: Invalid value: "not valid!": a valid label must be an empty string or '
    "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_interpodaffinity_rejects_an_accepted_pod_with_an_invalid_term_at_prefilter() -> None:
    data = _pod(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_BAD_TERM]}})
    p = Pod.from_dict(data, validate=False)  # accepted (not through the API server)
    s = new_scheduler()
    s.add_node(node_dict("n1"))
    s.add_pod(p)
    [r] = s.run()
    assert r.node is None
    # PreFilter's UnschedulableAndUnresolvable status, verbatim (PostFilter text follows)
    assert r.message.startswith(
        "0/1 nodes are available: parsing pod: requiredAntiAffinityTerms: " + _VALUE_MSG + ". "
    )


def test_interpodaffinity_pre_score_errors_on_an_invalid_preferred_term() -> None:
    from kschedlib.framework.cycle_state import CycleState
    from kschedlib.framework.status import Code

    data = _pod(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": _BAD_TERM}]}})
    p = Pod.from_dict(data, validate=False)
    s = new_scheduler()
    s.add_node(node_dict("n1"))
    s.cache.update_snapshot(s.snapshot)
    fwk = next(iter(s.frameworks.values()))
    plugin = fwk.plugins["InterPodAffinity"]
    _, st = plugin.pre_filter(CycleState(), p, s.snapshot.list())
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.message() == "parsing pod: preferredAffinityTerms: " + _VALUE_MSG
    st = plugin.pre_score(CycleState(), p, s.snapshot.list())
    assert st is not None and st.code == Code.Error
    assert st.message() == "failed to parse pod: preferredAffinityTerms: " + _VALUE_MSG


def test_other_namespaced_objects_default_their_namespace_and_need_a_name() -> None:
    from kschedlib.api.storage import PersistentVolume, PersistentVolumeClaim

    pvc = PersistentVolumeClaim.from_dict({"metadata": {"name": "data"}})
    assert pvc.key == "default/data"
    pv = PersistentVolume.from_dict({"metadata": {"name": "pv1"}})
    assert pv.key == "pv1"  # cluster-scoped: no namespace
    with pytest.raises(InvalidObjectError) as exc:
        PersistentVolumeClaim.from_dict({"metadata": {"namespace": "team"}})
    assert exc.value.field == "metadata.name"
