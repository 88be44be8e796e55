"""VolumeZone: PV topology labels against node labels (after volume_zone_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import EventResource, QueueingHint
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import volumezone as vz
from tests.plugins.test_volumes_fixtures import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    make_handle,
    node,
    pod,
    pv,
    pvc,
    storage_class,
)

UNRESOLVABLE = Code.UnschedulableAndUnresolvable


def _objects(pv_labels: dict[str, str]) -> list[Any]:
    return [
        pvc("c", "imm", volume_name="vol", bound=True),
        pv("vol", sc="imm", labels=pv_labels),
        storage_class("wffc"),
        storage_class("imm", mode="Immediate"),
    ]


def _filter(pv_labels: dict[str, str], node_labels: dict[str, str]) -> Status | None:
    n = node("n1", node_labels)
    h = make_handle([n], objects=_objects(pv_labels))
    plugin = vz.new(None, h)
    cs = CycleState()
    p = pod("p", "c")
    _, st = plugin.pre_filter(cs, p, [])
    if st is not None and st.is_skip():
        return None
    assert st is None
    return plugin.filter(cs, p, NodeInfo(n))


FILTER_CASES = [
    ("same zone", {ZONE: "us-a"}, {ZONE: "us-a"}, True),
    ("other zone", {ZONE: "us-a"}, {ZONE: "us-b"}, False),
    ("node without topology labels", {ZONE: "us-a"}, {"other": "x"}, True),
    ("node with only a region", {ZONE: "us-a"}, {REGION: "us"}, False),
    ("multi-zone label", {ZONE: "us-a__us-b"}, {ZONE: "us-b"}, True),
    ("beta pv label, GA node label", {BETA_ZONE: "us-a"}, {ZONE: "us-a"}, True),
    ("beta pv label, other GA zone", {BETA_ZONE: "us-a"}, {ZONE: "us-b"}, False),
    ("GA pv label, beta node label", {ZONE: "us-a"}, {BETA_ZONE: "us-a"}, False),
    ("beta region", {BETA_REGION: "us"}, {REGION: "us", ZONE: "x"}, True),
    ("region mismatch", {REGION: "us", ZONE: "us-a"}, {REGION: "eu", ZONE: "us-a"}, False),
    ("unparsable label is ignored", {ZONE: "us-a__"}, {ZONE: "us-b"}, True),
    ("pv without topology labels", {"other": "x"}, {ZONE: "us-b"}, True),
]


@pytest.mark.parametrize(("name", "pv_labels", "node_labels", "fits"), FILTER_CASES)
def test_filter(
    name: str, pv_labels: dict[str, str], node_labels: dict[str, str], fits: bool
) -> None:
    got = _filter(pv_labels, node_labels)
    if fits:
        assert got is None, name
    else:
        assert got is not None and got.code == UNRESOLVABLE
        assert got.reasons == (vz.ERR_REASON_CONFLICT,) and got.plugin == vz.NAME


@pytest.mark.parametrize(
    ("claims", "objects", "message"),
    [
        (("missing",), [], 'persistentvolumeclaim "missing" not found'),
        (
            ("c",),
            [pvc("c", "imm", volume_name="gone", bound=True)],
            'persistentvolume "gone" not found',
        ),
        (("c",), [pvc("c", "imm")], "PersistentVolume had no name"),
        (("c",), [pvc("c", None)], "PersistentVolumeClaim had no pv name and storageClass name"),
        (("c",), [pvc("c", "nope")], 'storageclass.storage.k8s.io "nope" not found'),
    ],
)
def test_pre_filter_errors(claims: tuple[str, ...], objects: list[Any], message: str) -> None:
    h = make_handle([node("n1")], objects=[storage_class("imm", mode="Immediate"), *objects])
    _, st = vz.new(None, h).pre_filter(CycleState(), pod("p", *claims), [])
    assert st is not None and st.code == UNRESOLVABLE and st.reasons == (message,)


def test_pre_filter_skips_unbound_wait_for_first_consumer_and_label_free_pvs() -> None:
    h = make_handle(
        [node("n1")],
        objects=[
            storage_class("wffc"),
            pvc("w", "wffc"),
            pvc("b", "wffc", volume_name="plain", bound=True),
            pv("plain", sc="wffc"),
        ],
    )
    plugin = vz.new(None, h)
    for p in (pod("p"), pod("p", "w"), pod("p", "w", "b")):
        _, st = plugin.pre_filter(CycleState(), p, [])
        assert st is not None and st.is_skip()


def test_filter_without_pre_filter_state_computes_it() -> None:
    n = node("n1", {ZONE: "us-b"})
    h = make_handle([n], objects=_objects({ZONE: "us-a"}))
    got = vz.new(None, h).filter(CycleState(), pod("p", "c"), NodeInfo(n))
    assert got is not None and got.reasons == (vz.ERR_REASON_CONFLICT,)


def test_pv_topologies() -> None:
    volume = pv("v", labels={ZONE: "a__b", REGION: "r", "x": "y"})
    assert vz.pv_topologies(volume) == (
        vz.PVTopology("v", ZONE, frozenset({"a", "b"})),
        vz.PVTopology("v", REGION, frozenset({"r"})),
    )


def test_events_and_hints() -> None:
    h = make_handle([Node()])
    plugin = vz.new(None, h)
    assert [e.event.resource for e in plugin.events_to_register()] == [
        EventResource.StorageClass,
        EventResource.Node,
        EventResource.PersistentVolumeClaim,
        EventResource.PersistentVolume,
    ]
    p = pod("p", "c")
    q, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    assert plugin.is_schedulable_after_storage_class_added(p, None, storage_class("s")) == q
    imm = storage_class("s", mode="Immediate")
    assert plugin.is_schedulable_after_storage_class_added(p, None, imm) == skip
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("c")) == q
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("d")) == skip
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("c", ns="x")) == skip
    a, b = pv("v", labels={ZONE: "a"}), pv("v", labels={ZONE: "b"})
    assert plugin.is_schedulable_after_pv_change(p, None, a) == q
    assert plugin.is_schedulable_after_pv_change(p, a, b) == q
    assert plugin.is_schedulable_after_pv_change(p, a, pv("v", "5Gi", labels={ZONE: "a"})) == skip
