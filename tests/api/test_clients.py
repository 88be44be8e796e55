"""Objects of the Python Kubernetes clients are accepted where kschedlib takes an object, and
the snake_case trap is refused. The client packages are the test extras (installed by CI);
under CI a missing package fails the run instead of skipping."""

from __future__ import annotations

import datetime as dt
import importlib
import os
import subprocess
import sys
from types import ModuleType

import pytest

from kschedlib import FakeClock, Scheduler
from kschedlib.api import Node, Pod, as_api_dict, load_cluster, load_objects
from kschedlib.api.clients import is_client_object
from kschedlib.errors import InvalidObjectError


def need(module: str) -> ModuleType:
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} (a kschedlib test extra) not installed")


def _official_pod(k: ModuleType, name: str = "web", disk: str = "ssd") -> object:
    m = k.client
    return m.V1Pod(
        metadata=m.V1ObjectMeta(
            name=name, namespace="shop",
            creation_timestamp=dt.datetime(2025, 9, 1, 6, tzinfo=dt.timezone.utc),
            owner_references=[m.V1OwnerReference(api_version="apps/v1", kind="ReplicaSet",
                                                 name="web-1", uid="u1", controller=True)],
        ),
        spec=m.V1PodSpec(
            containers=[m.V1Container(name="c", resources=m.V1ResourceRequirements(
                requests={"cpu": "500m", "memory": "1Gi"}))],
            node_selector={"disk": disk},
            tolerations=[m.V1Toleration(key="gpu", operator="Exists", effect="NoSchedule")],
            priority_class_name="high", priority=1000,
        ),
    )


def _nodes() -> list[Node]:
    def node(name: str, disk: str) -> Node:
        return Node.from_dict({"metadata": {"name": name, "labels": {"disk": disk}},
                               "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                                          "pods": "10"}}})
    return [node("hdd-1", "hdd"), node("ssd-1", "ssd")]


def test_official_client_pod_keeps_every_field() -> None:
    k = need("kubernetes")
    v1pod = _official_pod(k)
    assert is_client_object(v1pod)
    pod = Pod.from_dict(v1pod)
    assert pod.kind == "Pod" and pod.key == "shop/web"
    assert pod.spec.node_selector == {"disk": "ssd"}
    assert pod.spec.priority == 1000 and pod.spec.priority_class_name == "high"
    assert pod.spec.tolerations[0].key == "gpu"
    assert pod.spec.containers[0].resources.requests["memory"].value() == 1 << 30
    assert pod.metadata.owner_references[0].controller is True
    assert pod.metadata.creation_timestamp == dt.datetime(2025, 9, 1, 6, tzinfo=dt.timezone.utc)
    # Same as the client's own wire form.
    wire = k.client.ApiClient().sanitize_for_serialization(v1pod)
    assert Pod.from_dict({**wire, "kind": "Pod"}) == pod


def test_the_original_trap_lands_on_the_right_node() -> None:
    """Pod.from_dict(v1pod.to_dict()) used to drop nodeSelector: the pod landed on hdd."""
    k = need("kubernetes")
    v1pod = _official_pod(k, disk="ssd")
    sched = Scheduler(clock=FakeClock(), deterministic=True)
    for n in _nodes():
        sched.add_node(n)
    sched.add_pod(Pod.from_dict(v1pod))
    (result,) = sched.run()
    assert result.node == "ssd-1"
    with pytest.raises(InvalidObjectError) as err:
        Pod.from_dict(v1pod.to_dict())
    msg = str(err.value)
    assert msg.startswith("pod shop/web: api_version: this dict uses snake_case keys")
    assert "Pod.from_dict(v1_pod)" in msg and "sanitize_for_serialization" in msg


def test_official_client_lists_and_mixed_sources() -> None:
    k = need("kubernetes")
    m = k.client
    pods = m.V1PodList(items=[_official_pod(k, "a"), _official_pod(k, "b")])
    nodes = m.V1NodeList(items=[m.V1Node(metadata=m.V1ObjectMeta(name="n"))])
    objs = load_objects(pods, nodes, [m.V1Namespace(metadata=m.V1ObjectMeta(name="shop"))])
    assert [(o.kind, o.metadata.name) for o in objs] == [
        ("Pod", "a"), ("Pod", "b"), ("Node", "n"), ("Namespace", "shop")]
    pdb = m.V1PodDisruptionBudget(metadata=m.V1ObjectMeta(name="p", namespace="shop"),
                                  spec=m.V1PodDisruptionBudgetSpec(min_available=1))
    (obj,) = load_objects(pdb)
    assert obj.kind == "PodDisruptionBudget" and obj.spec.min_available == 1
    cm = m.V1ConfigMap(metadata=m.V1ObjectMeta(name="c"))
    assert load_objects(cm).ignored_summary() == "ignored: 1 ConfigMap"


def test_snake_case_dicts_are_refused_everywhere() -> None:
    snake = {"api_version": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"node_selector": {"disk": "ssd"}, "containers": []}}
    for call in (lambda: Pod.from_dict(snake), lambda: load_objects(snake),
                 lambda: load_cluster([snake])):
        with pytest.raises(InvalidObjectError, match="snake_case"):
            call()
    # Only structural keys count: labels and nodeSelector values may contain underscores.
    ok = {"kind": "Pod", "metadata": {"name": "p", "labels": {"my_label": "x"}},
          "spec": {"nodeSelector": {"node_pool": "a"}}}
    assert Pod.from_dict(ok).spec.node_selector == {"node_pool": "a"}
    nested = {"kind": "Pod", "metadata": {"name": "p"},
              "spec": {"containers": [{"name": "c", "image_pull_policy": "Always"}]}}
    with pytest.raises(InvalidObjectError, match=r"spec.containers\[0\].image_pull_policy"):
        Pod.from_dict(nested)
    unknown_kind_snake = {"kind": "ConfigMap", "api_version": "v1", "metadata": {"name": "c"}}
    with pytest.raises(InvalidObjectError, match="snake_case"):
        load_objects(unknown_kind_snake)
    # A custom resource with snake_case spec fields is a valid object: ignored, not refused.
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"scrape_interval": "30s"}}
    assert load_objects(cr).ignored_summary() == "ignored: 1 Widget"


