"""kschedlib.testing builders: each method lands in the right Kubernetes field."""

from __future__ import annotations

from kschedlib import Pod
from kschedlib.api.quantity import parse_quantity
from kschedlib.testing import make_node, make_pod


def test_pod_builder_covers_the_scheduling_fields() -> None:
    pod = (
        make_pod("web", "shop")
        .label("app", "web")
        .req(cpu="500m", memory="1Gi")
        .lim(cpu="1")
        .req({"nvidia.com/gpu": 1})
        .priority(100)
        .toleration("gpu", "true", "NoSchedule")
        .toleration("dedicated")
        .node_selector({"disk": "ssd"})
        .node_affinity_in("topology.kubernetes.io/zone", ["z1", "z2"])
        .preferred_node_affinity(5, "arch", ["arm64"])
        .pod_affinity("kubernetes.io/hostname", {"app": "cache"})
        .pod_anti_affinity("topology.kubernetes.io/zone", {"app": "web"}, weight=10)
        .spread_constraint(1, "topology.kubernetes.io/zone", labels={"app": "web"}, min_domains=2)
        .host_port(8080)
        .pvc("data")
        .claim("gpu", template="gpu-template")
        .scheduling_gates("wait")
        .obj()
    )
    assert isinstance(pod, Pod) and pod.key == "shop/web"
    c = pod.spec.containers[0]
    assert c.resources.requests == {
        "cpu": parse_quantity("500m"), "memory": parse_quantity("1Gi"),
        "nvidia.com/gpu": parse_quantity("1"),
    }
    assert c.resources.limits == {"cpu": parse_quantity("1")}
    assert c.ports[0].host_port == 8080 and c.ports[0].protocol == "TCP"
    assert pod.spec.priority == 100
    t1, t2 = pod.spec.tolerations
    assert (t1.key, t1.operator, t1.value, t1.effect) == ("gpu", "Equal", "true", "NoSchedule")
    assert (t2.key, t2.operator) == ("dedicated", "Exists")
    aff = pod.spec.affinity
    assert aff is not None and aff.node_affinity is not None and aff.pod_affinity is not None
    req = aff.node_affinity.required
    assert req is not None and req.node_selector_terms[0].match_expressions[0].values == ("z1", "z2")
    assert aff.node_affinity.preferred[0].weight == 5
    assert aff.pod_affinity.required[0].topology_key == "kubernetes.io/hostname"
    assert aff.pod_anti_affinity is not None and aff.pod_anti_affinity.preferred[0].weight == 10
    tsc = pod.spec.topology_spread_constraints[0]
    assert (tsc.max_skew, tsc.when_unsatisfiable, tsc.min_domains) == (1, "DoNotSchedule", 2)
    assert pod.spec.volumes[0].persistent_volume_claim is not None
    assert pod.spec.resource_claims[0].resource_claim_template_name == "gpu-template"
    assert [g.name for g in pod.spec.scheduling_gates] == ["wait"]
    # The builder's JSON is the manifest the pod decodes from.
    assert Pod.from_dict(make_pod("web", "shop").req(cpu="1").to_dict()).key == "shop/web"


def test_node_builder() -> None:
    node = (
        make_node("n1")
        .capacity(cpu="4", memory="8Gi", pods=20)
        .allocatable(cpu="3500m")
        .zone("z1", "r1")
        .taint("gpu", "true")
        .label("disk", "ssd")
        .image("nginx:1.25", 50_000_000)
        .obj()
    )
    assert node.labels == {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z1",
                           "topology.kubernetes.io/region": "r1", "disk": "ssd"}
    assert node.status.capacity["cpu"] == parse_quantity("4")
    assert node.status.allocatable["cpu"] == parse_quantity("3500m")
    assert node.status.allocatable["pods"] == parse_quantity("20")
    assert str(node.spec.taints[0]) == "gpu=true:NoSchedule"
    assert make_node("n2").unschedulable().obj().spec.unschedulable is True


def test_builders_validate_like_manifests() -> None:
    import pytest

    from kschedlib.errors import InvalidObjectError

    with pytest.raises(InvalidObjectError, match="effect"):
        make_pod("p").toleration("k", effect="Sometimes").obj()
