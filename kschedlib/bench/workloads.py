"""Synthetic workloads on a scenario's nodes, for what the shared workloads do not cover."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.scenario import Scenario


def anti_affinity_spread_pods(apps: int, replicas: int) -> list[Pod]:
    """``apps`` deployments of ``replicas`` pods, each with required hostname anti-affinity to
    its own app and a zone topology spread constraint (maxSkew 1, DoNotSchedule)."""
    pods: list[Pod] = []
    for a in range(apps):
        app = f"app-{a:04d}"
        selector = {"matchLabels": {"app": app}}
        for r in range(replicas):
            spec: dict[str, Any] = {
                "containers": [{"name": "c", "image": "registry.example.com/app:1",
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}},
                "topologySpreadConstraints": [{
                    "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}],
            }
            pods.append(Pod.from_dict({
                "metadata": {"name": f"{app}-{r}", "namespace": "default",
                             "uid": f"uid-{app}-{r}", "labels": {"app": app}},
                "spec": spec,
            }))
    return pods


def with_pending(scenario: Scenario, pods: list[Pod]) -> Scenario:
    """The scenario's cluster with these pods to schedule instead of its own."""
    from attrs import evolve

    return evolve(scenario, name=f"{scenario.name}+spread", pending=tuple(pods))


DRA_DRIVER = "test-driver.cdi.k8s.io"


def dra_structured_scenario(
    nodes: int = 500, devices_per_node: int = 10, init_pods: int = 2500, measure_pods: int = 2500
) -> Scenario:
    """scheduler_perf's SchedulingWithResourceClaimTemplateStructured (5000pods_500nodes):
    nodes publishing one ResourceSlice each with ``devices_per_node`` devices of one driver,
    a DeviceClass selecting that driver by CEL, pods with one claim from a template for one
    device. The init pods are running with their claims allocated; the measured pods (with
    their generated claims) are pending."""
    from kschedlib.api.node import Namespace, Node
    from kschedlib.api.resource_v1 import (
        DeviceClass,
        ResourceClaim,
        ResourceClaimTemplate,
        ResourceSlice,
    )

    ns = "dra"
    node_objs = [
        Node.from_dict({
            "metadata": {"name": f"scheduler-perf-{i:05d}",
                         "labels": {"kubernetes.io/hostname": f"scheduler-perf-{i:05d}"}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        })
        for i in range(nodes)
    ]
    slices = [
        ResourceSlice.from_dict({
            "metadata": {"name": f"{n.metadata.name}-{DRA_DRIVER}"},
            "spec": {"driver": DRA_DRIVER, "nodeName": n.metadata.name,
                     "pool": {"name": n.metadata.name, "generation": 1,
                              "resourceSliceCount": 1},
                     "devices": [{"name": f"device-{d}", "attributes": {
                         "model": {"string": "gpu-1"}, "index": {"int": d}},
                         "capacity": {"memory": {"value": "16Gi"}}}
                         for d in range(devices_per_node)]},
        })
        for n in node_objs
    ]
    dclass = DeviceClass.from_dict({
        "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
    })
    request = {"name": "req-0", "exactly": {"deviceClassName": "test-class",
                                            "allocationMode": "ExactCount", "count": 1}}
    template = ResourceClaimTemplate.from_dict({
        "metadata": {"name": "test-claim-template", "namespace": ns},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    })

    def pod_and_claim(i: int, node: str | None, device: int) -> tuple[Pod, ResourceClaim]:
        name = f"pod-{i:05d}"
        uid = f"uid-{name}"
        claim_name = f"{name}-resource-abcde"
        claim: dict[str, Any] = {
            "metadata": {"name": claim_name, "namespace": ns, "uid": f"uid-{claim_name}",
                         "annotations": {"resource.kubernetes.io/pod-claim-name": "resource"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                              "uid": uid, "controller": True}]},
            "spec": {"devices": {"requests": [request]}},
        }
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "resource"}]}}],
            "resourceClaims": [{"name": "resource",
                                "resourceClaimTemplateName": "test-claim-template"}],
        }
        if node is not None:
            spec["nodeName"] = node
            claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            claim["status"] = {
                "allocation": {
                    "devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER,
                                             "pool": node, "device": f"device-{device}"}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                },
                "reservedFor": [{"resource": "pods", "name": name, "uid": uid}],
            }
        pod = Pod.from_dict({
            "metadata": {"name": name, "namespace": ns, "uid": uid},
            "spec": spec,
            "status": {"resourceClaimStatuses": [
                {"name": "resource", "resourceClaimName": claim_name}]},
        })
        return pod, ResourceClaim.from_dict(claim)

    running: list[Pod] = []
    pending: list[Pod] = []
    claims: list[ResourceClaim] = []
    for i in range(init_pods):
        n = node_objs[i % nodes].metadata.name
        p, c = pod_and_claim(i, n, i // nodes)
        running.append(p)
        claims.append(c)
    for i in range(init_pods, init_pods + measure_pods):
        p, c = pod_and_claim(i, None, 0)
        pending.append(p)
        claims.append(c)
    namespace = Namespace.from_dict(
        {"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    return Scenario(
        name=f"dra-structured-{nodes}n",
        description="scheduler_perf SchedulingWithResourceClaimTemplateStructured",
        config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "percentageOfNodesToScore": 0},
        namespaces=(namespace,), nodes=tuple(node_objs), pods=tuple(running),
        pending=tuple(pending), device_classes=(dclass,), resource_slices=tuple(slices),
        resource_claims=tuple(claims), resource_claim_templates=(template,),
    )