def test_lightkube_resources_and_models() -> None:
    need("lightkube")
    from lightkube.models.core_v1 import Container, NodeSpec, PodSpec, Taint
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import Node as LkNode
    from lightkube.resources.core_v1 import Pod as LkPod

    pod = LkPod(metadata=ObjectMeta(name="p", namespace="d"),
                spec=PodSpec(containers=[Container(name="c")], nodeSelector={"disk": "ssd"}))
    node = LkNode(metadata=ObjectMeta(name="n"),
                  spec=NodeSpec(taints=[Taint(key="k", effect="NoSchedule")]))
    p, n = load_objects([pod, node])
    assert p.spec.node_selector == {"disk": "ssd"} and str(n.spec.taints[0]) == "k:NoSchedule"
    assert Pod.from_dict(pod) == p
    from lightkube.models.core_v1 import Pod as PodModel
    from lightkube.models.core_v1 import PodList

    (q,) = load_objects(PodList(items=[PodModel(metadata=ObjectMeta(name="q"))]))
    assert q.kind == "Pod" and q.metadata.name == "q"


def test_kr8s_objects() -> None:
    need("kr8s")
    import kr8s.asyncio.objects as async_objects
    import kr8s.objects as sync_objects

    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "k", "namespace": "d"},
           "spec": {"containers": [{"name": "c"}], "nodeSelector": {"disk": "ssd"}}}
    a = async_objects.Pod(dict(raw))
    # A sync object needs an API client; a placeholder keeps it offline.
    s = sync_objects.Pod(dict(raw), api=object())
    for obj in (a, s):
        assert is_client_object(obj)
        assert Pod.from_dict(obj).spec.node_selector == {"disk": "ssd"}
        assert as_api_dict(obj) is obj.raw
    assert len(load_objects([a, s])) == 2


def test_no_client_package_is_imported_for_plain_input() -> None:
    code = (
        "import sys, kschedlib\n"
        "from kschedlib.api import load_cluster, Pod\n"
        "load_cluster([{'kind': 'Node', 'metadata': {'name': 'n'}}])\n"
        "Pod.from_dict({'kind': 'Pod', 'metadata': {'name': 'p'}})\n"
        "bad = [m for m in ('kubernetes', 'lightkube', 'kr8s', 'pydantic') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


LEGACY_CHECK = """
import datetime as dt, kubernetes
from kubernetes.client import V1Container, V1ObjectMeta, V1Pod, V1PodList, V1PodSpec
assert not hasattr(V1Pod, "model_dump"), "expected the OpenAPI-generator models"
from kschedlib.api import Pod, load_objects
p = V1Pod(metadata=V1ObjectMeta(name="a", namespace="d",
          creation_timestamp=dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)),
          spec=V1PodSpec(containers=[V1Container(name="c")], node_selector={"disk": "ssd"}))
pod = Pod.from_dict(p)
assert pod.spec.node_selector == {"disk": "ssd"}, pod
assert pod.metadata.creation_timestamp.year == 2025
assert [o.metadata.name for o in load_objects(V1PodList(items=[p, p]))] == ["a", "a"]
try:
    Pod.from_dict(p.to_dict())
except Exception as exc:
    assert "snake_case" in str(exc)
else:
    raise AssertionError("snake_case dict accepted")
print("legacy", kubernetes.__version__)
"""


def test_official_client_openapi_models_before_v36() -> None:
    """The OpenAPI-generator models (kubernetes < 36), installed by .ci/run into a separate
    folder named by KSCHEDLIB_LEGACY_KUBERNETES (they cannot share a venv with v36+)."""
    path = os.environ.get("KSCHEDLIB_LEGACY_KUBERNETES")
    if not path:
        if os.environ.get("CI"):
            raise AssertionError("CI must set KSCHEDLIB_LEGACY_KUBERNETES (see .ci/run)")
        pytest.skip("KSCHEDLIB_LEGACY_KUBERNETES not set (legacy kubernetes client folder)")
    import kschedlib

    root = os.path.dirname(os.path.dirname(kschedlib.__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([path, root])}
    out = subprocess.run([sys.executable, "-c", LEGACY_CHECK], env=env, check=True,
                         capture_output=True, text=True)
    assert out.stdout.startswith("legacy 3"), out.stdout
