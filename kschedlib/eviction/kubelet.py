"""The kubelet's node-pressure eviction manager for one node (pkg/kubelet/eviction).

``NodeEvictionManager.synchronize`` is one pass of the kubelet's eviction loop at a point in
time: observe signals, find the thresholds met (soft ones once their grace period has held),
derive the node conditions (held for the pressure transition period), try node-level reclaim,
then rank the active pods and evict at most one. ``reclaim`` repeats passes, taking each
evicted pod's usage off the statistics, until no threshold (with its minimum reclaim) is left.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import attrs

from kschedlib.api.pod import Pod, PodCondition, is_terminal, pod_priority
from kschedlib.api.quantity import parse_quantity
from kschedlib.api.resource import pod_requests
from kschedlib.errors import QuantityError
from kschedlib.eviction.config import (
    LAYOUT_IMAGEFS,
    LAYOUT_SINGLE,
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
    SIGNAL_TO_NODE_CONDITION,
    SIGNAL_TO_RESOURCE,
    EvictionConfig,
    Threshold,
    format_bytes,
)
from kschedlib.eviction.qos import is_critical_pod
from kschedlib.eviction.stats import FsStats, MemoryStats, NodeStats, PodStats, Reclaimable, Summary

IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1
EVICTED_REASON = "Evicted"

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


# ---------------------------------------------------------------------- statistics after actions


def _fs_add(fs: FsStats | None, freed_bytes: int, freed_inodes: int) -> FsStats | None:
    if fs is None:
        return None

    def plus(v: int | None, d: int) -> int | None:
        return None if v is None else v + d

    def minus(v: int | None, d: int) -> int | None:
        return None if v is None else max(0, v - d)

    return attrs.evolve(
        fs,
        available_bytes=plus(fs.available_bytes, freed_bytes),
        used_bytes=minus(fs.used_bytes, freed_bytes),
        inodes_free=plus(fs.inodes_free, freed_inodes),
        inodes_used=minus(fs.inodes_used, freed_inodes),
    )


def _devices(layout: str) -> dict[str, tuple[str, ...]]:
    """Which summary filesystems share a device with where a kind of data lives."""
    node_dev = ("fs",) if layout == LAYOUT_IMAGEFS else (
        ("fs", "container_fs") if layout == LAYOUT_SPLIT else ("fs", "image_fs", "container_fs")
    )
    image_dev = ("image_fs", "container_fs") if layout == LAYOUT_IMAGEFS else (
        ("image_fs",) if layout == LAYOUT_SPLIT else node_dev
    )
    rootfs_dev = image_dev if layout == LAYOUT_IMAGEFS else node_dev
    return {"node": node_dev, "images": image_dev, "rootfs": rootfs_dev}


def _free_on(node: NodeStats, fields: tuple[str, ...], freed: int, inodes: int) -> NodeStats:
    changes: dict[str, Any] = {f: _fs_add(getattr(node, f), freed, inodes) for f in fields}
    return attrs.evolve(node, **changes)


def summary_without_pod(summary: Summary, pod: Pod, stats: PodStats | None) -> Summary:
    """The statistics once an evicted pod's usage is gone (what the next summary would show)."""
    pods = tuple(p for p in summary.pods if p is not stats)
    if stats is None:
        return attrs.evolve(summary, pods=pods)
    node = summary.node
    ws = memory_usage(stats)

    def mem_free(m: MemoryStats | None) -> MemoryStats | None:
        if m is None or m.working_set_bytes is None:
            return m
        freed = min(ws, m.working_set_bytes)
        avail = None if m.available_bytes is None else m.available_bytes + freed
        return attrs.evolve(m, working_set_bytes=m.working_set_bytes - freed, available_bytes=avail)

    node = attrs.evolve(node, memory=mem_free(node.memory), pods_memory=mem_free(node.pods_memory))
    dev = _devices(summary.layout)
    root_b, root_i = pod_disk_usage(stats, pod, (FS_ROOT,))
    rest_b, rest_i = pod_disk_usage(stats, pod, (FS_LOGS, FS_LOCAL_VOLUME))
    node = _free_on(node, dev["rootfs"], root_b, root_i)
    node = _free_on(node, dev["node"], rest_b, rest_i)
    if node.num_of_running_processes is not None:
        node = attrs.evolve(
            node, num_of_running_processes=max(0, node.num_of_running_processes - process_usage(stats))
        )
    return Summary(node, pods, summary.layout)


