"""expand_workloads: admission defaults and the workload controllers, deterministic, and
objects of a dump left alone."""

from __future__ import annotations

from typing import Any

import yaml

from kschedlib.api import PersistentVolumeClaim, Pod, ReplicaSet, expand_workloads, load_cluster
from kschedlib.api import load_objects as load
from kschedlib.api.expand import CREATED_AFTER_ANNOTATION, random_suffix
from kschedlib.cli.simulate import simulate
from kschedlib.results import Outcome

ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")


def _nodes(*specs: tuple[str, dict[str, str], list[dict[str, str]]]) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n, **labels}},
         "spec": {"taints": taints},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for n, labels, taints in specs
    ]


def _template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}],
                     **spec}}


def _pods(objs: list[Any]) -> list[Pod]:
    return [o for o in objs if isinstance(o, Pod)]


def test_admission_defaults_for_a_bare_pod() -> None:
    (pod,) = expand_workloads(load([
        {"kind": "Pod", "metadata": {"name": "p", "labels": {"app": "a", "v": "1"}}, "spec": {
            "schedulerName": "",
            "containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
                                                      "requests": {"cpu": "1"}}}],
            "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "3"}}}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone",
                 "matchLabelKeys": ["v"], "mismatchLabelKeys": ["app", "absent"]}]}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                           "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"app": "a"}},
                                           "matchLabelKeys": ["v"]}],
        }},
    ]))
    assert pod.key == "default/p" and pod.metadata.uid
    s = pod.spec
    assert s.scheduler_name == "default-scheduler"
    assert {k: str(v) for k, v in s.containers[0].resources.requests.items()} == {
        "cpu": "1", "memory": "1Gi"}
    assert str(s.init_containers[0].resources.requests["cpu"]) == "3"
    assert (s.priority, s.priority_class_name, s.preemption_policy) == (
        0, "", "PreemptLowerPriority")
    assert [(t.key, t.operator, t.effect, t.toleration_seconds) for t in s.tolerations] == [
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300),
    ]
    assert s.affinity is not None and s.affinity.pod_anti_affinity is not None
    term = s.affinity.pod_anti_affinity.required[0]
    assert term.label_selector is not None
    assert [(r.key, r.operator, r.values) for r in term.label_selector.match_expressions] == [
        ("v", "In", ("1",)), ("app", "NotIn", ("a",))]
    tsc = s.topology_spread_constraints[0]
    assert tsc.label_selector is not None
    assert [(r.key, r.values) for r in tsc.label_selector.match_expressions] == [("v", ("1",))]


def test_priority_classes_system_and_global_default() -> None:
    pcs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "batch"}, "value": 10, "preemptionPolicy": "Never"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "normal"}, "value": 100, "globalDefault": True},
    ]

    def pod(name: str, **spec: Any) -> dict[str, Any]:
        return {"kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [], **spec}}

    out = _pods(expand_workloads(load([*pcs, pod("a", priorityClassName="batch"),
                                      pod("b"), pod("c", priorityClassName="system-node-critical"),
                                      pod("d", priority=7)])))
    got = {p.metadata.name: (p.spec.priority, p.spec.priority_class_name,
                             p.spec.preemption_policy) for p in out}
    assert got == {
        "a": (10, "batch", "Never"),
        "b": (100, "normal", "PreemptLowerPriority"),
        "c": (2000001000, "system-node-critical", "PreemptLowerPriority"),
        "d": (7, "", None),  # set by the author: left alone
    }
    import pytest

    from kschedlib.errors import InvalidObjectError

    with pytest.raises(InvalidObjectError, match="no PriorityClass with name gold was found"):
        expand_workloads(load([pod("e", priorityClassName="gold")]))


def test_tolerations_already_covering_not_ready_are_kept() -> None:
    (pod,) = expand_workloads(load([{"kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "tolerations": [{"operator": "Exists"}]}}]))
    assert len(pod.spec.tolerations) == 1


def test_dump_objects_are_left_alone() -> None:
    stored = {"kind": "Pod", "metadata": {"name": "p", "namespace": "x", "uid": "u"},
              "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "r", "namespace": "x", "resourceVersion": "5"},
          "spec": {"replicas": 3, "template": _template()}}
    objs = load([stored, rs])
    assert expand_workloads(objs) == list(objs)


def test_deployment_becomes_replicaset_and_pods() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": _template()}}
    out = expand_workloads(load([dep]))
    assert [o.kind for o in out] == ["Deployment", "ReplicaSet", "Pod", "Pod", "Pod"]
    d, rs = out[0], out[1]
    assert isinstance(rs, ReplicaSet)
    phash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{phash}" and set(phash) <= ALPHABET
    assert rs.spec.selector is not None
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": phash}
    assert rs.metadata.owner_references[0].uid == d.metadata.uid != ""
    for p in _pods(out):
        assert p.metadata.name.startswith(f"web-{phash}-")
        suffix = p.metadata.name.rsplit("-", 1)[1]
        assert len(suffix) == 5 and set(suffix) <= ALPHABET
        assert p.metadata.labels == {"app": "web", "pod-template-hash": phash}
        ref = p.metadata.owner_references[0]
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "ReplicaSet", rs.metadata.name, rs.metadata.uid, True)
        assert str(p.spec.containers[0].resources.requests["cpu"]) == "1"
    assert len({p.metadata.name for p in _pods(out)}) == 3
    # Deterministic: same names on every run.
    assert expand_workloads(load([dep])) == out
    # Another template, another hash.
    dep2 = {**dep, "spec": {**dep["spec"], "template": _template({"app": "web", "v": "2"})}}
    assert expand_workloads(load([dep2]))[1].metadata.name != rs.metadata.name


def test_replicaset_and_replication_controller() -> None:
    out = expand_workloads(load([
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
         "spec": {"replicas": 2, "template": _template()}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
         "spec": {"template": _template()}},
    ]))
    assert [o.kind for o in out] == ["ReplicaSet", "Pod", "Pod", "ReplicationController", "Pod"]
    assert out[4].metadata.owner_references[0].kind == "ReplicationController"
    assert out[4].metadata.name.startswith("rc-")


STS = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "s"},
    "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
             "template": _template({"app": "db"}, volumes=[{"name": "data", "emptyDir": {}}]),
             "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                 "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}}]},
}


