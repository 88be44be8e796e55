"""The kubelet's node-pressure eviction manager for one node (pkg/kubelet/eviction).

``NodeEvictionManager.synchronize`` is one pass of the kubelet's eviction loop at a point in
time: observe signals, find the thresholds met (soft ones once their grace period has held),
derive the node conditions (held for the pressure transition period), try node-level reclaim,
then rank the active pods and evict at most one. ``reclaim`` repeats passes, taking each
evicted pod's usage off the statistics, until no threshold (with its minimum reclaim) is left.
Signal observations, thresholds met and the pod rankings are in helpers.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import attrs

from kschedlib.api.pod import Pod, PodCondition, is_terminal
from kschedlib.api.quantity import parse_quantity
from kschedlib.errors import QuantityError
from kschedlib.eviction.config import (
    LAYOUT_IMAGEFS,
    LAYOUT_SINGLE,
    LAYOUT_SPLIT,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    SIGNAL_TO_NODE_CONDITION,
    SIGNAL_TO_RESOURCE,
    EvictionConfig,
    Threshold,
    format_bytes,
)
from kschedlib.eviction.helpers import (
    CONTAINER_GC,
    FS_LOCAL_VOLUME,
    FS_LOGS,
    FS_ROOT,
    IMAGE_GC,
    Observation,
    PodStatsIndex,
    RankedPod,
    RankFunc,
    build_signal_to_node_reclaim,
    build_signal_to_rank_func,
    make_signal_observations,
    memory_usage,
    merge_thresholds,
    pod_disk_usage,
    process_usage,
    sort_by_eviction_priority,
    thresholds_met,
    why_first,
)
from kschedlib.eviction.helpers import FS_IMAGES as FS_IMAGES
from kschedlib.eviction.helpers import CmpFunc as CmpFunc
from kschedlib.eviction.helpers import cmp_exceeds_request as cmp_exceeds_request
from kschedlib.eviction.helpers import cmp_priority as cmp_priority
from kschedlib.eviction.helpers import cmp_processes as cmp_processes
from kschedlib.eviction.helpers import cmp_usage_above_request as cmp_usage_above_request
from kschedlib.eviction.helpers import resource_request as resource_request
from kschedlib.eviction.qos import is_critical_pod
from kschedlib.eviction.stats import FsStats, MemoryStats, NodeStats, PodStats, Reclaimable, Summary

IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1
EVICTED_REASON = "Evicted"


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
