"""The kubelet's eviction manager: signals, thresholds, grace and transition periods,
ranking per signal, node-level reclaim, minimum reclaim and grace periods."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.pod import Pod
from kschedlib.eviction import EvictionConfig, NodeEvictionManager, Summary
from kschedlib.eviction.kubelet import (
    CONTAINER_GC,
    IMAGE_GC,
    PodStatsIndex,
    build_signal_to_rank_func,
    make_signal_observations,
)
from tests.eviction.util import Gi, Mi, fs, pod, pod_stats, summary


def _mgr(**cfg: Any) -> NodeEvictionManager:
    return NodeEvictionManager("n1", EvictionConfig.from_kubelet_configuration(cfg or None))


def _rank(signal: str, pods: list[Pod], stats: list[dict[str, Any]], layout: str = "single") -> list[str]:
    s = Summary.from_dict(summary(pods=stats, layout=layout))
    return [r.pod.metadata.name for r in build_signal_to_rank_func(layout)[signal].rank(pods, PodStatsIndex(s.pods))]


def test_signals_are_computed_as_the_kubelet_does() -> None:
    s = Summary.from_dict(summary(mem_avail=1 * Gi, mem_ws=3 * Gi, pid=(1000, 600),
                                  nodefs=fs(10 * Gi, 100 * Gi, 50, 1000),
                                  pods_container=(512 * Mi, 2 * Gi)))
    obs = make_signal_observations(s)
    assert (obs["memory.available"].available, obs["memory.available"].capacity) == (1 * Gi, 4 * Gi)
    assert (obs["allocatableMemory.available"].available,
            obs["allocatableMemory.available"].capacity) == (512 * Mi, 2 * Gi + 512 * Mi)
    assert (obs["pid.available"].available, obs["pid.available"].capacity) == (400, 1000)
    assert (obs["nodefs.inodesFree"].available, obs["nodefs.inodesFree"].capacity) == (50, 1000)
    assert "containerfs.available" not in obs  # no containerFs statistics given


def test_memory_ranking_usage_above_requests_first_then_priority_then_usage() -> None:
    within_low = pod("within-low", mem="2Gi", priority=0)
    over_high = pod("over-high", mem="100Mi", priority=1000)
    over_low_small = pod("over-low-small", mem="100Mi", priority=0)
    over_low_big = pod("over-low-big", mem="100Mi", priority=0)
    best_effort = pod("best-effort", priority=0)
    no_stats = pod("no-stats", mem="4Gi", priority=2000)
    pods = [within_low, over_high, over_low_small, over_low_big, best_effort, no_stats]
    stats = [
        pod_stats(within_low, mem=1 * Gi),
        pod_stats(over_high, mem=3 * Gi),
        pod_stats(over_low_small, mem=200 * Mi),
        pod_stats(over_low_big, mem=900 * Mi),
        pod_stats(best_effort, mem=500 * Mi),
    ]
    assert _rank("memory.available", pods, stats) == [
        "no-stats",        # pods without statistics go first
        "over-low-big",    # exceeds request, priority 0, 800Mi above request
        "best-effort",     # exceeds (no request), priority 0, 500Mi above
        "over-low-small",  # exceeds, priority 0, 100Mi above
        "over-high",       # exceeds but priority 1000
        "within-low",      # within its request: last, whatever its priority
    ]


def test_pid_ranking_by_priority_then_process_count() -> None:
    a, b, c = pod("a", priority=10), pod("b", priority=0), pod("c", priority=0)
    stats = [pod_stats(a, procs=500), pod_stats(b, procs=10), pod_stats(c, procs=90)]
    assert _rank("pid.available", [a, b, c], stats) == ["c", "b", "a"]


def test_disk_ranking_measures_the_filesystems_of_the_layout() -> None:
    writer = pod("rootfs-writer")            # writes into its container's writable layer
    logger = pod("log-writer")               # writes logs and an emptyDir
    logger = pod("log-writer", volumes=[{"name": "scratch", "emptyDir": {}}])
    stats = [pod_stats(writer, rootfs=5 * Gi), pod_stats(logger, logs=1 * Gi, volumes={"scratch": 1 * Gi})]
    # one filesystem: everything counts
    assert _rank("nodefs.available", [logger, writer], stats) == ["rootfs-writer", "log-writer"]
    # dedicated imagefs: nodefs ranking measures logs and local volumes only ...
    assert _rank("nodefs.available", [writer, logger], stats, "imagefs") == ["log-writer", "rootfs-writer"]
    # ... and imagefs/containerfs ranking the writable layers
    assert _rank("imagefs.available", [logger, writer], stats, "imagefs") == ["rootfs-writer", "log-writer"]
    assert _rank("containerfs.available", [logger, writer], stats, "imagefs") == ["rootfs-writer", "log-writer"]
    # split image filesystem: writable layers are on the node filesystem
    assert _rank("nodefs.available", [logger, writer], stats, "split") == ["rootfs-writer", "log-writer"]


def test_disk_ranking_honours_ephemeral_storage_requests() -> None:
    big_req = pod("big-request", eph="10Gi")
    no_req = pod("no-request")
    stats = [pod_stats(big_req, rootfs=6 * Gi), pod_stats(no_req, rootfs=1 * Gi)]
    assert _rank("nodefs.available", [big_req, no_req], stats) == ["no-request", "big-request"]


def test_inode_ranking_uses_inodes() -> None:
    many, few = pod("many"), pod("few")
    stats = [pod_stats(many, rootfs_inodes=50_000), pod_stats(few, rootfs_inodes=10, rootfs=9 * Gi)]
    assert _rank("nodefs.inodesFree", [few, many], stats) == ["many", "few"]


def _memory_pressure(pods: list[Pod], avail: int, usage: dict[str, int]) -> Summary:
    stats = [pod_stats(p, mem=usage[p.metadata.name]) for p in pods]
    return Summary.from_dict(summary(mem_avail=avail, mem_ws=8 * Gi - avail, pods=stats))


def test_hard_threshold_evicts_one_pod_per_pass_with_a_one_second_grace_period() -> None:
    mgr = _mgr()
    a, b = pod("a", mem="100Mi", tgps=120), pod("b", mem="100Mi")
    r = mgr.synchronize(_memory_pressure([a, b], 50 * Mi, {"a": 900 * Mi, "b": 300 * Mi}), [a, b], 0.0)
    assert r.node_conditions == ("MemoryPressure",)
    assert r.eviction is not None and r.eviction.pod.metadata.name == "a"
    assert r.eviction.grace_period_seconds == 1  # immediateEvictionGracePeriodSeconds
    assert r.eviction.evicted_pod.status.phase == "Failed"
    assert r.eviction.evicted_pod.status.reason == "Evicted"
    assert r.eviction.message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 900Mi, request is 100Mi, has larger consumption of memory. "
    )
    assert [d.type for d in r.eviction.evicted_pod.status.conditions][-1] == "DisruptionTarget"
    assert "usage above request (800Mi) is larger than default/b's (200Mi)" in r.eviction.why_first


def test_soft_threshold_waits_for_its_grace_period_then_uses_the_lesser_grace() -> None:
    mgr = _mgr(evictionSoft={"memory.available": "1Gi"},
               evictionSoftGracePeriod={"memory.available": "1m"},
               evictionMaxPodGracePeriod=45)
    long_, short = pod("long", tgps=600), pod("short", tgps=10)
    pods = [long_, short]
    s = _memory_pressure(pods, 800 * Mi, {"long": 2 * Gi, "short": 1 * Gi})
    r0 = mgr.synchronize(s, pods, 100.0)
    assert r0.eviction is None and r0.node_conditions == ("MemoryPressure",)
    assert [(str(t.signal), left) for t, left in r0.awaiting_grace_period] == [("memory.available", 60.0)]
    assert mgr.synchronize(s, pods, 159.0).eviction is None
    r1 = mgr.synchronize(s, pods, 160.0)
    assert r1.eviction is not None and r1.eviction.pod.metadata.name == "long"
    assert r1.eviction.grace_period_seconds == 45  # min(600, evictionMaxPodGracePeriod)
    r2 = mgr.synchronize(s, [short], 170.0)
    assert r2.eviction is not None and r2.eviction.grace_period_seconds == 10  # min(10, 45)


def test_a_threshold_that_clears_before_its_grace_period_restarts_the_clock() -> None:
    mgr = _mgr(evictionSoft={"memory.available": "1Gi"}, evictionSoftGracePeriod={"memory.available": "1m"})
    p = pod("p")
    low = _memory_pressure([p], 800 * Mi, {"p": 1 * Gi})
    ok = _memory_pressure([p], 2 * Gi, {"p": 1 * Gi})
    mgr.synchronize(low, [p], 0.0)
    mgr.synchronize(ok, [p], 30.0)
    assert mgr.synchronize(low, [p], 70.0).eviction is None  # first observed again at 70
    assert mgr.synchronize(low, [p], 130.0).eviction is not None


def test_conditions_hold_for_the_pressure_transition_period() -> None:
    mgr = _mgr(evictionPressureTransitionPeriod="2m")
    p = pod("p", mem="8Gi")
    low = _memory_pressure([p], 50 * Mi, {"p": 1 * Gi})
    ok = _memory_pressure([p], 4 * Gi, {"p": 1 * Gi})
    mgr.synchronize(low, [p], 0.0)
    assert mgr.synchronize(ok, [p], 119.0).node_conditions == ("MemoryPressure",)
    assert mgr.synchronize(ok, [p], 120.0).node_conditions == ()


def test_minimum_reclaim_keeps_evicting_until_value_plus_reclaim_is_free() -> None:
    pods = [pod(n, mem="100Mi") for n in ("a", "b", "c", "d")]
    usage = {"a": 400 * Mi, "b": 300 * Mi, "c": 200 * Mi, "d": 150 * Mi}
    s = _memory_pressure(pods, 50 * Mi, usage)
    plain = _mgr().reclaim(s, pods, 0.0)
    assert [r.eviction.pod.metadata.name for r in plain if r.eviction] == ["a"]  # 450Mi >= 100Mi
    with_reclaim = _mgr(evictionHard={"memory.available": "100Mi"},
                        evictionMinimumReclaim={"memory.available": "600Mi"}).reclaim(s, pods, 0.0)
    # 50 -> 450 -> 750Mi: stops once available >= 100Mi + 600Mi
    assert [r.eviction.pod.metadata.name for r in with_reclaim if r.eviction] == ["a", "b"]


def test_critical_pods_are_skipped() -> None:
    static = pod("static", annotations={"kubernetes.io/config.source": "file"}, owner=None)
    critical = pod("critical", priority=2_000_000_000)
    normal = pod("normal", mem="1Gi")
    pods = [static, critical, normal]
    s = _memory_pressure(pods, 50 * Mi, {"static": 2 * Gi, "critical": 2 * Gi, "normal": 100 * Mi})
    r = _mgr().synchronize(s, pods, 0.0)
    assert r.eviction is not None and r.eviction.pod.metadata.name == "normal"
    assert [e for e in r.events if e.startswith("cannot evict a critical pod")]


def _disk_summary(pods: list[Pod], avail: int, reclaim: dict[str, int], layout: str = "single") -> Summary:
    stats = [pod_stats(p, rootfs=2 * Gi) for p in pods]
    return Summary.from_dict(summary(nodefs=fs(avail, 100 * Gi), pods=stats, reclaimable=reclaim,
                                     layout=layout))


def test_node_level_reclaim_relieves_disk_pressure_without_evicting() -> None:
    p = pod("p")
    s = _disk_summary([p], 5 * Gi, {"unusedImagesBytes": 11 * Gi})
    r = _mgr().synchronize(s, [p], 0.0)
    assert r.node_reclaim is not None and r.node_reclaim.functions == (CONTAINER_GC, IMAGE_GC)
    assert r.node_reclaim.resolved and r.node_reclaim.freed_bytes == 11 * Gi
    assert r.eviction is None
    assert r.node_conditions == ("DiskPressure",)  # the condition was observed this pass


def test_node_level_reclaim_that_is_not_enough_is_followed_by_an_eviction() -> None:
    p = pod("p")
    s = _disk_summary([p], 5 * Gi, {"unusedImagesBytes": 1 * Gi, "deadContainersBytes": 1 * Gi})
    r = _mgr().synchronize(s, [p], 0.0)
    assert r.node_reclaim is not None and not r.node_reclaim.resolved
    assert r.eviction is not None and r.eviction.signal in ("nodefs.available", "imagefs.available",
                                                            "containerfs.available")


def test_nodefs_pressure_on_a_dedicated_imagefs_has_no_node_reclaim() -> None:
    p = pod("p")
    s = Summary.from_dict(summary(nodefs=fs(5 * Gi, 100 * Gi), imagefs=fs(80 * Gi, 100 * Gi),
                                  pods=[pod_stats(p, logs=1 * Gi)], layout="imagefs",
                                  reclaimable={"unusedImagesBytes": 50 * Gi}))
    r = _mgr().synchronize(s, [p], 0.0)
    assert r.node_reclaim is None
    assert r.eviction is not None and r.eviction.signal == "nodefs.available"


def test_memory_is_reclaimed_before_disk() -> None:
    p = pod("p")
    s = Summary.from_dict(summary(mem_avail=10 * Mi, mem_ws=8 * Gi, nodefs=fs(1 * Gi, 100 * Gi),
                                  pods=[pod_stats(p, mem=1 * Gi)]))
    r = _mgr().synchronize(s, [p], 0.0)
    assert r.resource_to_reclaim == "memory"
    assert set(r.node_conditions) == {"MemoryPressure", "DiskPressure"}


def test_allocatable_memory_signal_from_the_pods_cgroup() -> None:
    p = pod("p")
    s = Summary.from_dict(summary(mem_avail=4 * Gi, pods_container=(50 * Mi, 6 * Gi),
                                  pods=[pod_stats(p, mem=1 * Gi)]))
    r = _mgr().synchronize(s, [p], 0.0)
    assert r.eviction is not None and r.eviction.signal == "allocatableMemory.available"


@pytest.mark.parametrize("bad", [{"node": {"memory": {"availableBytes": -1}}},
                                 {"pods": [{"podRef": {}}]}, {"layout": "zfs"}])
def test_malformed_statistics_are_typed_errors(bad: dict[str, Any]) -> None:
    from kschedlib.errors import EvictionError

    with pytest.raises(EvictionError):
        Summary.from_dict(bad)


def test_soft_eviction_grace_defaults_the_pods_period_to_30_seconds() -> None:
    mgr = _mgr(evictionSoft={"memory.available": "1Gi"},
               evictionSoftGracePeriod={"memory.available": "0s"},
               evictionMaxPodGracePeriod=120)
    p = pod("p")
    s = _memory_pressure([p], 800 * Mi, {"p": 1 * Gi})
    # a zero soft grace period is a hard threshold for the kubelet (GracePeriod == 0)
    r = mgr.synchronize(s, [p], 0.0)
    assert r.eviction is not None and r.eviction.grace_period_seconds == 1
    mgr = _mgr(evictionSoft={"memory.available": "1Gi"},
               evictionSoftGracePeriod={"memory.available": "10s"},
               evictionMaxPodGracePeriod=120)
    mgr.synchronize(s, [p], 0.0)
    r = mgr.synchronize(s, [p], 10.0)
    assert r.eviction is not None and r.eviction.grace_period_seconds == 30


def test_local_storage_limits_evict_before_thresholds() -> None:
    capped = pod("capped", volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}])
    limited = Pod.from_dict({**pod("limited").to_dict(), "spec": {
        "nodeName": "n1",
        "containers": [{"name": "c", "resources": {"limits": {"ephemeral-storage": "500Mi"}}}]}})
    fine = pod("fine")
    pods = [capped, limited, fine]
    stats = [pod_stats(capped, volumes={"scratch": 2 * Gi}), pod_stats(limited, rootfs=400 * Mi, logs=200 * Mi),
             pod_stats(fine, rootfs=5 * Gi)]
    s = Summary.from_dict(summary(pods=stats))
    r = _mgr().synchronize(s, pods, 0.0)
    got = {e.pod.metadata.name: e.message for e in r.local_storage_evictions}
    assert got == {
        "capped": 'Usage of EmptyDir volume "scratch" exceeds the limit "1Gi". ',
        "limited": "Container c exceeded its local ephemeral storage limit \"500Mi\". ",
    }
    assert r.eviction is None
    # on a dedicated image filesystem the writable layer does not count against the limit
    s2 = Summary.from_dict(summary(pods=stats[1:2], layout="imagefs"))
    assert _mgr().synchronize(s2, [limited], 0.0).local_storage_evictions == ()
    off = NodeEvictionManager("n1", EvictionConfig.from_kubelet_configuration(
        {"localStorageCapacityIsolation": False}))
    assert off.synchronize(s, pods, 0.0).local_storage_evictions == ()


def test_pod_ephemeral_storage_limit_uses_the_pods_total_usage() -> None:
    p = Pod.from_dict({**pod("p").to_dict(), "spec": {"nodeName": "n1", "containers": [
        {"name": "a", "resources": {"limits": {"ephemeral-storage": "1Gi"}}},
        {"name": "b", "resources": {"limits": {"ephemeral-storage": "1Gi"}}}]}})
    st = pod_stats(p)
    st["containers"] = []
    st["ephemeral-storage"] = {"usedBytes": 3 * Gi}
    r = _mgr().synchronize(Summary.from_dict(summary(pods=[st])), [p], 0.0)
    assert [e.message for e in r.local_storage_evictions] == [
        "Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. "]


def test_why_first_names_the_deciding_comparison() -> None:
    from kschedlib.eviction.kubelet import why_first

    rank = build_signal_to_rank_func("single")["pid.available"]
    low, high = pod("low", priority=0), pod("high", priority=5)
    ranked = rank.rank([high, low], PodStatsIndex(()))
    assert why_first(ranked[0], ranked[1], rank) == "its priority 0 is lower than default/high's 5"
    mem = build_signal_to_rank_func("single")["memory.available"]
    a, b = pod("a", mem="1Gi"), pod("b", mem="1Gi")
    s = Summary.from_dict(summary(pods=[pod_stats(b, mem=2 * Gi)]))
    r = mem.rank([b, a], PodStatsIndex(s.pods))
    assert why_first(r[0], r[1], mem) == "it has no usage statistics and default/b has"
    s = Summary.from_dict(summary(pods=[pod_stats(b, mem=2 * Gi), pod_stats(a, mem=512 * Mi)]))
    r = mem.rank([a, b], PodStatsIndex(s.pods))
    assert why_first(r[0], r[1], mem) == "its memory usage exceeds its request and default/a's does not"


def test_eviction_message_compares_with_the_allocated_request_of_a_resized_container() -> None:
    """InPlacePodVerticalScaling is GA: the message reads status.containerStatuses[].
    allocatedResources (a missing allocation is zero), not the spec's request."""
    import attrs

    from kschedlib.api.pod import ContainerStatus
    from kschedlib.api.quantity import parse_quantity

    resized = pod("a", mem="200Mi")
    resized = attrs.evolve(resized, status=attrs.evolve(resized.status, container_statuses=(
        ContainerStatus(name="c", allocated_resources={"memory": parse_quantity("100Mi")}),
    )))
    mgr = _mgr()
    r = mgr.synchronize(_memory_pressure([resized], 50 * Mi, {"a": 150 * Mi}), [resized], 0.0)
    assert r.eviction is not None
    assert r.eviction.message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 150Mi, request is 100Mi, has larger consumption of memory. "
    )