def test_statefulset_ordinals_and_claims() -> None:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "fast", "annotations": {
              "storageclass.kubernetes.io/is-default-class": "true"}},
          "provisioner": "x", "volumeBindingMode": "WaitForFirstConsumer"}
    out = expand_workloads(load([sc, STS]))
    pods = _pods(out)
    claims = [o for o in out if isinstance(o, PersistentVolumeClaim)]
    assert [p.metadata.name for p in pods] == ["db-0", "db-1", "db-2"]
    assert [c.metadata.name for c in claims] == ["data-db-0", "data-db-1", "data-db-2"]
    assert all(c.spec.storage_class_name == "fast" for c in claims)
    assert claims[0].metadata.labels == {"app": "db"}
    p1 = pods[1]
    assert p1.metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert p1.metadata.labels["apps.kubernetes.io/pod-index"] == "1"
    (vol,) = p1.spec.volumes
    assert vol.persistent_volume_claim is not None
    assert vol.persistent_volume_claim.claim_name == "data-db-1"
    assert CREATED_AFTER_ANNOTATION not in pods[0].metadata.annotations
    assert p1.metadata.annotations[CREATED_AFTER_ANNOTATION] == "s/db-0"
    parallel = {**STS, "spec": {**STS["spec"], "podManagementPolicy": "Parallel",
                                "ordinals": {"start": 5}}}
    pods = _pods(expand_workloads(load([parallel])))
    assert [p.metadata.name for p in pods] == ["db-5", "db-6", "db-7"]
    assert not any(CREATED_AFTER_ANNOTATION in p.metadata.annotations for p in pods)


def test_ordered_ready_stops_at_the_first_pod_that_cannot_run() -> None:
    """OrderedReady creates db-1 only once db-0 runs: one node fits one pod, so db-2 is never
    created; with Parallel all three exist and two are unschedulable."""
    node = _nodes(("n1", {}, []))[0]
    node["status"]["allocatable"]["cpu"] = "1500m"
    sts = {**STS, "spec": {**STS["spec"], "volumeClaimTemplates": []}}
    c = load_cluster([node, sts])
    sim = simulate(None, c.initial_objects(), held=c.held_pods())
    assert sim.order == ["s/db-0", "s/db-1", "s/db-2"]
    assert sim.last["s/db-0"].outcome == Outcome.Scheduled
    assert sim.last["s/db-1"].outcome != Outcome.Scheduled
    assert "s/db-2" not in sim.last
    par = {**sts, "spec": {**sts["spec"], "podManagementPolicy": "Parallel"}}
    c = load_cluster([node, par])
    sim = simulate(None, c.initial_objects(), held=c.held_pods())
    assert sum(r.outcome == Outcome.Scheduled for r in sim.last.values()) == 1
    assert len(sim.last) == 3


