"""NodeTree: zone keys (utilnode.GetZoneKey) and round-robin listing across zones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.api.node import Node
from kschedlib.backend.cache import NodeTree, get_zone_key
from kschedlib.errors import CacheError

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def node(name: str, **labels: str) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels}})


def zoned(name: str, zone: str, region: str = "r") -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": {REGION: region, ZONE: zone}}})


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        ({}, ""),
        ({"kubernetes.io/hostname": "x"}, ""),
        ({REGION: "r1", ZONE: "z1"}, "r1:\x00:z1"),
        ({ZONE: "z1"}, ":\x00:z1"),
        ({REGION: "r1"}, "r1:\x00:"),
        ({REGION: "", ZONE: ""}, ""),
        # The deprecated beta labels win over the GA ones when present.
        ({BETA_REGION: "br", BETA_ZONE: "bz", REGION: "r1", ZONE: "z1"}, "br:\x00:bz"),
        ({BETA_ZONE: "bz", REGION: "r1", ZONE: "z1"}, "r1:\x00:bz"),
        ({BETA_REGION: "br", ZONE: "z1"}, "br:\x00:z1"),
        # A present but empty beta label still shadows the GA label.
        ({BETA_ZONE: "", ZONE: "z1", REGION: "r1"}, "r1:\x00:"),
        ({BETA_ZONE: "", BETA_REGION: "", ZONE: "z1", REGION: "r1"}, ""),
    ],
)
def test_get_zone_key(labels: dict[str, str], want: str) -> None:
    assert get_zone_key(node("n", **labels)) == want


def test_list_round_robin_across_zones_in_insertion_order() -> None:
    tree = NodeTree()
    for n in (
        zoned("a1", "A"),
        zoned("b1", "B"),
        zoned("a2", "A"),
        zoned("b2", "B"),
        zoned("c1", "C"),
        zoned("b3", "B"),
    ):
        tree.add_node(n)
    assert tree.list() == ["a1", "b1", "c1", "a2", "b2", "b3"]
    assert tree.num_nodes == 6
    assert tree.zones == ["r:\x00:A", "r:\x00:B", "r:\x00:C"]


def test_list_single_zone_and_empty() -> None:
    assert NodeTree().list() == []
    tree = NodeTree([node("x"), node("y"), node("z")])
    assert tree.list() == ["x", "y", "z"]


def test_add_existing_node_is_a_noop() -> None:
    tree = NodeTree([zoned("a1", "A"), zoned("a2", "A")])
    tree.add_node(zoned("a1", "A"))
    assert tree.list() == ["a1", "a2"]
    assert tree.num_nodes == 2


def test_remove_node_and_empty_zone_disappears() -> None:
    tree = NodeTree([zoned("a1", "A"), zoned("b1", "B"), zoned("a2", "A"), zoned("c1", "C")])
    tree.remove_node(zoned("b1", "B"))
    assert tree.list() == ["a1", "c1", "a2"]
    assert tree.zones == ["r:\x00:A", "r:\x00:C"]
    # A zone that reappears goes to the end of the zone order.
    tree.add_node(zoned("b9", "B"))
    assert tree.list() == ["a1", "c1", "b9", "a2"]
    assert tree.num_nodes == 4


def test_remove_unknown_node_raises_and_changes_nothing() -> None:
    tree = NodeTree([zoned("a1", "A")])
    with pytest.raises(CacheError, match='node "zz" was not found'):
        tree.remove_node(zoned("zz", "A"))
    assert tree.list() == ["a1"]
    assert tree.num_nodes == 1


def test_remove_uses_stored_zone_not_the_given_labels() -> None:
    tree = NodeTree([zoned("a1", "A"), zoned("a2", "A")])
    tree.remove_node(zoned("a1", "elsewhere"))
    assert tree.list() == ["a2"]


def test_update_node_same_zone_keeps_position() -> None:
    tree = NodeTree([zoned("a1", "A"), zoned("a2", "A"), zoned("a3", "A")])
    tree.update_node(zoned("a1", "A"), zoned("a1", "A"))
    assert tree.list() == ["a1", "a2", "a3"]


def test_update_node_zone_change_moves_to_end_of_new_zone() -> None:
    tree = NodeTree([zoned("a1", "A"), zoned("b1", "B"), zoned("a2", "A"), zoned("b2", "B")])
    tree.update_node(zoned("a1", "A"), zoned("a1", "B"))
    assert tree.list() == ["a2", "b1", "b2", "a1"]
    # Moving the last node out of a zone removes that zone.
    tree.update_node(zoned("a2", "A"), zoned("a2", "C"))
    assert tree.zones == ["r:\x00:B", "r:\x00:C"]
    assert tree.list() == ["b1", "a2", "b2", "a1"]
    assert tree.num_nodes == 4


def test_update_unknown_node_adds_it() -> None:
    tree = NodeTree([zoned("a1", "A")])
    tree.update_node(None, zoned("b1", "B"))
    assert tree.list() == ["a1", "b1"]
    assert "b1" in tree
    assert tree.zone_of("b1") == "r:\x00:B"


def test_region_is_part_of_the_zone_key() -> None:
    tree = NodeTree([zoned("x1", "z", region="r1"), zoned("y1", "z", region="r2")])
    tree.add_node(zoned("x2", "z", region="r1"))
    assert tree.list() == ["x1", "y1", "x2"]


def _interleave(columns: list[list[str]]) -> list[str]:
    """The round-robin listing taken row by row (the reference list() must equal)."""
    out: list[str] = []
    depth = max((len(c) for c in columns), default=0)
    for i in range(depth):
        for c in columns:
            if i < len(c):
                out.append(c[i])
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(0, 4)), max_size=80))
def test_list_equals_the_row_by_row_interleave_after_adds_and_removes(
    ops: list[tuple[bool, int, int]],
) -> None:
    tree = NodeTree()
    zones: dict[str, list[str]] = {}  # zone -> names, in insertion order
    for add, i, z in ops:
        name = f"n{i}"
        if add:
            if tree.zone_of(name) is None:
                tree.add_node(zoned(name, f"z{z}"))
                zones.setdefault(f"z{z}", []).append(name)
        elif tree.zone_of(name) is not None:
            tree.remove_node(name)
            for zone, names in list(zones.items()):
                if name in names:
                    names.remove(name)
                    if not names:  # an emptied zone goes; coming back, it is listed last
                        del zones[zone]
        columns = list(zones.values())
        assert tree.list() == _interleave(columns)
        assert set(tree.names()) == {n for c in columns for n in c}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=40))
def test_list_equals_taking_row_i_of_every_zone(zones: list[int]) -> None:
    tree = NodeTree()
    columns: dict[str, list[str]] = {}
    for i, z in enumerate(zones):
        zone = f"z{z}"
        tree.add_node(Node.from_dict({"metadata": {"name": f"n{i}", "labels": {
            "topology.kubernetes.io/zone": zone}}}))
        columns.setdefault(zone, []).append(f"n{i}")
    want = [
        col[row] for row in range(max(map(len, columns.values()), default=0))
        for col in columns.values() if row < len(col)
    ]
    assert tree.list() == want