def summary_after_gc(summary: Summary, funcs: Sequence[str]) -> tuple[Summary, int, int]:
    """Run image / dead-container garbage collection on the statistics; returns the new
    summary and the bytes and inodes freed."""
    node = summary.node
    rec = node.reclaimable
    dev = _devices(summary.layout)
    freed_b = freed_i = 0
    if CONTAINER_GC in funcs and (rec.dead_containers_bytes or rec.dead_containers_inodes):
        node = _free_on(node, dev["rootfs"], rec.dead_containers_bytes, rec.dead_containers_inodes)
        freed_b += rec.dead_containers_bytes
        freed_i += rec.dead_containers_inodes
        rec = attrs.evolve(rec, dead_containers_bytes=0, dead_containers_inodes=0)
    if IMAGE_GC in funcs and (rec.unused_images_bytes or rec.unused_images_inodes):
        node = _free_on(node, dev["images"], rec.unused_images_bytes, rec.unused_images_inodes)
        freed_b += rec.unused_images_bytes
        freed_i += rec.unused_images_inodes
        rec = attrs.evolve(rec, unused_images_bytes=0, unused_images_inodes=0)
    node = attrs.evolve(node, reclaimable=rec if isinstance(rec, Reclaimable) else Reclaimable())
    return Summary(node, summary.pods, summary.layout), freed_b, freed_i


# ---------------------------------------------------------------------- results


@attrs.define(slots=True, frozen=True)
class NodeReclaim:
    """Node-level reclaim tried before evicting pods."""

    signal: str
    functions: tuple[str, ...]
    freed_bytes: int
    freed_inodes: int
    resolved: bool


@attrs.define(slots=True, frozen=True)
class EvictionDecision:
    """One pod the kubelet evicts, and why."""

    pod: Pod
    evicted_pod: Pod
    signal: str
    threshold: Threshold
    resource: str
    threshold_quantity: str
    available: str
    grace_period_seconds: int
    message: str
    rank: int
    ranking: tuple[RankedPod, ...]
    why_first: str
    below_threshold: bool = True

    def explain(self) -> str:
        kind = "hard" if self.threshold.hard else "soft"
        if self.below_threshold:
            why = f"is below the {kind} threshold {self.threshold_quantity}"
        else:
            why = (f"has not yet regained the {kind} threshold {self.threshold_quantity} plus its "
                   f"minimum reclaim {self.threshold.min_reclaim}")
        lines = [
            f"evict {self.pod.key}: {self.signal} {self.available} {why} "
            f"({self.threshold.signal}<{self.threshold.value}); "
            f"grace period {self.grace_period_seconds}s",
            f"ranked #{self.rank + 1} for {self.resource}: {self.ranking[self.rank].describe(self.resource)}",
        ]
        if self.why_first:
            lines.append(f"ahead of the next pod because {self.why_first}")
        return "\n".join(lines)


@attrs.define(slots=True, frozen=True)
class SyncResult:
    """One pass of the eviction manager (synchronize) on a node."""

    node_name: str
    time: float
    observations: dict[str, Observation]
    thresholds_met: tuple[Threshold, ...]
    awaiting_grace_period: tuple[tuple[Threshold, float], ...]
    thresholds_active: tuple[Threshold, ...]
    node_conditions: tuple[str, ...]
    threshold_to_reclaim: Threshold | None
    resource_to_reclaim: str | None
    node_reclaim: NodeReclaim | None
    ranking: tuple[RankedPod, ...]
    eviction: EvictionDecision | None
    summary_after: Summary
    events: tuple[str, ...]
    local_storage_evictions: tuple[LocalStorageEviction, ...] = ()


