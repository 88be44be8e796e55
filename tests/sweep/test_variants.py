from __future__ import annotations

import pytest

from kschedlib.errors import InvalidObjectError
from kschedlib.sweep import (
    CapacityQuestion,
    NodeAddition,
    PodAddition,
    Variant,
    growth,
    load_variants,
    node_pools,
    nodes_down,
    parse_range,
    random_failures,
    zones_down,
)
from tests.sweep.cluster_fixtures import pod_dict, three_zone_cluster


def test_variant_round_trips_through_json_form() -> None:
    v = Variant(
        name="mixed", description="d", remove_nodes=["n1"], remove_zones=["zone-a"],
        remove_node_labels={"pool": "old"},
        add_nodes=[NodeAddition(template="n0", count=2, prefix="big")],
        pending_scale=1.5, add_pods=[PodAddition(template=pod_dict("x"), count=3)],
        capacity=CapacityQuestion(template=pod_dict("y"), limit=10),
        config={"apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration"},
    )
    assert Variant.from_dict(v.to_dict()) == v


def test_variants_file_errors_name_the_variant_and_field() -> None:
    with pytest.raises(InvalidObjectError, match=r"variants\[0\]: removeNodez: unknown field"):
        load_variants('[{"name": "a", "removeNodez": ["n1"]}]')
    with pytest.raises(InvalidObjectError, match=r"variant b: addNodes\[0\].count: expected an integer"):
        load_variants('[{"name": "b", "addNodes": [{"template": "n0", "count": "2"}]}]')
    with pytest.raises(InvalidObjectError, match="duplicate name 'a'"):
        load_variants("variants:\n- name: a\n- name: a\n")
    with pytest.raises(InvalidObjectError, match="pendingScale"):
        Variant(name="neg", pending_scale=-1.0)


def test_zones_down_gives_one_variant_per_zone() -> None:
    base = three_zone_cluster()
    vs = zones_down(base)
    assert [v.remove_zones for v in vs] == [("zone-a",), ("zone-b",), ("zone-c",)]
    assert len({v.name for v in vs}) == 3


def test_nodes_down_rejects_unknown_nodes() -> None:
    base = three_zone_cluster()
    assert [v.remove_nodes for v in nodes_down(base, ["n2"])] == [("n2",)]
    with pytest.raises(InvalidObjectError, match="'nope' is not in the cluster"):
        nodes_down(base, ["nope"])


def test_parse_range_is_inclusive_and_free_of_float_drift() -> None:
    assert parse_range("1.0:2.0:0.1") == [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0]
    assert parse_range("3") == [3.0]
    with pytest.raises(InvalidObjectError):
        parse_range("2:1:0.5")
    with pytest.raises(InvalidObjectError):
        parse_range("a:b:c")


def test_growth_with_a_pod_counts_replicas() -> None:
    vs = growth("1:2:0.5", pod=pod_dict("web"), replicas=10)
    assert [v.add_pods[0].count for v in vs] == [10, 15, 20]
    assert all(v.pending_scale == 0.0 for v in vs)


def test_random_failures_are_seeded() -> None:
    base = three_zone_cluster()
    a = random_failures(base, samples=5, nodes=2, seed=7)
    b = random_failures(base, samples=5, nodes=2, seed=7)
    c = random_failures(base, samples=5, nodes=2, seed=8)
    assert a == b
    assert a != c
    assert all(len(v.remove_nodes) == 2 for v in a)
    zoned = random_failures(base, samples=4, nodes=2, seed=1, by_zone=True)
    zone_of = {n.metadata.name: n.metadata.labels["topology.kubernetes.io/zone"] for n in base.nodes}
    assert all(len({zone_of[n] for n in v.remove_nodes}) == 1 for v in zoned)


def test_node_pools_replace_the_labelled_pool() -> None:
    vs = node_pools({"big": ("n0", 2), "small": ("n1", 5)}, replace={"pool": "default"})
    assert [v.add_nodes[0].count for v in vs] == [2, 5]
    assert all(dict(v.remove_node_labels) == {"pool": "default"} for v in vs)
