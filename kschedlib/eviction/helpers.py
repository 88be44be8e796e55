"""The kubelet eviction manager's helpers (pkg/kubelet/eviction/helpers.go): signal
observations, thresholds met, pod usage and the rankings that order pods for eviction."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction

import attrs

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.api.resource import pod_requests
from kschedlib.eviction.config import (
    LAYOUT_IMAGEFS,
    LAYOUT_SPLIT,
    OP_LESS_THAN,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_INODES,
    RESOURCE_MEMORY,
    RESOURCE_PIDS,
    SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE,
    SIGNAL_CONTAINERFS_AVAILABLE,
    SIGNAL_CONTAINERFS_INODES_FREE,
    SIGNAL_IMAGEFS_AVAILABLE,
    SIGNAL_IMAGEFS_INODES_FREE,
    SIGNAL_MEMORY_AVAILABLE,
    SIGNAL_NODEFS_AVAILABLE,
    SIGNAL_NODEFS_INODES_FREE,
    SIGNAL_PID_AVAILABLE,
    SIGNAL_TO_RESOURCE,
    Threshold,
    format_bytes,
)
from kschedlib.eviction.qos import is_critical_pod
from kschedlib.eviction.stats import PodStats, Summary

FS_ROOT = "root"
FS_LOGS = "logs"
FS_LOCAL_VOLUME = "localVolumeSource"
FS_IMAGES = "images"

IMAGE_GC = "DeleteUnusedImages"
CONTAINER_GC = "DeleteAllUnusedContainers"


# ---------------------------------------------------------------------- observations


@attrs.define(slots=True, frozen=True)
class Observation:
    """A signal's observed value: ``available`` of ``capacity``."""

    available: int
    capacity: int
    time: float | None = None