def eviction_message(
    resource: str, pod: Pod, stats: PodStats | None, quantity: str | None, available: str | None
) -> str:
    """evictionMessage: the Evicted status message."""
    msg = f"The node was low on resource: {resource}. "
    if quantity is not None and available is not None:
        msg += f"Threshold quantity: {quantity}, available: {available}. "
    if stats is None:
        return msg
    if resource == RESOURCE_MEMORY and pod.spec.resources is not None:
        pod_req = pod.spec.resources.requests.get(resource)
        if pod_req is not None and stats.memory is not None:
            msg += (
                f"Pod {pod.metadata.name} was using {format_bytes(memory_usage(stats))}, "
                f"request is {pod_req}, has larger consumption of {resource}. "
            )
    containers = (*pod.spec.containers, *pod.spec.init_containers)
    for cs in stats.containers:
        for c in containers:
            if c.name != cs.name:
                continue
            req_q = c.resources.requests.get(resource)
            if resource in (RESOURCE_MEMORY, "cpu"):
                # InPlacePodVerticalScaling (GA, locked on in v1.35): the allocated request of a
                # container that has a status, missing meaning zero.
                status = next((st for st in pod.status.container_statuses if st.name == c.name),
                              None)
                if status is not None:
                    req_q = status.allocated_resources.get(resource)
            req = req_q.as_fraction() if req_q is not None else Fraction(0)
            usage: int | None = None
            if resource == RESOURCE_EPHEMERAL_STORAGE:
                if (cs.rootfs is not None and cs.rootfs.used_bytes is not None
                        and cs.logs is not None and cs.logs.used_bytes is not None):
                    usage = cs.rootfs.used_bytes + cs.logs.used_bytes
            elif (resource == RESOURCE_MEMORY and cs.memory is not None
                    and cs.memory.working_set_bytes is not None):
                usage = cs.memory.working_set_bytes
            if usage is not None and usage > req:
                msg += (
                    f"Container {c.name} was using {format_bytes(usage)}, request is "
                    f"{req_q if req_q is not None else '0'}, has larger consumption of {resource}. "
                )
            break
    return msg


def evicted_pod(pod: Pod, message: str) -> Pod:
    """The pod as the kubelet leaves it: Failed, reason Evicted, DisruptionTarget condition."""
    conds = tuple(c for c in pod.status.conditions if c.type != "DisruptionTarget")
    conds += (PodCondition(type="DisruptionTarget", status="True",
                           reason="TerminationByKubelet", message=message),)
    status = attrs.evolve(pod.status, phase="Failed", reason=EVICTED_REASON, message=message,
                          conditions=conds)
    return attrs.evolve(pod, status=status)


# ---------------------------------------------------------------------- local storage limits


def _pod_ephemeral_limit(pod: Pod) -> int | None:
    """resourcehelper.PodLimits for ephemeral-storage: app containers and sidecars summed,
    maxed with each init container, plus overhead; None when no container sets it."""
    key = RESOURCE_EPHEMERAL_STORAGE
    found = False
    total = 0
    sidecars = 0
    peak = 0
    for c in pod.spec.containers:
        q = c.resources.limits.get(key)
        if q is not None:
            found = True
            total += q.value()
    for c in pod.spec.init_containers:
        q = c.resources.limits.get(key)
        v = 0 if q is None else q.value()
        found = found or q is not None
        if c.restart_policy == "Always":
            total += v
            sidecars += v
            peak = max(peak, sidecars)
        else:
            peak = max(peak, v + sidecars)
    if not found:
        return None
    total = max(total, peak)
    if key in pod.spec.overhead:
        total += pod.spec.overhead[key].value()
    return total


def local_storage_violation(pod: Pod, stats: PodStats, dedicated_image_fs: bool) -> str | None:
    """localStorageEviction's checks in order (emptyDir sizeLimit, the pod's ephemeral-storage
    limit, a container's limit); the eviction message, or None."""
    used = {v.name: v.fs.used_bytes for v in stats.volumes}
    for v in pod.spec.volumes:
        if v.empty_dir is None or v.empty_dir.get("sizeLimit") is None:
            continue
        try:
            size = parse_quantity(str(v.empty_dir["sizeLimit"]))
        except QuantityError:
            continue
        u = used.get(v.name)
        if u is not None and size.sign() > 0 and u > size.as_fraction():
            return f'Usage of EmptyDir volume "{v.name}" exceeds the limit "{size}". '
    limit = _pod_ephemeral_limit(pod)
    if limit is not None:
        es = stats.ephemeral_storage
        usage = es.used_bytes if es is not None and es.used_bytes is not None else 0
        if usage > limit:
            return ("Pod ephemeral local storage usage exceeds the total limit of containers "
                    f"{format_bytes(limit)}. ")
    limits = {}
    for c in pod.spec.containers:
        q = c.resources.limits.get(RESOURCE_EPHEMERAL_STORAGE)
        if q is not None and q.value() != 0:
            limits[c.name] = q
    for cs in stats.containers:
        q = limits.get(cs.name)
        if q is None:
            continue
        u = (cs.logs.used_bytes or 0) if cs.logs is not None else 0
        if not dedicated_image_fs and cs.rootfs is not None:
            u += cs.rootfs.used_bytes or 0
        if q.as_fraction() < u:
            return f'Container {cs.name} exceeded its local ephemeral storage limit "{q}". '
    return None


