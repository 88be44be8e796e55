"""Eviction against a ``Scheduler``'s state: kubelet node-pressure eviction, the Eviction API
with PDBs, ``kubectl drain`` and taint-based eviction, by the scheduler's injected clock.

Every pod that leaves goes through the scheduler's own event handlers (a Failed pod's update,
a pod's deletion, a node's update), so the cache frees its resources and the queue moves
pending pods exactly as kube-scheduler would on those events.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from kschedlib.api.node import Node, Taint
from kschedlib.api.pod import Pod, PodCondition
from kschedlib.api.resource_v1 import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.errors import CacheError, EvictionError
from kschedlib.eviction.config import SIGNAL_TO_RESOURCE, EvictionConfig, format_bytes
from kschedlib.eviction.device_taints import (
    DeviceTaintEviction,
    DeviceTaintEvictionController,
)
from kschedlib.eviction.disruption import (
    EvictionResponse,
    deletion_grace_period,
    evaluate_eviction,
    pdb_status,
)
from kschedlib.eviction.drain import (
    STATUS_SKIP,
    STATUS_WARNING,
    DrainOptions,
    DrainResult,
    StuckPod,
    filter_errors,
    pod_delete_status,
)
from kschedlib.eviction.kubelet import (
    EvictionDecision,
    LocalStorageEviction,
    NodeEvictionManager,
    SyncResult,
)
from kschedlib.eviction.qos import pod_oom_score_adjust
from kschedlib.eviction.stats import Summary
from kschedlib.eviction.taints import (
    TaintEviction,
    TaintEvictionController,
    with_lifecycle_taints,
    with_pressure_conditions,
)
from kschedlib.results import Event

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler


@attrs.define(slots=True, frozen=True)
class NodePressureReport:
    """The kubelet's eviction passes on a node at one time and what they changed."""

    node_name: str
    time: float
    passes: tuple[SyncResult, ...]
    evictions: tuple[EvictionDecision, ...]
    node_conditions: tuple[str, ...]
    taints: tuple[Taint, ...]
    local_storage_evictions: tuple[LocalStorageEviction, ...] = ()

    def explain(self) -> str:
        lines = []
        first = self.passes[0] if self.passes else None
        if first is not None:
            for sig, obs in sorted(first.observations.items()):
                res = SIGNAL_TO_RESOURCE.get(sig, "")
                lines.append(f"signal {sig}: available {format_bytes(obs.available, res)} "
                             f"of {format_bytes(obs.capacity, res)}")
            for t in first.thresholds_met:
                lines.append(f"threshold met: {t}")
            for t, left in first.awaiting_grace_period:
                lines.append(f"threshold {t} held, {left:g}s of its grace period left")
        for p in self.passes:
            if p.node_reclaim is not None:
                r = p.node_reclaim
                lines.append(
                    f"node-level reclaim for {r.signal}: {', '.join(r.functions)} freed "
                    f"{r.freed_bytes} bytes, {r.freed_inodes} inodes; "
                    + ("pressure relieved without evicting pods" if r.resolved else "not enough")
                )
        for le in self.local_storage_evictions:
            lines.append(f"evict {le.pod.key} (local storage limit, grace period "
                         f"{le.grace_period_seconds}s): {le.message.strip()}")
        for d in self.evictions:
            lines.append(d.explain())
        lines.append(f"node conditions: {', '.join(self.node_conditions) or 'none'}")
        return "\n".join(lines)


@attrs.define(slots=True)
class _Terminating:
    pod: Pod
    deadline: float


def _as_config(config: EvictionConfig | Mapping[str, Any] | str | None) -> EvictionConfig:
    if isinstance(config, EvictionConfig):
        return config
    return EvictionConfig.from_kubelet_configuration(config)