def make_signal_observations(summary: Summary) -> dict[str, Observation]:
    """makeSignalObservations: the signals the summary supports."""
    node = summary.node
    out: dict[str, Observation] = {}
    mem = node.memory
    if mem is not None and mem.available_bytes is not None and mem.working_set_bytes is not None:
        out[SIGNAL_MEMORY_AVAILABLE] = Observation(
            mem.available_bytes, mem.available_bytes + mem.working_set_bytes, mem.time
        )
    pm = node.pods_memory
    if pm is not None and pm.available_bytes is not None and pm.working_set_bytes is not None:
        out[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = Observation(
            pm.available_bytes, pm.available_bytes + pm.working_set_bytes, pm.time
        )
    for fs, avail_sig, inodes_sig in (
        (node.fs, SIGNAL_NODEFS_AVAILABLE, SIGNAL_NODEFS_INODES_FREE),
        (node.image_fs, SIGNAL_IMAGEFS_AVAILABLE, SIGNAL_IMAGEFS_INODES_FREE),
        (node.container_fs, SIGNAL_CONTAINERFS_AVAILABLE, SIGNAL_CONTAINERFS_INODES_FREE),
    ):
        if fs is None:
            continue
        if fs.available_bytes is not None and fs.capacity_bytes is not None:
            out[avail_sig] = Observation(fs.available_bytes, fs.capacity_bytes, fs.time)
        if fs.inodes_free is not None and fs.inodes is not None:
            out[inodes_sig] = Observation(fs.inodes_free, fs.inodes, fs.time)
    if node.max_pid is not None and node.num_of_running_processes is not None:
        out[SIGNAL_PID_AVAILABLE] = Observation(
            node.max_pid - node.num_of_running_processes, node.max_pid, node.rlimit_time
        )
    return out


def thresholds_met(
    thresholds: Iterable[Threshold],
    observations: dict[str, Observation],
    enforce_min_reclaim: bool,
) -> list[Threshold]:
    """thresholdsMet: ``available < value`` (``value + minReclaim`` when enforcing it)."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        quantity = t.value.resolve(obs.capacity)
        if enforce_min_reclaim and t.min_reclaim is not None:
            quantity += t.min_reclaim.resolve(obs.capacity)
        if t.operator == OP_LESS_THAN and quantity > obs.available:
            out.append(t)
    return out


def _same_threshold(a: Threshold, b: Threshold) -> bool:
    return (
        a.grace_period == b.grace_period and a.operator == b.operator and a.signal == b.signal
        and a.value.quantity == b.value.quantity
        and (a.value.quantity is not None or a.value.percentage == b.value.percentage)
    )


def merge_thresholds(a: list[Threshold], b: list[Threshold]) -> list[Threshold]:
    out = list(a)
    for t in b:
        if not any(_same_threshold(x, t) for x in out):
            out.append(t)
    return out


def _eviction_priority_less(a: Threshold, b: Threshold) -> bool:
    """byEvictionPriority.Less: memory first, thresholds without a resource last."""
    return (
        a.signal in (SIGNAL_MEMORY_AVAILABLE, SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE)
        or b.signal not in SIGNAL_TO_RESOURCE
    )


def sort_by_eviction_priority(thresholds: list[Threshold]) -> list[Threshold]:
    """sort.Sort(byEvictionPriority) — an insertion sort for the short lists the kubelet has."""
    out = list(thresholds)
    for i in range(1, len(out)):
        j = i
        while j > 0 and _eviction_priority_less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


# ---------------------------------------------------------------------- pod usage


class PodStatsIndex:
    """cachedStatsFunc: pod stats by UID (by namespace/name for stats without a UID)."""

    def __init__(self, pods: Iterable[PodStats]) -> None:
        self._by_uid: dict[str, PodStats] = {}
        self._by_key: dict[str, PodStats] = {}
        for p in pods:
            if p.uid:
                self._by_uid[p.uid] = p
            self._by_key.setdefault(p.key, p)

    def get(self, pod: Pod) -> PodStats | None:
        if pod.metadata.uid and pod.metadata.uid in self._by_uid:
            return self._by_uid[pod.metadata.uid]
        found = self._by_key.get(pod.key)
        if found is not None and found.uid and pod.metadata.uid and found.uid != pod.metadata.uid:
            return None
        return found


def memory_usage(stats: PodStats) -> int:
    m = stats.memory
    return 0 if m is None or m.working_set_bytes is None else m.working_set_bytes


def process_usage(stats: PodStats) -> int:
    return stats.process_count or 0


def _is_local_volume(pod: Pod, name: str) -> bool:
    for v in pod.spec.volumes:
        if v.name != name:
            continue
        if v.host_path is not None or v.config_map is not None:
            return True
        if v.empty_dir is not None and not v.empty_dir.get("medium"):
            return True
    return False


def pod_disk_usage(stats: PodStats, pod: Pod, measure: Sequence[str]) -> tuple[int, int]:
    """podDiskUsage: (bytes, inodes) over the measured filesystems."""
    disk = inodes = 0
    for c in stats.containers:
        for kind, fs in ((FS_ROOT, c.rootfs), (FS_LOGS, c.logs)):
            if kind in measure and fs is not None:
                disk += fs.used_bytes or 0
                inodes += fs.inodes_used or 0
    if FS_LOCAL_VOLUME in measure:
        local = [v.name for v in pod.spec.volumes if _is_local_volume(pod, v.name)]
        for name in local:
            for vs in stats.volumes:
                if vs.name == name:
                    disk += vs.fs.used_bytes or 0
                    inodes += vs.fs.inodes_used or 0
                    break
    return disk, inodes


def resource_request(pod: Pod, resource: str) -> Fraction:
    """v1resource.GetResourceRequestQuantity: requests (pod-level when set), plus overhead
    when the total is non-zero."""
    q = pod_requests(pod, exclude_overhead=True).get(resource)
    req = q.as_fraction() if q is not None else Fraction(0)
    if req != 0 and resource in pod.spec.overhead:
        req += pod.spec.overhead[resource].as_fraction()
    return req


# ---------------------------------------------------------------------- ranking


@attrs.define(slots=True, frozen=True)
class RankedPod:
    """A pod in the kubelet's eviction order with the values the ranking compared."""

    pod: Pod
    stats_found: bool
    usage: int
    request: Fraction
    exceeds_request: bool
    priority: int
    usage_above_request: Fraction
    critical: bool

    def describe(self, resource: str) -> str:
        if not self.stats_found:
            return f"{self.pod.key}: no usage statistics (ranked first); priority {self.priority}"
        unit = format_bytes
        if resource == RESOURCE_PIDS:
            return f"{self.pod.key}: priority {self.priority}, {self.usage} processes"
        over = "exceeds" if self.exceeds_request else "is within"
        return (
            f"{self.pod.key}: {resource} usage {unit(self.usage, resource)} {over} its request "
            f"{unit(self.request, resource)}; priority {self.priority}; usage above request "
            f"{unit(self.usage_above_request, resource)}"
        )


def _cmp_bool(a: bool, b: bool) -> int:
    """cmpBool: true before false."""
    if a == b:
        return 0
    return -1 if a else 1


def _sign(x: Fraction | int) -> int:
    return (x > 0) - (x < 0)


CmpFunc = Callable[[RankedPod, RankedPod], int]


def _cmp_found_first(a: RankedPod, b: RankedPod) -> int | None:
    if not a.stats_found or not b.stats_found:
        return _cmp_bool(not a.stats_found, not b.stats_found)
    return None


def cmp_exceeds_request(a: RankedPod, b: RankedPod) -> int:
    r = _cmp_found_first(a, b)
    return r if r is not None else _cmp_bool(a.exceeds_request, b.exceeds_request)


def cmp_priority(a: RankedPod, b: RankedPod) -> int:
    return _sign(a.priority - b.priority)


def cmp_usage_above_request(a: RankedPod, b: RankedPod) -> int:
    r = _cmp_found_first(a, b)
    return r if r is not None else _sign(b.usage_above_request - a.usage_above_request)


def cmp_processes(a: RankedPod, b: RankedPod) -> int:
    r = _cmp_found_first(a, b)
    return r if r is not None else _sign(b.usage - a.usage)


def _ordered_by(cmps: Sequence[CmpFunc]) -> CmpFunc:
    def cmp(a: RankedPod, b: RankedPod) -> int:
        for f in cmps[:-1]:
            r = f(a, b)
            if r != 0:
                return r
        return cmps[-1](a, b)

    return cmp


@attrs.define(slots=True, frozen=True)
class RankFunc:
    """A signal's ranking: the comparisons, what usage is measured and against which request."""

    resource: str
    measure: tuple[str, ...] = ()

    @property
    def comparisons(self) -> tuple[CmpFunc, ...]:
        if self.resource == RESOURCE_PIDS:
            return (cmp_priority, cmp_processes)
        return (cmp_exceeds_request, cmp_priority, cmp_usage_above_request)

    def entry(self, pod: Pod, stats: PodStats | None) -> RankedPod:
        prio = pod_priority(pod)
        crit = is_critical_pod(pod)
        if stats is None:
            return RankedPod(pod, False, 0, Fraction(0), False, prio, Fraction(0), crit)
        if self.resource == RESOURCE_MEMORY:
            usage = memory_usage(stats)
            req = resource_request(pod, RESOURCE_MEMORY)
            return RankedPod(pod, True, usage, req, usage > req, prio, usage - req, crit)
        if self.resource == RESOURCE_PIDS:
            usage = process_usage(stats)
            return RankedPod(pod, True, usage, Fraction(0), False, prio, Fraction(usage), crit)
        disk, inodes = pod_disk_usage(stats, pod, self.measure)
        usage = disk if self.resource == RESOURCE_EPHEMERAL_STORAGE else inodes
        # exceedDiskRequests compares with the request of the measured resource, disk()
        # subtracts the ephemeral-storage request in both cases (as the kubelet does).
        req = resource_request(pod, self.resource)
        eph = resource_request(pod, RESOURCE_EPHEMERAL_STORAGE)
        return RankedPod(pod, True, usage, req, usage > req, prio, usage - eph, crit)

    def rank(self, pods: Sequence[Pod], index: PodStatsIndex) -> list[RankedPod]:
        entries = [self.entry(p, index.get(p)) for p in pods]
        return sorted(entries, key=functools.cmp_to_key(_ordered_by(self.comparisons)))


_ALL_FS = (FS_IMAGES, FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME)


def build_signal_to_rank_func(layout: str) -> dict[str, RankFunc]:
    """buildSignalToRankFunc: which filesystems each disk signal measures per layout."""
    ranks = {
        SIGNAL_MEMORY_AVAILABLE: RankFunc(RESOURCE_MEMORY),
        SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE: RankFunc(RESOURCE_MEMORY),
        SIGNAL_PID_AVAILABLE: RankFunc(RESOURCE_PIDS),
    }
    if layout == LAYOUT_IMAGEFS:
        node_m: tuple[str, ...] = (FS_LOGS, FS_LOCAL_VOLUME)
        image_m: tuple[str, ...] = (FS_ROOT, FS_IMAGES)
        container_m = image_m
    elif layout == LAYOUT_SPLIT:
        node_m = (FS_LOGS, FS_LOCAL_VOLUME, FS_ROOT)
        image_m = (FS_IMAGES,)
        container_m = node_m
    else:
        node_m = image_m = container_m = _ALL_FS
    for avail, inodes, m in (
        (SIGNAL_NODEFS_AVAILABLE, SIGNAL_NODEFS_INODES_FREE, node_m),
        (SIGNAL_IMAGEFS_AVAILABLE, SIGNAL_IMAGEFS_INODES_FREE, image_m),
        (SIGNAL_CONTAINERFS_AVAILABLE, SIGNAL_CONTAINERFS_INODES_FREE, container_m),
    ):
        ranks[avail] = RankFunc(RESOURCE_EPHEMERAL_STORAGE, m)
        ranks[inodes] = RankFunc(RESOURCE_INODES, m)
    return ranks


def build_signal_to_node_reclaim(layout: str) -> dict[str, tuple[str, ...]]:
    """buildSignalToNodeReclaimFuncs: container and image GC per disk signal and layout."""
    both = (CONTAINER_GC, IMAGE_GC)
    if layout == LAYOUT_IMAGEFS:
        node: tuple[str, ...] = ()
        image: tuple[str, ...] = both
        container = image
    elif layout == LAYOUT_SPLIT:
        image = (IMAGE_GC,)
        node = (CONTAINER_GC,)
        container = node
    else:
        node = image = container = both
    return {
        SIGNAL_NODEFS_AVAILABLE: node, SIGNAL_NODEFS_INODES_FREE: node,
        SIGNAL_IMAGEFS_AVAILABLE: image, SIGNAL_IMAGEFS_INODES_FREE: image,
        SIGNAL_CONTAINERFS_AVAILABLE: container, SIGNAL_CONTAINERFS_INODES_FREE: container,
    }


def why_first(first: RankedPod, second: RankedPod, rank: RankFunc) -> str:
    """Which comparison put ``first`` ahead of ``second``."""
    other = second.pod.key
    for f in rank.comparisons:
        r = f(first, second)
        if r == 0:
            continue
        if f is cmp_priority:
            return f"its priority {first.priority} is lower than {other}'s {second.priority}"
        if first.stats_found != second.stats_found:
            return f"it has no usage statistics and {other} has"
        if f is cmp_exceeds_request:
            return f"its {rank.resource} usage exceeds its request and {other}'s does not"
        if f is cmp_processes:
            return f"it runs more processes ({first.usage}) than {other} ({second.usage})"
        return (
            f"its usage above request ({format_bytes(first.usage_above_request, rank.resource)}) "
            f"is larger than {other}'s ({format_bytes(second.usage_above_request, rank.resource)})"
        )
    return f"it ties with {other} and came first in the node's pod list"
