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


def _dra_alpha_scenario(
    name: str, description: str, gates: dict[str, bool], nodes: int,
    slices_of: Any, classes: list[dict[str, Any]], claim_specs: list[dict[str, Any]],
) -> Scenario:
    """Nodes with the slices ``slices_of(node name)`` gives, and one pending pod per claim
    spec, each with its own (already generated) claim."""
    from kschedlib.api.node import Namespace, Node
    from kschedlib.api.resource_v1 import DeviceClass, ResourceClaim, ResourceSlice

    ns = "dra"
    node_objs = [
        Node.from_dict({
            "metadata": {"name": f"node-{i:05d}",
                         "labels": {"kubernetes.io/hostname": f"node-{i:05d}"}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
        })
        for i in range(nodes)
    ]
    slices = [ResourceSlice.from_dict(s) for n in node_objs for s in slices_of(n.metadata.name)]
    pending: list[Pod] = []
    claims: list[ResourceClaim] = []
    for i, spec in enumerate(claim_specs):
        pname, uid = f"pod-{i:05d}", f"uid-pod-{i:05d}"
        cname = f"{pname}-dev-abcde"
        claims.append(ResourceClaim.from_dict({
            "metadata": {"name": cname, "namespace": ns, "uid": f"uid-{cname}",
                         "annotations": {"resource.kubernetes.io/pod-claim-name": "dev"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pname,
                                              "uid": uid, "controller": True}]},
            "spec": spec,
        }))
        pending.append(Pod.from_dict({
            "metadata": {"name": pname, "namespace": ns, "uid": uid},
            "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "dev"}]}}],
                     "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "t"}]},
            "status": {"resourceClaimStatuses": [{"name": "dev", "resourceClaimName": cname}]},
        }))
    namespace = Namespace.from_dict(
        {"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    return Scenario(
        name=name, description=description, feature_gates=gates,
        config={"apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 0},
        namespaces=(namespace,), nodes=tuple(node_objs), pending=tuple(pending),
        device_classes=tuple(DeviceClass.from_dict(c) for c in classes),
        resource_slices=tuple(slices), resource_claims=tuple(claims),
    )


def _request(name: str, cls: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount",
                                      "count": 1, **extra}}


def dra_partitionable_scenario(nodes: int = 500, pods: int = 4000) -> Scenario:
    """DRAPartitionableDevices: per node two A100-80 GPUs offered whole and as MIG partitions
    (seven 1g.10gb, three 2g.20gb) that consume one counter set per GPU (memory 80Gi,
    slices 7, in a slice of their own); pods ask for a 1g or a 2g partition (3:1), and every
    25th for a whole GPU."""
    drv = "gpu.example.com"

    def slices_of(node: str) -> list[dict[str, Any]]:
        pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
        devices: list[dict[str, Any]] = []
        counters = []
        for g in range(2):
            cs = f"gpu-{g}-counters"
            counters.append({"name": cs, "counters": {"memory": {"value": "80Gi"},
                                                      "slices": {"value": "7"}}})
            parts = [("full", "80Gi", 7, 1)] + [("1g.10gb", "10Gi", 1, 7), ("2g.20gb", "20Gi", 2, 3)]
            for profile, mem, sl, n in parts:
                for k in range(n):
                    dname = f"gpu-{g}" if profile == "full" else f"gpu-{g}-mig-{profile}-{k}"
                    devices.append({
                        "name": dname.replace(".", "-"),
                        "attributes": {"profile": {"string": profile}, "parent": {"int": g}},
                        "capacity": {"memory": {"value": mem}},
                        "consumesCounters": [{"counterSet": cs, "counters": {
                            "memory": {"value": mem}, "slices": {"value": str(sl)}}}],
                    })
        return [
            {"metadata": {"name": f"{node}-counters"},
             "spec": {"driver": drv, "nodeName": node, "pool": pool, "sharedCounters": counters}},
            {"metadata": {"name": f"{node}-devices"},
             "spec": {"driver": drv, "nodeName": node, "pool": pool, "devices": devices}},
        ]

    classes = [
        {"metadata": {"name": f"gpu-{p}"}, "spec": {"selectors": [{"cel": {"expression":
            f'device.driver == "{drv}" && device.attributes["{drv}"].profile == "{p}"'}}]}}
        for p in ("full", "1g.10gb", "2g.20gb")
    ]
    specs = []
    for i in range(pods):
        cls = "gpu-full" if i % 25 == 24 else ("gpu-2g.20gb" if i % 4 == 3 else "gpu-1g.10gb")
        specs.append({"devices": {"requests": [_request("gpu", cls)]}})
    return _dra_alpha_scenario(
        f"dra-partitionable-{nodes}n", "MIG partitions consuming shared counters",
        {"DRAPartitionableDevices": True}, nodes, slices_of, classes, specs,
    )


def dra_consumable_scenario(nodes: int = 500, pods: int = 2000) -> Scenario:
    """DRAConsumableCapacity: per node one 100G NIC with allowMultipleAllocations (request
    policy: default 10G, 1G steps); pods ask for 10G, 20G, 25G or 40G of bandwidth, so
    several pods share each NIC until its bandwidth runs out."""
    drv = "nic.example.com"

    def slices_of(node: str) -> list[dict[str, Any]]:
        return [{"metadata": {"name": f"{node}-nic"}, "spec": {
            "driver": drv, "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "nic-0", "allowMultipleAllocations": True,
                         "attributes": {"model": {"string": "cx7"}},
                         "capacity": {"bandwidth": {"value": "100G", "requestPolicy": {
                             "default": "10G",
                             "validRange": {"min": "1G", "max": "100G", "step": "1G"}}}}}],
        }}]

    classes = [{"metadata": {"name": "vnic"}, "spec": {"selectors": [{"cel": {
        "expression": f'device.driver == "{drv}"'}}]}}]
    sizes = ["10G", "20G", "25G", "40G"]
    specs = [
        {"devices": {"requests": [_request(
            "nic", "vnic", capacity={"requests": {"bandwidth": sizes[i % 4]}})]}}
        for i in range(pods)
    ]
    return _dra_alpha_scenario(
        f"dra-consumable-{nodes}n", "NICs shared by capacity",
        {"DRAConsumableCapacity": True}, nodes, slices_of, classes, specs,
    )
