"""VolumeRestrictions: inline disk conflicts and ReadWriteOncePod (after
volume_restrictions_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import EventResource, QueueingHint
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins import volumerestrictions as vr
from tests.plugins.test_volumes_fixtures import make_handle, node, pod, pvc


def _disk_pod(name: str, kind: str, src: dict[str, Any], node_name: str = "") -> Pod:
    return pod(name, node_name=node_name, volumes=[{"name": "d", kind: src}])


def gce(pd: str, ro: bool = False) -> tuple[str, dict[str, Any]]:
    return "gcePersistentDisk", {"pdName": pd, "readOnly": ro}


def ebs(vol: str, ro: bool = False) -> tuple[str, dict[str, Any]]:
    return "awsElasticBlockStore", {"volumeID": vol, "readOnly": ro}


def rbd(
    mons: list[str], image: str, ro: bool = False, pool: str | None = None
) -> tuple[str, dict[str, Any]]:
    src: dict[str, Any] = {"monitors": mons, "image": image, "readOnly": ro}
    if pool is not None:
        src["pool"] = pool
    return "rbd", src


def iscsi(iqn: str, ro: bool = False) -> tuple[str, dict[str, Any]]:
    return "iscsi", {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "lun": 0, "readOnly": ro}


CONFLICT_CASES = [
    ("gce same disk", gce("foo"), gce("foo"), True),
    ("gce other disk", gce("foo"), gce("bar"), False),
    ("gce both read-only", gce("foo", True), gce("foo", True), False),
    ("gce one read-only", gce("foo", True), gce("foo"), True),
    ("ebs same volume", ebs("foo"), ebs("foo"), True),
    ("ebs same volume read-only", ebs("foo", True), ebs("foo", True), True),
    ("ebs other volume", ebs("foo"), ebs("bar"), False),
    ("rbd shared monitor", rbd(["a", "b"], "img"), rbd(["b", "c"], "img"), True),
    ("rbd disjoint monitors", rbd(["a"], "img"), rbd(["c"], "img"), False),
    ("rbd other image", rbd(["a"], "img"), rbd(["a"], "img2"), False),
    ("rbd default pool", rbd(["a"], "img", pool="rbd"), rbd(["a"], "img"), True),
    ("rbd other pool", rbd(["a"], "img", pool="p1"), rbd(["a"], "img"), False),
    ("rbd both read-only", rbd(["a"], "img", True), rbd(["a"], "img", True), False),
    ("iscsi same iqn", iscsi("iqn.a"), iscsi("iqn.a"), True),
    ("iscsi both read-only", iscsi("iqn.a", True), iscsi("iqn.a", True), False),
    ("iscsi other iqn", iscsi("iqn.a"), iscsi("iqn.b"), False),
    ("different kinds", gce("foo"), ebs("foo"), False),
]


@pytest.mark.parametrize(("name", "new", "existing", "conflict"), CONFLICT_CASES)
def test_disk_conflicts(
    name: str, new: tuple[str, dict[str, Any]], existing: tuple[str, dict[str, Any]], conflict: bool
) -> None:
    running = _disk_pod("old", *existing, node_name="n1")
    h = make_handle([node("n1"), node("n2")], [running])
    plugin = vr.new(None, h)
    p = _disk_pod("new", *new)
    cs = CycleState()
    _, st = plugin.pre_filter(cs, p, h.snapshot_shared_lister().node_infos().list())
    assert st is None  # inline disks always need the Filter
    lister = h.snapshot_shared_lister().node_infos()
    got = plugin.filter(cs, p, lister.get("n1"))
    if conflict:
        assert got is not None and got.code == Code.Unschedulable
        assert got.reasons == (vr.ERR_REASON_DISK_CONFLICT,)
    else:
        assert got is None, name
    assert plugin.filter(cs, p, lister.get("n2")) is None


def _rwop_setup(*running: Pod) -> tuple[vr.VolumeRestrictions, Any]:
    objects = [
        pvc("single", "sc", modes=("ReadWriteOncePod",)),
        pvc("shared", "sc", modes=("ReadWriteMany",)),
    ]
    h = make_handle([node("n1"), node("n2")], list(running), objects)
    return vr.new(None, h), h


def test_pre_filter_skips_without_disks_or_conflicts() -> None:
    plugin, h = _rwop_setup()
    for p in (pod("p"), pod("p", "shared"), pod("p", "single")):
        _, st = plugin.pre_filter(CycleState(), p, [])
        assert st is not None and st.is_skip()


def test_pre_filter_missing_claim() -> None:
    plugin, h = _rwop_setup()
    _, st = plugin.pre_filter(CycleState(), pod("p", "nope"), [])
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ('persistentvolumeclaim "nope" not found',)
    assert st.plugin == vr.NAME


def test_read_write_once_pod_in_use_fails_every_node_and_preemption_can_free_it() -> None:
    holder = pod("holder", "single", node_name="n1")
    plugin, h = _rwop_setup(holder)
    p = pod("p", "single")
    cs = CycleState()
    _, st = plugin.pre_filter(cs, p, [])
    assert st is None
    state = cs.read(vr.PRE_FILTER_STATE_KEY)
    assert state.conflicting_pvc_ref_count == 1
    lister = h.snapshot_shared_lister().node_infos()
    for name in ("n1", "n2"):
        got = plugin.filter(cs, p, lister.get(name))
        assert got is not None and got.code == Code.Unschedulable
        assert got.reasons == (vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)
    # Preemption simulates removing the holder on a cloned state.
    clone = cs.clone()
    ext = plugin.pre_filter_extensions()
    assert ext.remove_pod(clone, p, PodInfo.of(holder), lister.get("n1")) is None
    assert plugin.filter(clone, p, lister.get("n1")) is None
    assert plugin.filter(cs, p, lister.get("n1")) is not None  # the original is untouched
    assert ext.add_pod(clone, p, PodInfo.of(holder), lister.get("n1")) is None
    assert plugin.filter(clone, p, lister.get("n1")) is not None


def test_read_write_once_pod_conflicts_match_claim_names() -> None:
    state = vr.PreFilterState(frozenset({"single"}), 0)
    assert state.conflicts_of(pod("x", "single", "single", "other")) == 2
    assert state.conflicts_of(pod("x", "other")) == 0


def test_extensions_need_the_pre_filter_state() -> None:
    plugin, h = _rwop_setup()
    ni = NodeInfo(node("n1"))
    st = plugin.pre_filter_extensions().add_pod(CycleState(), pod("p"), PodInfo.of(pod("q")), ni)
    assert st is not None and st.code == Code.Error


def test_events_and_hints() -> None:
    plugin, _ = _rwop_setup()
    events = [(e.event.resource, e.event.action_type) for e in plugin.events_to_register()]
    assert [r for r, _ in events] == [
        EventResource.Pod,
        EventResource.Node,
        EventResource.PersistentVolumeClaim,
    ]
    p = pod("p", "single", volumes=[{"name": "d", "gcePersistentDisk": {"pdName": "foo"}}])
    q, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    assert plugin.is_schedulable_after_pvc_added(p, None, pvc("single")) == q
    assert plugin.is_schedulable_after_pvc_added(p, None, pvc("other")) == skip
    assert plugin.is_schedulable_after_pvc_added(p, None, pvc("single", ns="x")) == skip
    disk_holder = _disk_pod("h", *gce("foo"), node_name="n1")
    assert plugin.is_schedulable_after_pod_deleted(p, disk_holder, None) == q
    assert plugin.is_schedulable_after_pod_deleted(p, pod("h", "single", node_name="n1"), None) == q
    assert (
        plugin.is_schedulable_after_pod_deleted(p, pod("h", "other", node_name="n1"), None) == skip
    )
    other_ns = pod("h", "single", ns="x", node_name="n1")
    assert plugin.is_schedulable_after_pod_deleted(p, other_ns, None) == skip