@attrs.define(slots=True, frozen=True)
class LocalStorageEviction:
    """A pod evicted for exceeding a local storage limit (1 s grace period)."""

    pod: Pod
    evicted_pod: Pod
    message: str
    grace_period_seconds: int = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS


# ---------------------------------------------------------------------- the manager


class NodeEvictionManager:
    """The kubelet eviction manager's state for one node, driven by the host's clock."""

    def __init__(self, node_name: str, config: EvictionConfig | None = None) -> None:
        self.node_name = node_name
        self.config = config if config is not None else EvictionConfig.build()
        self.thresholds_first_observed_at: dict[Threshold, float] = {}
        self.node_conditions_last_observed_at: dict[str, float] = {}
        self.thresholds_met: list[Threshold] = []
        self.last_observations: dict[str, Observation] = {}
        self.node_conditions: tuple[str, ...] = ()

    def synchronize(self, summary: Summary, pods: Sequence[Pod], now: float) -> SyncResult:
        """One eviction-loop pass at ``now``; evicts at most one pod."""
        cfg = self.config
        layout = summary.layout
        all_thresholds = cfg.thresholds_for_layout(layout)
        events: list[str] = []
        observations = make_signal_observations(summary)
        met = thresholds_met(all_thresholds, observations, False)
        if self.thresholds_met:
            unresolved = thresholds_met(self.thresholds_met, observations, True)
            met = merge_thresholds(met, unresolved)
        first_observed = {t: self.thresholds_first_observed_at.get(t, now) for t in met}
        conds: list[str] = []
        for t in met:
            c = SIGNAL_TO_NODE_CONDITION.get(t.signal)
            if c is not None and c not in conds:
                conds.append(c)
        last_obs = {c: now for c in conds}
        for c, at in self.node_conditions_last_observed_at.items():
            last_obs.setdefault(c, at)
        period = cfg.eviction_pressure_transition_period
        node_conds = tuple(
            c for c in ("MemoryPressure", "DiskPressure", "PIDPressure")
            if c in last_obs and now - last_obs[c] < period
        )
        active = [t for t, at in first_observed.items() if now - at >= t.grace_period]
        waiting = tuple(
            (t, t.grace_period - (now - at)) for t, at in first_observed.items()
            if now - at < t.grace_period
        )
        self.node_conditions = node_conds
        self.thresholds_first_observed_at = first_observed
        self.node_conditions_last_observed_at = last_obs
        self.thresholds_met = active
        updated = []
        for t in active:
            obs = observations.get(t.signal)
            if obs is None:
                continue
            last = self.last_observations.get(t.signal)
            if last is None or obs.time is None or last.time is None or obs.time > last.time:
                updated.append(t)
        self.last_observations = observations
        active_pods = [p for p in pods if not is_terminal(p)]
        if cfg.local_storage_capacity_isolation:
            index0 = PodStatsIndex(summary.pods)
            local = []
            after_local = summary
            for p in active_pods:
                st = index0.get(p)
                if st is None:
                    continue
                msg = local_storage_violation(p, st, layout == LAYOUT_IMAGEFS)
                if msg is None or is_critical_pod(p):
                    continue
                local.append(LocalStorageEviction(p, evicted_pod(p, msg), msg))
                events.append(f"Evicted {p.key}: {msg}")
                after_local = summary_without_pod(after_local, p, st)
            if local:
                return SyncResult(
                    self.node_name, now, observations, tuple(met), waiting, tuple(updated),
                    node_conds, None, None, None, (), None, after_local, tuple(events), tuple(local),
                )

        def result(
            to_reclaim: Threshold | None = None, resource: str | None = None,
            reclaim: NodeReclaim | None = None, ranking: tuple[RankedPod, ...] = (),
            decision: EvictionDecision | None = None, after: Summary = summary,
        ) -> SyncResult:
            return SyncResult(
                self.node_name, now, observations, tuple(met), waiting, tuple(updated),
                node_conds, to_reclaim, resource, reclaim, ranking, decision, after, tuple(events),
            )

        if not updated:
            return result()
        ordered = sort_by_eviction_priority(updated)
        to_reclaim = next((t for t in ordered if t.signal in SIGNAL_TO_RESOURCE), None)
        if to_reclaim is None:
            return result()
        resource = SIGNAL_TO_RESOURCE[to_reclaim.signal]
        events.append(f"EvictionThresholdMet: Attempting to reclaim {resource}")
        funcs = build_signal_to_node_reclaim(layout).get(to_reclaim.signal, ())
        reclaim = None
        after = summary
        if funcs:
            after, freed_b, freed_i = summary_after_gc(summary, funcs)
            resolved = not thresholds_met(all_thresholds, make_signal_observations(after), True)
            reclaim = NodeReclaim(to_reclaim.signal, funcs, freed_b, freed_i, resolved)
            if resolved:
                return result(to_reclaim, resource, reclaim, after=after)
        rank = build_signal_to_rank_func(layout)[to_reclaim.signal]
        if not active_pods:
            return result(to_reclaim, resource, reclaim, after=after)
        index = PodStatsIndex(after.pods)
        ranking = tuple(rank.rank(active_pods, index))
        quantity, available = self._threshold_met_info(resource, ordered, observations)
        obs = observations[to_reclaim.signal]
        below = to_reclaim.value.resolve(obs.capacity) > obs.available
        for i, entry in enumerate(ranking):
            if entry.critical:
                events.append(f"cannot evict a critical pod {entry.pod.key}")
                continue
            pod = entry.pod
            grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS
            if not to_reclaim.hard:
                # the API server defaults terminationGracePeriodSeconds to 30
                tgps = pod.spec.termination_grace_period_seconds
                grace = min(cfg.eviction_max_pod_grace_period, 30 if tgps is None else tgps)
            stats = index.get(pod)
            msg = eviction_message(resource, pod, stats, quantity, available)
            nxt = next((r for r in ranking[i + 1:] if not r.critical), None)
            why = why_first(entry, nxt, rank) if nxt is not None else ""
            decision = EvictionDecision(
                pod, evicted_pod(pod, msg), to_reclaim.signal, to_reclaim, resource,
                quantity or "", available or "", grace, msg, i, ranking, why, below,
            )
            events.append(f"Evicted {pod.key}: {msg}")
            return result(to_reclaim, resource, reclaim, ranking, decision,
                          summary_without_pod(after, pod, stats))
        events.append("unable to evict any pods from the node")
        return result(to_reclaim, resource, reclaim, ranking, after=after)

    @staticmethod
    def _threshold_met_info(
        resource: str, thresholds: list[Threshold], observations: dict[str, Observation]
    ) -> tuple[str | None, str | None]:
        for t in thresholds:
            if SIGNAL_TO_RESOURCE.get(t.signal) != resource:
                continue
            obs = observations.get(t.signal)
            if obs is None:
                continue
            if t.value.quantity is not None:
                q = t.value.text
            else:
                q = format_bytes(t.value.resolve(obs.capacity), RESOURCE_MEMORY)
            return q, format_bytes(obs.available, resource)
        return None, None

    def reclaim(
        self, summary: Summary, pods: Sequence[Pod], now: float, max_passes: int | None = None
    ) -> list[SyncResult]:
        """Eviction-loop passes at ``now`` until one evicts nothing: each evicted pod's usage
        is taken off the statistics, so evictions continue until the minimum reclaim holds."""
        results: list[SyncResult] = []
        remaining = list(pods)
        limit = max_passes if max_passes is not None else len(remaining) + 2
        for _ in range(max(1, limit)):
            r = self.synchronize(summary, remaining, now)
            results.append(r)
            summary = r.summary_after
            gone = {e.pod.uid for e in r.local_storage_evictions}
            if r.eviction is not None:
                gone.add(r.eviction.pod.uid)
            if not gone:
                break
            remaining = [p for p in remaining if p.uid not in gone]
        return results


__all__ = [
    "CONTAINER_GC",
    "EVICTED_REASON",
    "IMAGE_GC",
    "IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS",
    "LAYOUT_SINGLE",
    "EvictionDecision",
    "NodeEvictionManager",
    "NodeReclaim",
    "Observation",
    "RankFunc",
    "RankedPod",
    "SyncResult",
    "build_signal_to_rank_func",
    "make_signal_observations",
    "thresholds_met",
]
