"""VolumeBinding: claim sorting, static binding, dynamic provisioning, assumptions, args,
scoring and hints (cases after volume_binding_test.go and binder_test.go)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.storage import PersistentVolume, PersistentVolumeClaim
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import EventResource, QueueingHint
from kschedlib.framework.handle import BasicHandle
from kschedlib.framework.status import Code, Status
from kschedlib.plugins import volumebinding as vb
from kschedlib.plugins.noderesources.args import UtilizationShapePoint
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.plugins.volumebinding.binder import bind_volume_to_claim
from kschedlib.plugins.volumebinding.volume_binding import build_scorer
from tests.plugins.test_volumes_fixtures import (
    ZONE,
    csi_node,
    make_handle,
    node,
    pod,
    pv,
    pvc,
    storage_class,
)

NODES = [node("n1", {ZONE: "a"}), node("n2", {ZONE: "b"}), node("n3", {ZONE: "c"})]
WFFC = storage_class("wffc", provisioner="kubernetes.io/no-provisioner")
DYN = storage_class("dyn")
IMMEDIATE = storage_class("imm", mode="Immediate")


def _setup(
    objects: list[Any], nodes: list[Node] | None = None
) -> tuple[vb.VolumeBinding, BasicHandle]:
    h = make_handle(nodes or NODES, objects=[WFFC, DYN, IMMEDIATE, *objects])
    return vb.new(None, h), h


def _run(
    plugin: vb.VolumeBinding, h: BasicHandle, p: Pod
) -> tuple[CycleState, Status | None, dict[str, Status | None]]:
    """PreFilter, then Filter on every node (empty when PreFilter did not succeed)."""
    cs = CycleState()
    _, st = plugin.pre_filter(cs, p, h.snapshot_shared_lister().node_infos().list())
    out: dict[str, Status | None] = {}
    if st is None:
        for ni in h.snapshot_shared_lister().node_infos().list():
            out[ni.name] = plugin.filter(cs, p, ni)
    return cs, st, out


def _view(st: Status | None) -> tuple[str, tuple[str, ...]] | None:
    return None if st is None else (st.code.name, st.reasons)


UNRESOLVABLE = Code.UnschedulableAndUnresolvable.name


def _assumed_pv(plugin: vb.VolumeBinding, name: str) -> PersistentVolume:
    got = plugin.binder.pv_cache.get(name)
    assert isinstance(got, PersistentVolume)
    return got


def _assumed_pvc(plugin: vb.VolumeBinding, key: str) -> PersistentVolumeClaim:
    got = plugin.binder.pvc_cache.get(key)
    assert isinstance(got, PersistentVolumeClaim)
    return got


# --- PreFilter ---


def test_pod_without_pvcs_is_skipped_and_reserve_marks_all_bound() -> None:
    plugin, h = _setup([])
    p = pod("p", volumes=[{"name": "e", "emptyDir": {}}])
    cs, st, _ = _run(plugin, h, p)
    assert st is not None and st.is_skip()
    state = cs.read(vb.STATE_KEY)
    assert isinstance(state, vb.StateData)
    assert plugin.reserve(cs, p, "n1") is None
    assert state.all_bound
    st2 = plugin.pre_bind_pre_flight(cs, p, "n1")
    assert st2 is not None and st2.is_skip()
    assert plugin.pre_bind(cs, p, "n1") is None


@pytest.mark.parametrize(
    ("claim", "pod_kwargs", "message"),
    [
        (None, {}, 'persistentvolumeclaim "c" not found'),
        (
            pvc("c", "imm", volume_name="gone", phase="Lost"),
            {},
            'persistentvolumeclaim "c" bound to non-existent persistentvolume "gone"',
        ),
        (pvc("c", "dyn", deleting=True), {}, 'persistentvolumeclaim "c" is being deleted'),
    ],
)
def test_pre_filter_rejects_unusable_claims(
    claim: Any, pod_kwargs: dict[str, Any], message: str
) -> None:
    plugin, h = _setup([claim] if claim is not None else [])
    _, st, _ = _run(plugin, h, pod("p", "c"))
    assert _view(st) == (UNRESOLVABLE, (message,))
    assert st is not None and st.plugin == vb.NAME


def test_ephemeral_volume_claims() -> None:
    eph = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    plugin, h = _setup([])
    _, st, _ = _run(plugin, h, pod("p", volumes=[eph], uid="u1"))
    assert _view(st) == (
        UNRESOLVABLE,
        (
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',
        ),
    )
    plugin, h = _setup([pvc("p-scratch", "dyn", owner_uid="someone-else")])
    _, st, _ = _run(plugin, h, pod("p", volumes=[eph], uid="u1"))
    assert _view(st) == (
        UNRESOLVABLE,
        ("PVC default/p-scratch was not created for pod default/p (pod is not owner)",),
    )
    plugin, h = _setup([pvc("p-scratch", "dyn", owner_uid="u1")])
    _, st, out = _run(plugin, h, pod("p", volumes=[eph], uid="u1"))
    assert st is None and all(v is None for v in out.values())


@pytest.mark.parametrize(
    "claim",
    [
        pvc("c", "imm"),  # Immediate class, not bound yet
        pvc("c", None),  # no class at all
        pvc("c", "missing-class"),  # unknown class: not delayed
        pvc("c", "wffc", volume_name="pv1"),  # pre-bound to a PV, bind not completed
    ],
)
def test_unbound_immediate_claims_are_unresolvable(claim: Any) -> None:
    plugin, h = _setup([claim, pv("pv1", sc="wffc")])
    _, st, _ = _run(plugin, h, pod("p", "c"))
    assert _view(st) == (UNRESOLVABLE, (vb.ERR_REASON_UNBOUND_IMMEDIATE,))


# --- bound claims ---


def test_bound_claim_follows_pv_node_affinity() -> None:
    plugin, h = _setup(
        [pvc("c", "imm", volume_name="pv1", bound=True), pv("pv1", sc="imm", on_node="n2")]
    )
    _, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None
    assert out["n2"] is None
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_NODE_CONFLICT,))
    assert _view(out["n3"]) == (UNRESOLVABLE, (vb.ERR_REASON_NODE_CONFLICT,))


def test_bound_claim_without_pv() -> None:
    plugin, h = _setup([pvc("c", "imm", volume_name="gone", bound=True)])
    _, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None
    assert {_view(s) for s in out.values()} == {(UNRESOLVABLE, (vb.ERR_REASON_PV_NOT_EXIST,))}


def test_bound_pv_without_affinity_fits_everywhere_and_reserve_is_all_bound() -> None:
    plugin, h = _setup([pvc("c", "imm", volume_name="pv1", bound=True), pv("pv1", sc="imm")])
    p = pod("p", "c")
    cs, st, out = _run(plugin, h, p)
    assert st is None and all(v is None for v in out.values())
    assert plugin.reserve(cs, p, "n1") is None
    assert cs.read(vb.STATE_KEY).all_bound
    skip = plugin.pre_bind_pre_flight(cs, p, "n1")
    assert skip is not None and skip.is_skip()


def test_migrated_in_tree_pv_uses_csi_topology_on_migrated_nodes() -> None:
    gce = {"gcePersistentDisk": {"pdName": "d1"}}
    objects = [
        pvc("c", "imm", volume_name="pv1", bound=True),
        pv("pv1", sc="imm", labels={"failure-domain.beta.kubernetes.io/zone": "a"}, source=gce),
        csi_node(
            "n1", {}, {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}
        ),
    ]
    plugin, h = _setup(objects)
    _, st, out = _run(plugin, h, pod("p", "c"))
    # The translated PV needs topology.gke.io/zone, which n1 lacks; n2/n3 aren't migrated.
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_NODE_CONFLICT,))
    assert out["n2"] is None and out["n3"] is None


# --- static binding (WaitForFirstConsumer) ---


def test_smallest_matching_pv_is_chosen_per_node() -> None:
    objects = [
        pvc("c", "wffc", "5Gi"),
        pv("big-n1", "100Gi", "wffc", on_node="n1"),
        pv("small-n1", "8Gi", "wffc", on_node="n1"),
        pv("too-small-n2", "1Gi", "wffc", on_node="n2"),
        pv("any-node", "50Gi", "wffc"),
    ]
    plugin, h = _setup(objects)
    cs, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None and all(v is None for v in out.values())
    by_node = cs.read(vb.STATE_KEY).pod_volumes_by_node
    assert [b.pv.metadata.name for b in by_node["n1"].static_bindings] == ["small-n1"]
    assert [b.pv.metadata.name for b in by_node["n2"].static_bindings] == ["any-node"]
    assert cs.read(vb.STATE_KEY).has_static_bindings


@pytest.mark.parametrize(
    ("volume", "why"),
    [
        (pv("x", "10Gi", "wffc", modes=("ReadOnlyMany",)), "access modes"),
        (pv("x", "10Gi", "other"), "class"),
        (pv("x", "10Gi", "wffc", phase="Bound"), "phase"),
        (pv("x", "10Gi", "wffc", volume_mode="Block"), "volume mode"),
        (pv("x", "10Gi", "wffc", deleting=True), "being deleted"),
        (pv("x", "10Gi", "wffc", claim="default/other"), "claimed by another claim"),
        (pv("x", "10Gi", "wffc", labels={"tier": "slow"}), "selector"),
        (pv("x", "10Gi", "wffc", on_node="n9"), "node affinity"),
    ],
)
def test_pv_that_does_not_match_leaves_bind_conflict(volume: Any, why: str) -> None:
    claim = pvc("c", "wffc", "5Gi", selector={"matchLabels": {"tier": "fast"}})
    if why != "selector":
        claim = pvc("c", "wffc", "5Gi")
    plugin, h = _setup([claim, volume])
    _, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None
    assert {_view(s) for s in out.values()} == {(UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))}, why


def test_selector_and_beta_class_annotation_match() -> None:
    claim = pvc(
        "c",
        None,
        "5Gi",
        selector={"matchLabels": {"tier": "fast"}},
        annotations={"volume.beta.kubernetes.io/storage-class": "wffc"},
    )
    volume = pv("x", "10Gi", "", labels={"tier": "fast"}, on_node="n3")
    volume = attrs.evolve(
        volume,
        metadata=attrs.evolve(
            volume.metadata, annotations={"volume.beta.kubernetes.io/storage-class": "wffc"}
        ),
    )
    plugin, h = _setup([claim, volume])
    _, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None and out["n3"] is None
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))


def test_pv_pre_bound_to_the_claim_decides_alone() -> None:
    objects = [
        pvc("c", "wffc", "5Gi", uid="uid-c"),
        pv("small", "6Gi", "wffc"),
        pv("prebound", "50Gi", "wffc", claim="default/c", claim_uid="uid-c", on_node="n2"),
    ]
    plugin, h = _setup(objects)
    cs, _, out = _run(plugin, h, pod("p", "c"))
    assert out["n2"] is None
    # The pre-bound PV doesn't fit n1/n3, and no other PV may be used instead.
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))
    binding = cs.read(vb.STATE_KEY).pod_volumes_by_node["n2"].static_bindings[0]
    assert binding.pv.metadata.name == "prebound"


def test_each_pv_serves_one_claim_of_the_pod() -> None:
    objects = [pvc("c1", "wffc", "5Gi"), pvc("c2", "wffc", "2Gi"), pv("only", "10Gi", "wffc")]
    plugin, h = _setup(objects)
    _, _, out = _run(plugin, h, pod("p", "c1", "c2"))
    assert {_view(s) for s in out.values()} == {(UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))}
    # Claims are matched smallest first: with two PVs each claim gets the fitting one.
    plugin, h = _setup([*objects, pv("tiny", "3Gi", "wffc")])
    cs, _, out = _run(plugin, h, pod("p", "c1", "c2"))
    assert all(v is None for v in out.values())
    got = {
        b.pvc.metadata.name: b.pv.metadata.name
        for b in cs.read(vb.STATE_KEY).pod_volumes_by_node["n1"].static_bindings
    }
    assert got == {"c2": "tiny", "c1": "only"}


def test_reserve_assumes_pv_for_later_pods_and_unreserve_reverts() -> None:
    objects = [
        pvc("c1", "wffc", "5Gi", uid="u-c1"),
        pvc("c2", "wffc", "5Gi"),
        pv("pv1", "10Gi", "wffc"),
    ]
    plugin, h = _setup(objects)
    p1 = pod("p1", "c1")
    cs1, _, out = _run(plugin, h, p1)
    assert out["n1"] is None
    assert plugin.reserve(cs1, p1, "n1") is None
    assert not cs1.read(vb.STATE_KEY).all_bound
    assumed = _assumed_pv(plugin, "pv1")
    ref = assumed.spec.claim_ref
    assert ref is not None and ref.name == "c1" and ref.uid == "u-c1"
    assert assumed.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    stored = h.objects.get_object("PersistentVolume", "pv1")
    assert isinstance(stored, PersistentVolume) and stored.spec.claim_ref is None
    # Another claim can no longer take pv1 ...
    _, _, out2 = _run(plugin, h, pod("p2", "c2"))
    assert _view(out2["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))
    # ... but a second pod of the same claim finds it pre-bound.
    _, _, out3 = _run(plugin, h, pod("p3", "c1"))
    assert out3["n1"] is None
    pre = plugin.pre_bind_pre_flight(cs1, p1, "n1")
    assert pre is None and plugin.pre_bind(cs1, p1, "n1") is None
    plugin.unreserve(cs1, p1, "n1")
    assert _assumed_pv(plugin, "pv1").spec.claim_ref is None
    _, _, out4 = _run(plugin, h, pod("p2", "c2"))
    assert out4["n1"] is None


def test_assumption_gives_way_to_a_store_update() -> None:
    objects = [pvc("c1", "wffc", "5Gi"), pv("pv1", "10Gi", "wffc")]
    plugin, h = _setup(objects)
    p1 = pod("p1", "c1")
    cs, _, _ = _run(plugin, h, p1)
    plugin.reserve(cs, p1, "n1")
    assert plugin.binder.pv_cache.is_assumed("pv1")
    h.objects.upsert(pv("pv1", "10Gi", "wffc", labels={"changed": "yes"}))
    assert not plugin.binder.pv_cache.is_assumed("pv1")
    assert _assumed_pv(plugin, "pv1").spec.claim_ref is None


def test_bind_volume_to_claim() -> None:
    claim = pvc("c", "wffc", uid="u")
    new_pv, dirty = bind_volume_to_claim(pv("x"), claim)
    assert dirty and new_pv.spec.claim_ref is not None
    assert (new_pv.spec.claim_ref.namespace, new_pv.spec.claim_ref.name) == ("default", "c")
    again, dirty2 = bind_volume_to_claim(new_pv, claim)
    assert not dirty2 and again is new_pv
    prebound = pv("y", claim="default/c", claim_uid="u")
    same, dirty3 = bind_volume_to_claim(prebound, claim)
    assert not dirty3 and "pv.kubernetes.io/bound-by-controller" not in same.metadata.annotations


# --- dynamic provisioning ---


def test_dynamic_provisioning_respects_allowed_topologies() -> None:
    objects = [storage_class("zonal", allowed_zones=("a", "b")), pvc("c", "zonal")]
    plugin, h = _setup(objects)
    cs, st, out = _run(plugin, h, pod("p", "c"))
    assert st is None
    assert out["n1"] is None and out["n2"] is None
    assert _view(out["n3"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))
    provisions = cs.read(vb.STATE_KEY).pod_volumes_by_node["n1"].dynamic_provisions
    assert [c.metadata.name for c in provisions] == ["c"]
    assert not cs.read(vb.STATE_KEY).has_static_bindings


def test_static_binding_falls_back_to_provisioning() -> None:
    objects = [pvc("c", "dyn", "5Gi"), pv("local", "10Gi", "dyn", on_node="n2")]
    plugin, h = _setup(objects)
    cs, _, out = _run(plugin, h, pod("p", "c"))
    assert all(v is None for v in out.values())
    by_node = cs.read(vb.STATE_KEY).pod_volumes_by_node
    assert by_node["n2"].static_bindings and not by_node["n2"].dynamic_provisions
    assert by_node["n1"].dynamic_provisions and not by_node["n1"].static_bindings


def test_selected_node_annotation_pins_the_claim() -> None:
    claim = pvc("c", "dyn", annotations={"volume.kubernetes.io/selected-node": "n2"})
    plugin, h = _setup([claim])
    _, _, out = _run(plugin, h, pod("p", "c"))
    assert out["n2"] is None
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))


def test_reserve_annotates_provisioned_claim_for_later_pods() -> None:
    plugin, h = _setup([pvc("c", "dyn")])
    p1 = pod("p1", "c")
    cs, _, _ = _run(plugin, h, p1)
    assert plugin.reserve(cs, p1, "n3") is None
    assumed = _assumed_pvc(plugin, "default/c")
    assert assumed.metadata.annotations["volume.kubernetes.io/selected-node"] == "n3"
    _, _, out = _run(plugin, h, pod("p2", "c"))
    assert out["n3"] is None
    assert _view(out["n1"]) == (UNRESOLVABLE, (vb.ERR_REASON_BIND_CONFLICT,))
    plugin.unreserve(cs, p1, "n3")
    _, _, out = _run(plugin, h, pod("p2", "c"))
    assert all(v is None for v in out.values())


def test_bound_and_unbound_reasons_are_reported_together() -> None:
    objects = [
        pvc("b", "imm", volume_name="pv1", bound=True),
        pv("pv1", sc="imm", on_node="n1"),
        storage_class("zonal", allowed_zones=("a",)),
        pvc("u", "zonal"),
    ]
    plugin, h = _setup(objects)
    _, _, out = _run(plugin, h, pod("p", "b", "u"))
    assert out["n1"] is None
    assert _view(out["n2"]) == (
        UNRESOLVABLE,
        (vb.ERR_REASON_NODE_CONFLICT, vb.ERR_REASON_BIND_CONFLICT),
    )


# --- Score (StorageCapacityScoring, off in v1.35) ---


def test_score_is_skipped_by_default() -> None:
    plugin, h = _setup([pvc("c", "wffc", "5Gi"), pv("pv1", "10Gi", "wffc")])
    cs, _, _ = _run(plugin, h, pod("p", "c"))
    st = plugin.pre_score(cs, pod("p", "c"), [])
    assert st is not None and st.is_skip()
    assert plugin.score(cs, pod("p", "c"), h.snapshot_shared_lister().node_infos().get("n1")) == (
        0,
        None,
    )


def test_score_with_storage_capacity_scoring() -> None:
    h = make_handle(
        NODES,
        objects=[
            WFFC,
            pvc("c", "wffc", "5Gi"),
            pv("half", "10Gi", "wffc", on_node="n1"),
            pv("full", "5Gi", "wffc", on_node="n2"),
        ],
    )
    plugin = vb.VolumeBinding(vb.VolumeBindingArgs(), h, storage_capacity_scoring=True)
    p = pod("p", "c")
    cs, _, _ = _run(plugin, h, p)
    assert plugin.pre_score(cs, p, []) is None
    scores = {
        ni.name: plugin.score(cs, p, ni)[0] for ni in h.snapshot_shared_lister().node_infos().list()
    }
    # Default shape (0 -> 10, 100 -> 0), scaled to 0..100: prefer the emptier volume.
    assert scores == {"n1": 50, "n2": 0, "n3": 0}


def test_build_scorer_rounds_the_mean_over_classes() -> None:
    scorer = build_scorer([(0, 0), (100, 10)])
    assert scorer({}) == 0
    assert scorer({"a": (5, 10)}) == 50
    assert scorer({"a": (5, 10), "b": (1, 3)}) == 42  # (50 + 33) / 2 = 41.5 -> 42
    assert scorer({"a": (11, 10)}) == 100  # over capacity scores as full
    assert scorer({"a": (0, 0)}) == 100


# --- args ---


def test_args_defaults_decode_and_validation() -> None:
    args = decode(vb.VolumeBindingArgs, {})
    assert args.bind_timeout_seconds == 600 and args.shape is None and args.validate() == []
    bad = decode(vb.VolumeBindingArgs, {"bindTimeoutSeconds": -1, "shape": []})
    assert bad.validate() == [
        (
            "bindTimeoutSeconds",
            "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
        ),
        (
            "shape",
            "Invalid value: []config.UtilizationShapePoint{}: unexpected field `shape`, "
            "remove it or turn on the feature gate StorageCapacityScoring",
        ),
    ]
    shaped = decode(
        vb.VolumeBindingArgs,
        {"shape": [{"utilization": 50, "score": 3}, {"utilization": 40, "score": 11}]},
    )
    assert shaped.validate(storage_capacity_scoring=True) == [
        (
            "shape[1].utilization",
            "Invalid value: 40: values must be sorted in increasing order",
        ),
        ("shape[1].score", "Invalid value: 11: not in valid range [0, 10]"),
    ]
    assert vb.VolumeBindingArgs().validate(storage_capacity_scoring=True) == [
        ("shape", "Required value: at least one point must be specified")
    ]
    assert (
        UtilizationShapePoint(0, 10),
        UtilizationShapePoint(100, 0),
    ) == vb.DEFAULT_STORAGE_CAPACITY_SHAPE


def test_new_rejects_bad_args_and_registry_knows_the_plugin() -> None:
    h = make_handle(NODES)
    with pytest.raises(ConfigError, match="bindTimeoutSeconds"):
        vb.new(vb.VolumeBindingArgs(bind_timeout_seconds=-5), h)
    with pytest.raises(ConfigError, match="VolumeBindingArgs"):
        vb.new({"bindTimeoutSeconds": 1}, h)
    assert vb.new(vb.VolumeBindingArgs(bind_timeout_seconds=30), h).bind_timeout_seconds == 30
    spec = in_tree_registry()[vb.NAME]
    assert spec.args_type is vb.VolumeBindingArgs and spec.factory is vb.new


# --- events and hints ---


def test_events_to_register() -> None:
    plugin, _ = _setup([])
    resources = [e.event.resource for e in plugin.events_to_register()]
    assert resources == [
        EventResource.StorageClass,
        EventResource.PersistentVolumeClaim,
        EventResource.PersistentVolume,
        EventResource.Node,
        EventResource.CSINode,
        EventResource.CSIDriver,
        EventResource.CSIStorageCapacity,
    ]


def test_hints() -> None:
    plugin, _ = _setup([])
    p = pod("p", "c", volumes=[{"name": "e", "ephemeral": {"volumeClaimTemplate": {}}}])
    q, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("c")) == q
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("p-e")) == q
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("other")) == skip
    assert plugin.is_schedulable_after_pvc_change(p, None, pvc("c", ns="elsewhere")) == skip
    zonal, zonal2 = (
        storage_class("s", allowed_zones=("a",)),
        storage_class("s", allowed_zones=("b",)),
    )
    assert plugin.is_schedulable_after_storage_class_change(p, None, zonal) == q
    assert plugin.is_schedulable_after_storage_class_change(p, zonal, zonal2) == q
    assert plugin.is_schedulable_after_storage_class_change(p, zonal, zonal) == skip
    ann = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}
    c1, c2 = csi_node("n1", {"d": 1}), csi_node("n1", {"d": 1}, ann)
    assert plugin.is_schedulable_after_csi_node_change(p, None, c1) == q
    assert plugin.is_schedulable_after_csi_node_change(p, c1, c2) == q
    assert plugin.is_schedulable_after_csi_node_change(p, c1, csi_node("n1", {"d": 5})) == skip
    csi_pod = pod("p", volumes=[{"name": "i", "csi": {"driver": "d"}}])
    on = {"metadata": {"name": "d"}, "spec": {"storageCapacity": True}}
    off = {"metadata": {"name": "d"}, "spec": {"storageCapacity": False}}
    assert plugin.is_schedulable_after_csi_driver_change(csi_pod, on, off) == q
    assert plugin.is_schedulable_after_csi_driver_change(csi_pod, off, on) == skip
    assert plugin.is_schedulable_after_csi_driver_change(p, on, off) == skip
    small, big = {"capacity": "1Gi"}, {"capacity": "2Gi", "maximumVolumeSize": "3Gi"}
    assert plugin.is_schedulable_after_csi_storage_capacity_change(p, None, small) == q
    assert plugin.is_schedulable_after_csi_storage_capacity_change(p, small, big) == q
    assert plugin.is_schedulable_after_csi_storage_capacity_change(p, big, small) == skip


def _terms(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": k, "operator": op, "values": v} for k, op, v in t]}
                for t in terms
            ]
        }
    }


def test_candidate_index_narrows_by_required_labels_without_changing_choices() -> None:
    host = "kubernetes.io/hostname"
    objects = [
        pvc("c", "wffc", "1Gi"),
        # Smallest first: each node must get the smallest PV its labels allow.
        pv(
            "a-either-host",
            "2Gi",
            "wffc",
            affinity=_terms([(host, "In", ["n1"])], [(host, "In", ["n3"])]),
        ),
        pv("b-zone-b", "3Gi", "wffc", affinity=_terms([(ZONE, "In", ["b"])])),
        pv(
            "c-mixed", "4Gi", "wffc", affinity=_terms([(ZONE, "In", ["c"])], [(host, "In", ["n1"])])
        ),
        pv("d-not-zone-a", "5Gi", "wffc", affinity=_terms([(ZONE, "NotIn", ["a"])])),
        pv(
            "e-zone-and-host",
            "6Gi",
            "wffc",
            affinity=_terms([(ZONE, "In", ["a", "b"]), (host, "In", ["n2"])]),
        ),
    ]
    plugin, h = _setup(objects)
    cs, _, out = _run(plugin, h, pod("p", "c"))
    assert all(v is None for v in out.values())
    chosen = {
        n: v.static_bindings[0].pv.metadata.name
        for n, v in cs.read(vb.STATE_KEY).pod_volumes_by_node.items()
    }
    assert chosen == {"n1": "a-either-host", "n2": "b-zone-b", "n3": "a-either-host"}
    index = cs.read(vb.STATE_KEY).pod_volume_claims.claims_to_find_matching[0].candidates
    assert [c.pv.metadata.name for c in index.anywhere] == ["c-mixed", "d-not-zone-a"]
    assert set(index.by_label) == {host, ZONE}
    assert [c.pv.metadata.name for c in index.by_label[host]["n2"]] == ["e-zone-and-host"]
    # Without the two smaller PVs, n2 falls back to the merged lists in size order.
    plugin, h = _setup([objects[0], *objects[3:]])
    cs, _, _ = _run(plugin, h, pod("p", "c"))
    by_node = cs.read(vb.STATE_KEY).pod_volumes_by_node
    assert by_node["n2"].static_bindings[0].pv.metadata.name == "d-not-zone-a"
    assert by_node["n3"].static_bindings[0].pv.metadata.name == "c-mixed"
    assert "n1" in by_node and by_node["n1"].static_bindings[0].pv.metadata.name == "c-mixed"
