"""Decoding Kubernetes objects: kubectl JSON in, typed models out, errors that name the field."""

from __future__ import annotations

import datetime as dt

import pytest

from kschedlib.api import Node, Pod, load_objects
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.errors import InvalidObjectError

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "default",
        "uid": "u1",
        "labels": {"app": "web"},
        "creationTimestamp": "2025-01-01T00:00:00Z",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "x", "controller": True}],
    },
    "spec": {
        "schedulerName": "default-scheduler",
        "priority": 100,
        "containers": [
            {
                "name": "c",
                "image": "nginx:1.25",
                "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}],
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
            }
        ],
        "initContainers": [{"name": "side", "restartPolicy": "Always"}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        },
        "unknownField": {"ignored": True},
    },
    "status": {"phase": "Pending", "startTime": "2025-01-01T00:00:01.5+02:00"},
}


def test_pod_decodes_nested_fields() -> None:
    pod = Pod.from_dict(POD)
    assert pod.key == "default/web-1"
    assert pod.uid == "u1"
    c = pod.spec.containers[0]
    assert c.resources.requests["cpu"].milli_value() == 500
    assert c.ports[0].host_ip == "10.0.0.1" and c.ports[0].protocol == "TCP"
    assert pod.spec.init_containers[0].restart_policy == "Always"
    assert pod.spec.tolerations[0].operator == "Exists"
    req = pod.spec.affinity.node_affinity.required  # type: ignore[union-attr]
    assert req is not None and req.node_selector_terms[0].match_expressions[0].values == ("a",)
    assert pod.metadata.owner_references[0].controller is True
    assert pod.status.start_time == dt.datetime(
        2024, 12, 31, 22, 0, 1, 500000, tzinfo=dt.timezone.utc
    )


def test_pod_round_trips_through_to_dict() -> None:
    pod = Pod.from_dict(POD)
    again = Pod.from_dict(pod.to_dict())
    assert again == pod
    d = pod.to_dict()
    assert d["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert d["spec"]["containers"][0]["ports"][0]["hostIP"] == "10.0.0.1"
    assert "unknownField" not in d["spec"]


def test_uid_falls_back_to_key() -> None:
    pod = Pod.from_dict({"metadata": {"name": "a", "namespace": "ns"}})
    assert pod.uid == "ns/a"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="1.5.0"),
            'pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"',
        ),
        (
            lambda p: p["spec"].update(priority="high"),
            "pod default/web-1: spec.priority: expected integer, got string",
        ),
        (
            lambda p: p["spec"]["tolerations"][0].update(operator="Maybe"),
            'pod default/web-1: spec.tolerations[0].operator: Unsupported value: "Maybe"',
        ),
        (
            lambda p: p["spec"].update(containers={"name": "c"}),
            "pod default/web-1: spec.containers: expected array, got object",
        ),
        (
            lambda p: p["status"].update(startTime="yesterday"),
            'pod default/web-1: status.startTime: invalid timestamp "yesterday"',
        ),
    ],
)
def test_invalid_fields_name_object_and_path(mutate: object, message: str) -> None:
    import copy

    bad = copy.deepcopy(POD)
    mutate(bad)  # type: ignore[operator]
    with pytest.raises(InvalidObjectError) as exc:
        Pod.from_dict(bad)
    assert str(exc.value).startswith(message)


def test_label_selector_requirement_validation() -> None:
    with pytest.raises(InvalidObjectError, match=r"matchExpressions\[0\]\.values: must be specified"):
        PodDisruptionBudget.from_dict(
            {
                "metadata": {"name": "pdb", "namespace": "d"},
                "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
            }
        )


def test_node_taints_and_allocatable() -> None:
    node = Node.from_dict(
        {
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "spec": {"taints": [{"key": "a", "value": "b", "effect": "NoSchedule"}, {"key": "c", "effect": "NoExecute"}]},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )
    assert [str(t) for t in node.spec.taints] == ["a=b:NoSchedule", "c:NoExecute"]
    assert node.status.allocatable["memory"].value() == 8 * 1024**3


def test_load_objects_handles_lists_and_multi_documents() -> None:
    text = """
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: n1}
- kind: Node
  metadata: {name: n2}
---
apiVersion: v1
kind: PodList
items:
- metadata: {name: p, namespace: default}
---
kind: ConfigMap
metadata: {name: other}
"""
    objs = load_objects(text)
    assert [type(o).__name__ for o in objs] == ["Node", "Node", "Pod"]
    assert objs[2].key == "default/p"
    assert objs.ignored_summary() == "ignored: 1 ConfigMap"
    assert objs.ignored_objects[0]["metadata"]["name"] == "other"


def test_load_objects_rejects_bad_yaml() -> None:
    with pytest.raises(InvalidObjectError, match="invalid YAML"):
        load_objects("a: [unclosed")