class Evictions:
    """Eviction for a ``Scheduler`` (``sched.eviction``): ``observe_node`` (kubelet
    node-pressure eviction), ``evict`` (the Eviction API), ``drain`` (kubectl drain),
    ``update_node_status`` and ``tick`` (taint-based eviction, graceful deletions)."""

    def __init__(
        self,
        scheduler: Scheduler,
        kubelet_config: EvictionConfig | Mapping[str, Any] | str | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.kubelet_config = _as_config(kubelet_config)
        self._node_configs: dict[str, EvictionConfig] = {}
        self._managers: dict[str, NodeEvictionManager] = {}
        self.taint_controller = TaintEvictionController(
            scheduler.feature_gates.enabled("TaintTolerationComparisonOperators")
        )
        self.device_taint_controller = DeviceTaintEvictionController()
        self._terminating: dict[str, _Terminating] = {}
        self.events: list[Event] = []
        self.evicted: list[Pod] = []
        # The device-taint evictions of the last tick (DRADeviceTaints).
        self.device_taint_evictions: list[DeviceTaintEviction] = []
        scheduler.add_ticker(self)  # Scheduler.tick() runs this part's tick() too

    # ------------------------------------------------------------------ helpers

    def _now(self) -> float:
        return float(self.scheduler.clock.now())

    def _event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.append(Event(type_, reason, obj, message, self._now()))

    def _node(self, name: str) -> Node:
        try:
            node = self.scheduler.cache.get_node(name).node
        except (KeyError, CacheError):
            node = None
        if node is None:
            raise EvictionError(f'node "{name}" is not in the scheduler cache')
        return node

    def _pods_on(self, name: str) -> list[Pod]:
        try:
            info = self.scheduler.cache.get_node(name)
        except (KeyError, CacheError):
            raise EvictionError(f'node "{name}" is not in the scheduler cache') from None
        cache = self.scheduler.cache
        # assumed pods are the scheduler's own bookkeeping: no kubelet or API client sees them
        return sorted((pi.pod for pi in info.pods if not cache.is_assumed_pod(pi.pod)),
                      key=lambda p: p.key)

    def _find(self, pod: Pod | str) -> Pod | None:
        if isinstance(pod, Pod):
            try:
                return self.scheduler.cache.get_pod(pod)
            except (KeyError, CacheError):
                pass
        key = pod if isinstance(pod, str) else pod.key
        uid = None if isinstance(pod, str) else pod.uid
        sched = self.scheduler
        sched.cache.update_snapshot(sched.snapshot)  # incremental; read without copies
        for info in sched.snapshot.list():
            for pi in info.pods:
                p = pi.pod
                if p.key == key or p.uid == key or (uid is not None and p.uid == uid):
                    return p
        for p in sched.pending_pods() + sched.bound_pods():
            if p.key == key or p.uid == key or (uid is not None and p.uid == uid):
                return p
        return None

    def set_kubelet_config(
        self, config: EvictionConfig | Mapping[str, Any] | str | None, node: str | None = None
    ) -> None:
        """The kubelet configuration of one node, or of every node without its own."""
        cfg = _as_config(config)
        if node is None:
            self.kubelet_config = cfg
            for name, mgr in self._managers.items():
                if name not in self._node_configs:
                    mgr.config = cfg
        else:
            self._node_configs[node] = cfg
            if node in self._managers:
                self._managers[node].config = cfg

    def manager(self, node_name: str) -> NodeEvictionManager:
        """The eviction manager (its threshold and condition state) of a node."""
        mgr = self._managers.get(node_name)
        if mgr is None:
            cfg = self._node_configs.get(node_name, self.kubelet_config)
            mgr = self._managers[node_name] = NodeEvictionManager(node_name, cfg)
        return mgr

    def _delete(self, pod: Pod, grace: int, reason: str, message: str) -> None:
        """Delete a pod as the API server does: at once with grace 0, else mark it
        terminating and remove it when its grace period ends (``tick``)."""
        if grace <= 0:
            self._terminating.pop(pod.uid, None)
            self.scheduler.delete_pod(pod)
            return
        now = self._now()
        pending = self._terminating.get(pod.uid)
        if pending is not None:  # a second delete can only shorten the grace period
            pending.deadline = min(pending.deadline, now + grace)
            return
        stamp = _dt.datetime.fromtimestamp(now, tz=_dt.timezone.utc)
        conds = tuple(c for c in pod.status.conditions if c.type != "DisruptionTarget")
        conds += (PodCondition(type="DisruptionTarget", status="True", reason=reason, message=message),)
        terminating = attrs.evolve(
            pod,
            metadata=attrs.evolve(pod.metadata, deletion_timestamp=stamp),
            status=attrs.evolve(pod.status, conditions=conds),
        )
        self.scheduler.update_pod(terminating)
        self._terminating[pod.uid] = _Terminating(terminating, now + grace)

    def terminating_pods(self) -> list[tuple[Pod, float]]:
        """Pods deleted with a grace period that are still terminating, with their deadline."""
        return [(t.pod, t.deadline) for t in self._terminating.values()]

    # ------------------------------------------------------------------ kubelet

    def observe_node(
        self,
        node_name: str,
        summary: Summary | Mapping[str, Any],
        *,
        until_reclaimed: bool = True,
    ) -> NodePressureReport:
        """Run the kubelet's eviction loop on a node with these statistics, at the clock's
        time, and apply it: evicted pods turn Failed and leave the cache, the node gets its
        pressure conditions and NoSchedule taints. With ``until_reclaimed`` the loop repeats
        (each pass evicts at most one pod) until the minimum reclaim holds."""
        stats = summary if isinstance(summary, Summary) else Summary.from_dict(summary)
        node = self._node(node_name)
        pods = self._pods_on(node_name)
        mgr = self.manager(node_name)
        now = self._now()
        passes = mgr.reclaim(stats, pods, now) if until_reclaimed else [mgr.synchronize(stats, pods, now)]
        decisions = []
        local: list[LocalStorageEviction] = []
        for p in passes:
            for e in p.events:
                if e.startswith("EvictionThresholdMet"):
                    self._event("Warning", "EvictionThresholdMet", f"node/{node_name}", e.split(": ", 1)[1])
            for le in p.local_storage_evictions:
                local.append(le)
                self.scheduler.update_pod(le.evicted_pod)
                self.evicted.append(le.evicted_pod)
                self._terminating.pop(le.pod.uid, None)
                self._event("Warning", "Evicted", le.pod.key, le.message)
            d = p.eviction
            if d is None:
                continue
            decisions.append(d)
            self.scheduler.update_pod(d.evicted_pod)
            self.evicted.append(d.evicted_pod)
            self._terminating.pop(d.pod.uid, None)
            self._event("Warning", "Evicted", d.pod.key, d.message)
        conditions = mgr.node_conditions
        new = with_lifecycle_taints(with_pressure_conditions(node, conditions), no_execute=False)
        if new != node:
            self.scheduler.update_node(new)
        return NodePressureReport(node_name, now, tuple(passes), tuple(decisions), conditions,
                                  new.spec.taints, tuple(local))

    def oom_score_adj(self, pod: Pod | str) -> dict[str, int]:
        """The oom_score_adj the kubelet gives each container of a bound pod."""
        found = self._find(pod)
        if found is None or not found.spec.node_name:
            raise EvictionError(f"pod {pod if isinstance(pod, str) else pod.key} is not bound to a node")
        node = self._node(found.spec.node_name)
        cap = node.status.capacity.get("memory")
        if cap is None or cap.value() <= 0:
            raise EvictionError(f'node "{node.metadata.name}": status.capacity.memory is not set')
        return pod_oom_score_adjust(found, cap.value())

    # ------------------------------------------------------------------ API-initiated

    def evict(
        self, pod: Pod | str, grace_period_seconds: int | None = None, dry_run: bool = False
    ) -> EvictionResponse:
        """POST pods/<name>/eviction against the scheduler's pods and PDBs."""
        found = self._find(pod)
        if found is None:
            name = pod.rsplit("/", 1)[-1] if isinstance(pod, str) else pod.metadata.name
            key = pod if isinstance(pod, str) else pod.key
            return EvictionResponse(key, 404, "NotFound", f'pods "{name}" not found')
        pdbs = [o for o in self.scheduler.objects.list_objects("PodDisruptionBudget")
                if isinstance(o, PodDisruptionBudget)]
        response, updated = evaluate_eviction(found, pdbs, self._now(), grace_period_seconds, dry_run)
        if updated is not None:
            self.scheduler.update_object(updated)
        if response.deleted:
            grace = response.grace_period_seconds or 0
            self._delete(found, grace, "EvictionByEvictionAPI", "Eviction API: evicting")
            self._event("Normal", "Killing" if grace else "Deleted", found.key,
                        f"evicted by the Eviction API ({response.explanation})")
        return response

    def drain(self, node_name: str, options: DrainOptions | None = None, **flags: Any) -> DrainResult:
        """kubectl drain: cordon, then evict every pod but DaemonSet and mirror pods; report
        the pods that block (filter errors) or stay (refused evictions) and why."""
        opts = options if options is not None else DrainOptions(**flags)
        node = self._node(node_name)
        if not node.spec.unschedulable:
            self.scheduler.update_node(attrs.evolve(node, spec=attrs.evolve(node.spec, unschedulable=True)))
        verdicts = [(p, pod_delete_status(p, opts)) for p in self._pods_on(node_name)]
        warn: dict[str, list[str]] = {}
        skipped = []
        for p, st in verdicts:
            if st.reason == STATUS_WARNING:
                warn.setdefault(st.message, []).append(p.key)
            if not st.delete:
                skipped.append((p, st.message or st.reason))
        warnings = tuple(f"{msg}: {', '.join(keys)}" for msg, keys in warn.items())
        errors = filter_errors(verdicts)
        if errors:
            return DrainResult(node_name, True, (), tuple(skipped), warnings, tuple(errors))
        evicted: list[EvictionResponse] = []
        stuck: list[StuckPod] = []
        grace = opts.grace_period_seconds if opts.grace_period_seconds >= 0 else None
        for p, st in verdicts:
            if not st.delete or st.reason == STATUS_SKIP:
                continue
            if opts.disable_eviction:
                g = deletion_grace_period(p, grace)
                self._delete(p, g, "DeletionByKubectl", "kubectl drain --disable-eviction")
                evicted.append(EvictionResponse(p.key, 200, "", "", deleted=True, grace_period_seconds=g,
                                                explanation="deleted (--disable-eviction)"))
                continue
            r = self.evict(p, grace)
            ns, name = p.metadata.namespace, p.metadata.name
            if r.code == 200:
                evicted.append(r)
            elif r.code == 404:
                continue
            elif r.code == 429:
                stuck.append(StuckPod(p, r, f'error when evicting pods/"{name}" -n "{ns}" '
                                            f"(will retry after 5s): {r.message}"))
            else:
                stuck.append(StuckPod(p, r, f'error when evicting pods/"{name}" -n "{ns}": {r.message}'))
        return DrainResult(node_name, True, tuple(evicted), tuple(skipped), warnings, (), tuple(stuck))

    def sync_pdbs(
        self, scale_of: Callable[[Pod], tuple[str, int] | None] | None = None
    ) -> list[PodDisruptionBudget]:
        """Recompute every PDB's status as the disruption controller would from the pods the
        scheduler knows (``scale_of`` as for :func:`pdb_status`); returns the PDBs changed."""
        pods = self.scheduler.bound_pods() + self.scheduler.pending_pods()
        now = self._now()
        changed = []
        for obj in list(self.scheduler.objects.list_objects("PodDisruptionBudget")):
            if not isinstance(obj, PodDisruptionBudget):
                continue
            new = pdb_status(obj, pods, now, scale_of)
            if new != obj:
                self.scheduler.update_object(new)
                changed.append(new)
        return changed

    # ------------------------------------------------------------------ taints and time

    def update_node_status(self, node: Node) -> Node:
        """A node's new status (e.g. Ready=False) with the taints the node lifecycle
        controller adds for its conditions (NoSchedule, and not-ready/unreachable
        NoExecute); the taint-eviction controller sees it at once."""
        new = with_lifecycle_taints(node)
        self.scheduler.update_node(new)
        self._sync_taints(self._now())
        return new

    def _sync_taints(self, now: float) -> None:
        """Hand the taint-eviction controller the pods of nodes with NoExecute taints (read
        from the scheduler's snapshot, brought up to date, without copying)."""
        sched = self.scheduler
        cache = sched.cache
        cache.update_snapshot(sched.snapshot)
        nodes: dict[str, Node] = {}
        pods_by_node: dict[str, list[Pod]] = {}
        for info in sched.snapshot.list():
            n = info.node
            if n is None or not any(t.effect == "NoExecute" for t in n.spec.taints):
                continue
            nodes[n.metadata.name] = n
            pods_by_node[n.metadata.name] = [
                pi.pod for pi in info.pods
                if pi.pod.uid not in self._terminating and not cache.is_assumed_pod(pi.pod)
            ]

        def exists(pod: Pod) -> bool:
            try:
                cache.get_pod(pod)
            except (KeyError, CacheError):
                return False
            return True

        self.taint_controller.sync(nodes, pods_by_node, now, exists)

    def tick(self) -> list[TaintEviction]:
        """Work due at the clock's time: graceful deletions that ended, and the
        taint-eviction controller's deletions (NoExecute taints a pod does not tolerate,
        at once; tolerated ones once tolerationSeconds have passed)."""
        now = self._now()
        for uid, t in sorted(self._terminating.items(), key=lambda kv: kv[1].deadline):
            if t.deadline <= now:
                del self._terminating[uid]
                self.scheduler.delete_pod(t.pod)
        self._sync_taints(now)
        fired = self.taint_controller.due(now)
        for te in fired:
            self._event("Normal", "TaintManagerEviction", te.pod.key, f"Marking for deletion Pod {te.pod.key}")
            grace = deletion_grace_period(te.pod)
            self._delete(te.pod, grace, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
        self.device_taint_evictions = self._device_taint_pass(now)
        return fired

    def _device_taint_pass(self, now: float) -> list[DeviceTaintEviction]:
        """With DRADeviceTaints: pods whose allocated devices have a NoExecute taint they do
        not tolerate (DeviceTaintRules too with DRADeviceTaintRules) are deleted."""
        sched = self.scheduler
        gates = sched.feature_gates
        if not gates.enabled("DRADeviceTaints"):
            return []
        objects = sched.objects
        slices = [s for s in objects.list_objects("ResourceSlice") if isinstance(s, ResourceSlice)]
        if not slices:
            return []
        rules: list[DeviceTaintRule] = []
        if gates.enabled("DRADeviceTaintRules"):
            rules = [r for r in objects.list_objects("DeviceTaintRule")
                     if isinstance(r, DeviceTaintRule)]
        claims = [c for c in objects.list_objects("ResourceClaim")
                  if isinstance(c, ResourceClaim) and c.status.allocation is not None]
        classes = {c.metadata.name: c for c in objects.list_objects("DeviceClass")
                   if isinstance(c, DeviceClass)}
        pods = [p for p in sched.bound_pods() if p.uid not in self._terminating]
        ctl = self.device_taint_controller
        ctl.sync(pods, claims, slices, rules, classes, now)
        fired = ctl.due(now)
        for ev in fired:
            self._event("Normal", "DeviceTaintManagerEviction", ev.pod.key,
                        f"Marking for deletion Pod {ev.pod.key}")
            self._delete(ev.pod, deletion_grace_period(ev.pod), "DeletionByDeviceTaintManager",
                         "Device taint manager: deleting due to NoExecute taint")
        return fired