def test_daemonset_one_pod_per_eligible_node() -> None:
    nodes = _nodes(
        ("a", {"pool": "x"}, []),
        ("b", {"pool": "x"}, [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]),
        ("c", {"pool": "y"}, []),
        ("d", {"pool": "x"}, [{"key": "node.kubernetes.io/unschedulable",
                               "effect": "NoSchedule"}]),
        ("e", {"pool": "x"}, [{"key": "soft", "effect": "PreferNoSchedule"}]),
    )
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"template": _template({"app": "agent"}, nodeSelector={"pool": "x"},
                                         hostNetwork=True)}}
    out = expand_workloads(load([*nodes, ds]))
    pods = _pods(out)
    pinned = []
    for p in pods:
        assert p.spec.affinity is not None and p.spec.affinity.node_affinity is not None
        req = p.spec.affinity.node_affinity.required
        assert req is not None
        (term,) = req.node_selector_terms
        (field,) = term.match_fields
        assert (field.key, field.operator) == ("metadata.name", "In")
        pinned.append(field.values[0])
        keys = {(t.key, t.effect) for t in p.spec.tolerations}
        assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
        assert ("node.kubernetes.io/network-unavailable", "NoSchedule") in keys
        assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
        assert p.metadata.name.startswith("agent-")
    assert pinned == ["a", "d", "e"]
    c = load_cluster([*nodes, ds])
    sim = simulate(None, c.initial_objects())
    placed = {k: r.node for k, r in sim.last.items()}
    assert sorted(placed.values()) == ["a", "d", "e"]
    for p in pods:
        assert placed[p.key] == p.spec.affinity.node_affinity.required.node_selector_terms[0] \
            .match_fields[0].values[0]  # type: ignore[union-attr]


def test_job_parallelism_completions_and_indexed() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "etl"},
           "spec": {"parallelism": 4, "completions": 3, "template": _template({"app": "etl"})}}
    out = expand_workloads(load([job]))
    j, pods = out[0], _pods(out)
    assert len(pods) == 3
    for p in pods:
        assert p.metadata.labels["batch.kubernetes.io/job-name"] == "etl"
        assert p.metadata.labels["controller-uid"] == j.metadata.uid
    idx = {**job, "spec": {**job["spec"], "completionMode": "Indexed", "completions": 10}}
    pods = _pods(expand_workloads(load([idx])))
    assert [p.metadata.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == [
        "0", "1", "2", "3"]
    assert [p.metadata.name.rsplit("-", 1)[0] for p in pods] == [
        "etl-0", "etl-1", "etl-2", "etl-3"]
    suspended = {**job, "spec": {**job["spec"], "suspend": True}}
    assert len(expand_workloads(load([suspended]))) == 1


def test_generated_names_avoid_existing_pods_and_are_stable() -> None:
    a = random_suffix("x")
    assert a == random_suffix("x") and len(a) == 5
    gen = {"kind": "Pod", "metadata": {"generateName": "w-"}}
    out = _pods(expand_workloads(load([gen, gen])))
    assert out[0].metadata.name != out[1].metadata.name
    assert all(p.metadata.name.startswith("w-") and len(p.metadata.name) == 7 for p in out)
    # Two generateName manifests are two pods, not one defined twice.
    assert len(load_cluster([gen, gen]).pods) == 2
    clash = {"kind": "Pod", "metadata": {"name": out[0].metadata.name}}
    again = _pods(expand_workloads(load([clash, gen])))
    assert again[0].metadata.name != again[1].metadata.name


def test_manifest_folder_deployment_is_no_longer_skipped(tmp_path: Any) -> None:
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all(_nodes(("n1", {}, []))))
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
         "spec": {"replicas": 2, "template": _template()}}))
    c = load_cluster(tmp_path)
    sim = simulate(c.config, c.initial_objects())
    assert len(sim.order) == 2
    assert all(r.outcome == Outcome.Scheduled for r in sim.last.values())


def test_resource_claims_from_templates_are_created_like_the_controller() -> None:
    gpu_node = _nodes(("g1", {}, []))[0]
    dra = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "g1-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "g1",
                  "pool": {"name": "g1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "ml"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
             "count": 1}}]}}}},
    ]
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "train", "namespace": "ml"},
           "spec": {"replicas": 2, "template": _template(
               {"app": "train"}, resourceClaims=[{"name": "gpu",
                                                  "resourceClaimTemplateName": "one-gpu"}])}}
    c = load_cluster([gpu_node, *dra, dep])
    claims = [o for o in c.objects if o.kind == "ResourceClaim"]
    pods = c.pods
    assert len(claims) == 2 and len(pods) == 2
    for pod, claim in zip(pods, claims, strict=True):
        (st,) = pod.status.resource_claim_statuses
        assert (st.name, st.resource_claim_name) == ("gpu", claim.metadata.name)
        assert claim.metadata.name.startswith(f"{pod.metadata.name}-gpu-")
        assert claim.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"
        assert claim.metadata.owner_references[0].uid == pod.metadata.uid
    sim = simulate(c.config, c.initial_objects())
    outcomes = sorted(r.outcome == Outcome.Scheduled for r in sim.last.values())
    assert outcomes == [False, True]  # one GPU for two replicas
    # Without the template the pods wait for their claim, as in a cluster.
    c = load_cluster([gpu_node, *dra[:2], dep])
    assert not [o for o in c.objects if o.kind == "ResourceClaim"]
