"""Feature gates: the v1.35 table, errors as --feature-gates reports them, per-scheduler values,
and every gated behaviour at its non-default setting."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import FakeClock, Node, Outcome, Pod, Scheduler
from kschedlib.api.storage import PersistentVolumeClaim
from kschedlib.backend.snapshot import Snapshot
from kschedlib.config import load_config
from kschedlib.errors import ConfigError
from kschedlib.features import (
    DEFAULT_FEATURE_GATES,
    V1_35_SCHEDULER_FEATURES,
    FeatureGateError,
    FeatureGates,
    PluginFeatures,
    Stage,
)
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle
from kschedlib.plugins import noderesources, podtopologyspread


def node(name: str, cpu: str = "4", **labels: str) -> Node:
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    })


def pod(name: str, cpu: str = "1", **spec: Any) -> Pod:
    meta = spec.pop("metadata", {})
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", **meta},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    })


# --- the table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "default", "stage", "locked"),
    [
        ("GangScheduling", False, Stage.ALPHA, False),
        ("GenericWorkload", False, Stage.ALPHA, False),
        ("NodeDeclaredFeatures", False, Stage.ALPHA, False),
        ("TaintTolerationComparisonOperators", False, Stage.ALPHA, False),
        ("SchedulerPopFromBackoffQ", True, Stage.BETA, False),
        ("SchedulerAsyncPreemption", True, Stage.BETA, False),
        ("MatchLabelKeysInPodTopologySpread", True, Stage.BETA, False),
        ("PodLevelResources", True, Stage.BETA, False),
        ("NominatedNodeNameForExpectation", True, Stage.BETA, False),
        ("ClearingNominatedNodeNameAfterBinding", True, Stage.BETA, False),
        ("SchedulerQueueingHints", True, Stage.GA, True),
        ("SidecarContainers", True, Stage.GA, True),
        ("InPlacePodVerticalScaling", True, Stage.GA, True),
        ("DynamicResourceAllocation", True, Stage.GA, True),
        ("StorageCapacityScoring", False, Stage.ALPHA, False),
        ("DRAExtendedResource", False, Stage.ALPHA, False),
        ("DRAPrioritizedList", True, Stage.BETA, False),
    ],
)
def test_v1_35_table(name: str, default: bool, stage: Stage, locked: bool) -> None:
    spec = V1_35_SCHEDULER_FEATURES[name]
    assert (spec.default, spec.stage, spec.lock_to_default) == (default, stage, locked)
    assert DEFAULT_FEATURE_GATES.enabled(name) is default
    assert spec.description


def test_every_gate_has_a_plugin_feature_or_a_scheduler_reader() -> None:
    f = PluginFeatures.from_gates(DEFAULT_FEATURE_GATES)
    assert f == PluginFeatures()  # the struct's defaults are v1.35's


def test_parse_and_errors() -> None:
    g = FeatureGates.parse("GangScheduling=true, SchedulerPopFromBackoffQ=false,GenericWorkload=t")
    assert g.enabled("GangScheduling") and not g.enabled("SchedulerPopFromBackoffQ")
    assert g.overrides() == {
        "GangScheduling": True, "SchedulerPopFromBackoffQ": False, "GenericWorkload": True,
    }
    assert FeatureGates.parse("GenericWorkload=1").enabled("GenericWorkload")
    with pytest.raises(FeatureGateError, match="^unrecognized feature gate: NoSuchGate$"):
        FeatureGates.parse("NoSuchGate=true")
    with pytest.raises(
        FeatureGateError,
        match="^cannot set feature gate SidecarContainers to false, feature is locked to true$",
    ):
        FeatureGates({"SidecarContainers": False})
    with pytest.raises(FeatureGateError, match="^missing bool value for GangScheduling$"):
        FeatureGates.parse("GangScheduling")
    with pytest.raises(
        FeatureGateError,
        match=r'^invalid value of GangScheduling=maybe, err: strconv.ParseBool: parsing "maybe": '
        "invalid syntax$",
    ):
        FeatureGates.parse("GangScheduling=maybe")
    # Setting a locked gate to its own value is allowed, with Go's GA warning.
    g = FeatureGates({"SidecarContainers": True})
    assert g.warnings == [
        "Setting GA feature gate SidecarContainers=true. It will be removed in a future release."
    ]
    assert isinstance(FeatureGateError("x"), ConfigError)
    assert "GangScheduling=true|false (ALPHA - default=false)" in g.known_features()


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("GangScheduling=true",
         "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
        ("MatchLabelKeysInPodTopologySpread=false",
         "MatchLabelKeysInPodTopologySpreadSelectorMerge is enabled, but depends on features "
         "that are disabled: [MatchLabelKeysInPodTopologySpread]"),
        ("DRADeviceTaintRules=true",
         "DRADeviceTaintRules is enabled, but depends on features that are disabled: "
         "[DRADeviceTaints]"),
        ("DRADeviceBindingConditions=true,DRAResourceClaimDeviceStatus=false",
         "DRADeviceBindingConditions is enabled, but depends on features that are disabled: "
         "[DRAResourceClaimDeviceStatus]"),
        ("InPlacePodLevelResourcesVerticalScaling=true,PodLevelResources=false",
         "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are "
         "disabled: [NodeDeclaredFeatures PodLevelResources]"),
        # several errors aggregate as utilerrors.NewAggregate prints them
        ("GangScheduling=true,DRADeviceTaintRules=true",
         "[DRADeviceTaintRules is enabled, but depends on features that are disabled: "
         "[DRADeviceTaints], GangScheduling is enabled, but depends on features that are "
         "disabled: [GenericWorkload]]"),
        # locked gates of every component, with v1.35's text
        ("JobPodReplacementPolicy=false",
         "cannot set feature gate JobPodReplacementPolicy to false, feature is locked to true"),
        ("AllowOverwriteTerminationGracePeriodSeconds=true",
         "cannot set feature gate AllowOverwriteTerminationGracePeriodSeconds to true, feature "
         "is locked to false"),
    ],
)
def test_dependencies_and_locks_as_v1_35(flag: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as exc:
        FeatureGates.parse(flag)
    assert str(exc.value) == message
    with pytest.raises(FeatureGateError):
        Scheduler(feature_gates=flag)


def test_every_v1_35_gate_is_known_and_the_unread_ones_change_nothing() -> None:
    from kschedlib.features import V1_35_FEATURES, scheduler_reads

    assert len(V1_35_FEATURES) > 200
    for name in ("JobManagedBy", "KubeletPSI", "WatchList", "ContextualLogging", "EnvFiles"):
        assert name in V1_35_FEATURES and not scheduler_reads(name)
    g = FeatureGates.parse("KubeletPSI=false,EnvFiles=false,UserNamespacesHostNetworkSupport=true")
    assert not g.enabled("KubeletPSI") and g.enabled("UserNamespacesHostNetworkSupport")
    assert PluginFeatures.from_gates(g) == PluginFeatures()
    assert "JobManagedBy=true|false (GA - default=true)" in g.known_features()
    assert "AllAlpha=true|false (ALPHA - default=false)" in g.known_features()


def test_all_alpha_and_all_beta() -> None:
    g = FeatureGates.parse("AllAlpha=true")  # sets every alpha gate: dependencies hold
    assert g.enabled("GangScheduling") and g.enabled("GenericWorkload")
    assert g.enabled("TaintTolerationComparisonOperators") and g.enabled("NodeDeclaredFeatures")
    assert g.enabled("SchedulerPopFromBackoffQ")  # beta, untouched
    # an explicit value wins over AllAlpha, and dependencies are checked on the result
    g = FeatureGates.parse("AllAlpha=true,StorageCapacityScoring=false")
    assert not g.enabled("StorageCapacityScoring") and g.enabled("VolumeLimitScaling")
    with pytest.raises(FeatureGateError, match=r"^GangScheduling is enabled, .*\[GenericWorkload\]$"):
        FeatureGates.parse("AllAlpha=true,GenericWorkload=false")
    g = FeatureGates.parse("AllBeta=false")
    assert not g.enabled("SchedulerPopFromBackoffQ") and not g.enabled("PodLevelResources")
    assert g.enabled("SidecarContainers")  # GA, locked
    s = Scheduler(clock=FakeClock(), feature_gates="AllBeta=false")
    assert s.frameworks["default-scheduler"].features.enable_async_preemption is False


def test_scheduler_rejects_bad_gates_before_doing_anything() -> None:
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        Scheduler(feature_gates={"Nope": True})
    with pytest.raises(FeatureGateError, match="locked to true"):
        Scheduler(feature_gates="SchedulerQueueingHints=false")


def test_two_schedulers_in_one_process_differ() -> None:
    a = Scheduler(clock=FakeClock(), feature_gates={"GangScheduling": True, "GenericWorkload": True})
    b = Scheduler(clock=FakeClock())
    assert a.feature_gates.enabled("GangScheduling") and not b.feature_gates.enabled("GangScheduling")
    assert "GangScheduling" in a.frameworks["default-scheduler"].plugins
    assert "GangScheduling" not in b.frameworks["default-scheduler"].plugins
    assert a.frameworks["default-scheduler"].features.enable_gang_scheduling
    assert not b.frameworks["default-scheduler"].features.enable_gang_scheduling


def test_default_plugin_set_follows_gates() -> None:
    names = [p.name for p in load_config(None).profiles[0].plugins.multi_point.enabled]
    assert "NodeDeclaredFeatures" not in names and "GangScheduling" not in names
    gates = FeatureGates(
        {"NodeDeclaredFeatures": True, "GangScheduling": True, "GenericWorkload": True}
    )
    names = [p.name for p in load_config(None, None, gates).profiles[0].plugins.multi_point.enabled]
    assert names[-3:] == ["DefaultBinder", "NodeDeclaredFeatures", "GangScheduling"]
    assert names.index("DynamicResources") == names.index("DefaultPreemption") - 1


# --- gated behaviours, non-default settings -------------------------------------------------


def test_pop_from_backoff_q_off_leaves_backing_off_pods_waiting() -> None:
    for enabled, want in ((True, ["default/p"]), (False, [])):
        clock = FakeClock()
        s = Scheduler(clock=clock, feature_gates={"SchedulerPopFromBackoffQ": enabled})
        s.add_node(node("small", cpu="1"))
        s.add_pod(pod("p", cpu="2"))
        (r,) = s.run()
        assert r.outcome == Outcome.Unschedulable  # Insufficient cpu
        s.add_node(node("n1"))  # moves the pod to backoffQ (its backoff has not expired)
        assert s.queue.pods_in_backoff_q()
        got = [x.key for x in s.run(max_cycles=1)]
        assert got == want, enabled


def test_async_preemption_gate_changes_eviction_failure_handling() -> None:
    class FailingHooks:
        def delete_pod(self, p: Pod, reason: str) -> None:
            raise RuntimeError("eviction refused")

    for enabled in (True, False):
        s = Scheduler(
            clock=FakeClock(),
            deterministic=True,
            host_hooks=FailingHooks(),
            feature_gates={"SchedulerAsyncPreemption": enabled},
        )
        s.add_node(node("n1", cpu="1"))
        s.add_pod(pod("low").with_node_name("n1"))
        high = Pod.from_dict({
            "metadata": {"name": "high", "namespace": "default", "uid": "uid-high"},
            "spec": {"priority": 100, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        })
        s.add_pod(high)
        (r,) = s.run(max_cycles=1)
        pl = s.frameworks["default-scheduler"].plugins["DefaultPreemption"]
        assert pl.async_preemption is enabled
        assert bool(pl.events_to_register()) is enabled
        if enabled:
            assert r.nominated_node == "n1"  # asynchronous: the nomination stands
        else:
            assert r.nominated_node is None and r.outcome == Outcome.Unschedulable
            assert "eviction refused" in r.message


def spread_pod(name: str, **labels: str) -> Pod:
    return pod(
        name,
        metadata={"labels": {"app": "web", **labels}},
        topologySpreadConstraints=[{
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["rev"],
        }],
    )


def test_match_label_keys_in_pod_topology_spread_off() -> None:
    nodes = [node("a", zone="z1"), node("b", zone="z2")]
    existing = [spread_pod("old1", rev="1").with_node_name("a"), spread_pod("old2", rev="1").with_node_name("a")]
    incoming = spread_pod("new", rev="2")
    results = {}
    for enabled in (True, False):
        h = BasicHandle(
            Snapshot.from_objects(existing, nodes),
            feature_gates={
                "MatchLabelKeysInPodTopologySpread": enabled,
                "MatchLabelKeysInPodTopologySpreadSelectorMerge": enabled,
            },
        )
        pl = podtopologyspread.new(None, h)
        state = CycleState()
        infos = h.snapshot_shared_lister().node_infos().list()
        _, st = pl.pre_filter(state, incoming, infos)
        assert st is None
        results[enabled] = [pl.filter(state, incoming, ni) is None for ni in infos]
    # With matchLabelKeys, rev=1 pods don't count for a rev=2 pod: both zones fit.
    assert results[True] == [True, True]
    # Without, zone z1 already has 2 matching pods: only z2 fits.
    assert results[False] == [False, True]


def test_pod_level_resources_off_ignores_pod_level_requests() -> None:
    p = Pod.from_dict({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "resources": {"requests": {"cpu": "3"}},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    })
    nodes = [node("n", cpu="2")]
    for enabled, fits in ((True, False), (False, True)):
        h = BasicHandle(Snapshot.from_objects([], nodes), feature_gates={"PodLevelResources": enabled})
        fit = noderesources.new_fit(None, h)
        state = CycleState()
        (ni,) = h.snapshot_shared_lister().node_infos().list()
        fit.pre_filter(state, p, [ni])
        assert (fit.filter(state, p, ni) is None) is fits, enabled


def pvc_objects() -> list[Any]:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait"},
          "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "default"},
           "spec": {"storageClassName": "wait", "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}
    from kschedlib.api.objects import decode_any

    objs = [decode_any(sc), decode_any(pvc)]
    assert isinstance(objs[1], PersistentVolumeClaim)
    return objs


@pytest.mark.parametrize(
    ("gates", "nominated"),
    [
        ({}, ""),  # expectation set, then cleared after binding
        ({"ClearingNominatedNodeNameAfterBinding": False}, "n1"),  # kept after binding
        ({"ClearingNominatedNodeNameAfterBinding": False, "NominatedNodeNameForExpectation": False}, ""),
    ],
)
def test_nominated_node_name_for_expectation(gates: dict[str, bool], nominated: str) -> None:
    s = Scheduler(clock=FakeClock(), feature_gates=gates)
    s.add_node(node("n1"))
    for o in pvc_objects():
        s.add_object(o)
    s.add_pod(pod("p", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]))
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled
    assert r.pod.status.nominated_node_name == nominated


def test_storage_capacity_scoring_gate_controls_volume_binding_args() -> None:
    cfg = {"profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}]}
    with pytest.raises(ConfigError, match="turn on the feature gate StorageCapacityScoring"):
        Scheduler(cfg)
    s = Scheduler(cfg, feature_gates={"StorageCapacityScoring": True})
    vb = s.frameworks["default-scheduler"].plugins["VolumeBinding"]
    assert vb._scoring is True
    assert Scheduler().frameworks["default-scheduler"].plugins["VolumeBinding"]._scoring is False


def test_dra_alpha_gates_reach_plugins() -> None:
    s = Scheduler(feature_gates={"DRAExtendedResource": True, "DRADeviceTaints": True})
    f = s.frameworks["default-scheduler"].features
    assert f.enable_dra_extended_resource and f.enable_dra_device_taints
    assert not f.enable_dra_consumable_capacity
    alloc = s.frameworks["default-scheduler"].plugins["DynamicResources"].features
    assert alloc.device_taints and not alloc.partitionable_devices and alloc.prioritized_list


def test_dra_prioritized_list_off_rejects_first_available_claims() -> None:
    from kschedlib.cli.simulate import load_input, simulate
    from tests.corpus import CORPUS

    cfg, objs = load_input(str(CORPUS / "dra-021.json"))
    msg = "has subrequests, but the DRAPrioritizedList feature is disabled"
    on = simulate(cfg, objs)
    off = simulate(cfg, objs, feature_gates=FeatureGates({"DRAPrioritizedList": False}))
    assert not any(msg in r.message for r in on.last.values())
    rejected = [k for k, r in off.last.items() if msg in r.message]
    assert rejected
    assert any(on.last[k].outcome == Outcome.Scheduled for k in rejected)


def test_pod_level_resources_off_in_node_accounting() -> None:
    placed = Pod.from_dict({
        "metadata": {"name": "big", "namespace": "default", "uid": "big"},
        "spec": {
            "nodeName": "n",
            "resources": {"requests": {"cpu": "3"}},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    })
    for enabled, want in ((True, 3000), (False, 1000)):
        s = Scheduler(clock=FakeClock(), feature_gates={"PodLevelResources": enabled})
        s.add_node(node("n"))
        s.add_pod(placed)
        assert s.cache.get_node("n").requested.milli_cpu == want
        # A 2-cpu pod fits the 4-cpu node only when the pod-level request is ignored.
        s.add_pod(pod("p", cpu="2"))
        (r,) = s.run()
        assert (r.outcome == Outcome.Scheduled) is (not enabled)
