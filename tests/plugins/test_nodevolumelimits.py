"""NodeVolumeLimits (CSILimits): attach limits per CSI driver (after csi_test.go)."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import EventResource, QueueingHint
from kschedlib.framework.status import Code, Status
from kschedlib.plugins import nodevolumelimits as nvl
from tests.plugins.test_volumes_fixtures import (
    csi_node,
    make_handle,
    node,
    pod,
    pv,
    pvc,
    storage_class,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def _bound(i: int, driver: str = EBS) -> list[Any]:
    return [
        pvc(f"c{i}", "sc", volume_name=f"v{i}", bound=True),
        pv(f"v{i}", sc="sc", csi=(driver, f"vol-{i}")),
    ]


def _filter(
    p: Pod, running: list[Pod], objects: list[Any], node_allocatable: dict[str, str] | None = None
) -> Status | None:
    h = make_handle([node("n1", allocatable=node_allocatable)], running, objects)
    plugin = nvl.new(None, h)
    cs = CycleState()
    _, st = plugin.pre_filter(cs, p, [])
    if st is not None and st.is_skip():
        return None
    assert st is None
    return plugin.filter(cs, p, h.snapshot_shared_lister().node_infos().get("n1"))


def _exceeded(st: Status | None) -> bool:
    if st is None:
        return False
    assert st.code == Code.Unschedulable and st.plugin == nvl.NAME
    assert st.reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
    return True


def _objects(n: int, limit: int | None, driver: str = EBS) -> list[Any]:
    out: list[Any] = [csi_node("n1", {driver: limit})]
    for i in range(n):
        out.extend(_bound(i, driver))
    return out


def test_limit_reached() -> None:
    running = [pod("r0", "c0", node_name="n1"), pod("r1", "c1", node_name="n1")]
    assert _exceeded(_filter(pod("p", "c2"), running, _objects(3, 2)))
    assert not _exceeded(_filter(pod("p", "c2"), running, _objects(3, 3)))
    assert not _exceeded(_filter(pod("p", "c2"), running, _objects(3, None)))  # no limit


def test_new_pod_volumes_add_up() -> None:
    assert _exceeded(_filter(pod("p", "c0", "c1", "c2"), [], _objects(3, 2)))
    assert not _exceeded(_filter(pod("p", "c0", "c1"), [], _objects(3, 2)))


def test_volume_shared_with_a_running_pod_counts_once() -> None:
    running = [pod("r0", "c0", node_name="n1"), pod("r1", "c1", node_name="n1")]
    assert not _exceeded(_filter(pod("p", "c0"), running, _objects(2, 2)))
    # Two running pods of one claim use one attachment.
    running = [pod("r0", "c0", node_name="n1"), pod("r1", "c0", node_name="n1")]
    assert not _exceeded(_filter(pod("p", "c1"), running, _objects(2, 2)))


def test_limits_are_per_driver() -> None:
    objects = [csi_node("n1", {EBS: 1, GCE: 5}), *_bound(0, EBS), *_bound(1, GCE), *_bound(2, GCE)]
    running = [pod("r0", "c0", node_name="n1")]
    assert not _exceeded(_filter(pod("p", "c1", "c2"), running, objects))
    objects2 = [*objects, *_bound(3, EBS)]
    assert _exceeded(_filter(pod("p", "c3"), running, objects2))


def test_unbound_claim_counts_under_its_class_provisioner() -> None:
    objects = [csi_node("n1", {EBS: 1}), storage_class("sc", EBS), *_bound(0), pvc("new", "sc")]
    running = [pod("r0", "c0", node_name="n1")]
    assert _exceeded(_filter(pod("p", "new"), running, objects))
    # A claim without class (or with an unknown one) isn't counted.
    objects2 = [csi_node("n1", {EBS: 1}), *_bound(0), pvc("new", None), pvc("new2", "gone")]
    assert not _exceeded(_filter(pod("p", "new", "new2"), running, objects2))


def test_in_tree_volumes_count_as_csi_only_where_a_csinode_exists() -> None:
    ebs_pv = pv("legacy", sc="sc", source={"awsElasticBlockStore": {"volumeID": "aws://z/vol-9"}})
    objects = [pvc("legacy", "sc", volume_name="legacy", bound=True), ebs_pv, *_bound(0)]
    running = [pod("r0", "c0", node_name="n1")]
    assert _exceeded(_filter(pod("p", "legacy"), running, [csi_node("n1", {EBS: 1}), *objects]))
    # Without a CSINode there is neither migration nor limit.
    assert not _exceeded(_filter(pod("p", "legacy"), running, objects))
    # The translated handle deduplicates with a CSI PV of the same EBS volume.
    same = pv("v0", sc="sc", csi=(EBS, "vol-9"))
    objects3 = [csi_node("n1", {EBS: 1}), pvc("c0", "sc", volume_name="v0", bound=True), same]
    objects3 += [pvc("legacy", "sc", volume_name="legacy", bound=True), ebs_pv]
    assert not _exceeded(_filter(pod("p", "legacy"), running, objects3))


def test_inline_in_tree_volume_counts() -> None:
    inline = {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}
    p = pod("p", volumes=[inline])
    running = [pod("r0", "c0", node_name="n1")]
    objects = [csi_node("n1", {GCE: 1}), *_bound(0, GCE)]
    assert _exceeded(_filter(p, running, objects))
    assert not _exceeded(_filter(p, [pod("r0", volumes=[inline], node_name="n1")], objects))


def test_node_allocatable_attach_limit() -> None:
    key = nvl.csi_attach_limit_key(EBS)
    assert key == "attachable-volumes-csi-ebs.csi.aws.com"
    running = [pod("r0", "c0", node_name="n1")]
    objects = [*_bound(0), *_bound(1)]
    assert _exceeded(_filter(pod("p", "c1"), running, objects, {key: "1"}))
    # A CSINode count overrides the node's allocatable.
    assert not _exceeded(
        _filter(pod("p", "c1"), running, [csi_node("n1", {EBS: 2}), *objects], {key: "1"})
    )


def test_long_driver_names_are_hashed() -> None:
    driver = "a-very-long-csi-driver-name.storage.example.com"
    key = nvl.csi_attach_limit_key(driver)
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16
    assert key.startswith("attachable-volumes-csi-" + driver[:23])


def test_missing_claims() -> None:
    st = _filter(pod("p", "nope"), [], [csi_node("n1", {EBS: 1})])
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ('looking up PVC default/nope: persistentvolumeclaim "nope" not found',)
    # A running pod's missing claim is not counted.
    running = [pod("r0", "gone", node_name="n1")]
    assert not _exceeded(_filter(pod("p", "c0"), running, _objects(1, 1)))


def test_pre_filter_skips_pods_without_attachable_volumes() -> None:
    h = make_handle([node("n1")])
    plugin = nvl.new(None, h)
    for p in (pod("p"), pod("p", volumes=[{"name": "e", "emptyDir": {}}])):
        _, st = plugin.pre_filter(CycleState(), p, [])
        assert st is not None and st.is_skip()
    _, st = plugin.pre_filter(CycleState(), pod("p", volumes=[{"name": "e", "ephemeral": {}}]), [])
    assert st is None


def test_events_and_hints() -> None:
    plugin = nvl.new(None, make_handle([node("n1")]))
    assert [e.event.resource for e in plugin.events_to_register()] == [
        EventResource.CSINode,
        EventResource.CSINode,
        EventResource.AssignedPod,
        EventResource.PersistentVolumeClaim,
        EventResource.VolumeAttachment,
    ]
    p = pod("p", "c")
    q, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    old = csi_node("n1", {EBS: 2})
    assert plugin.is_schedulable_after_csi_node_updated(p, old, csi_node("n1", {EBS: 3})) == q
    assert plugin.is_schedulable_after_csi_node_updated(p, old, csi_node("n1", {EBS: 1})) == skip
    both = csi_node("n1", {EBS: 2, GCE: 1})
    assert plugin.is_schedulable_after_csi_node_updated(p, old, both) == q
    assert plugin.is_schedulable_after_pod_deleted(p, pod("r", "x", node_name="n1"), None) == q
    assert plugin.is_schedulable_after_pod_deleted(p, pod("r", node_name="n1"), None) == skip
    assert plugin.is_schedulable_after_pod_deleted(p, pod("r", "x"), None) == skip
    assert plugin.is_schedulable_after_pvc_added(p, None, pvc("c")) == q
    assert plugin.is_schedulable_after_pvc_added(p, None, pvc("d")) == skip
