"""The Scheduler facade: kube-scheduler's scheduleOne loop with no I/O.

The host feeds cluster events (nodes, pods, other objects), supplies a binder and a clock,
and gets results, events and explanations back. Nothing runs in the background: the host
calls ``schedule_one``/``run`` and ``tick`` as its clock advances.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod, is_terminal
from kschedlib.api.scheduling import Workload, validate_workload_update
from kschedlib.backend.cache import Cache
from kschedlib.backend.queue.hints import build_queueing_hints
from kschedlib.backend.queue.nominator import CLEAR_NOMINATED_NODE, NominatingInfo, NominatingMode
from kschedlib.backend.queue.queue_events import (
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    pod_scheduling_properties_change,
)
from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from kschedlib.backend.snapshot import Snapshot
from kschedlib.backend.workloadmanager import WorkloadManager
from kschedlib.config.loader import ConfigSource, load_config
from kschedlib.errors import CacheError, InvalidObjectError, KSchedError
from kschedlib.eventhandlers import (
    EVENT_NODE_ADD,
    EVENT_NODE_DELETE,
    node_scheduling_properties_change,
    object_event,
)
from kschedlib.features import FeatureGates
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from kschedlib.framework.events import ActionType
from kschedlib.framework.extender import Extender
from kschedlib.framework.handle import ObjectStore, RealClock
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.registry import PluginFactory, PluginSpec, Registry
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code, Status, from_exception
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.gangscheduling import MSG_WAITING_AT_PERMIT
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.results import (
    Event,
    Explanation,
    NodeScoreDetail,
    NodeVerdict,
    Outcome,
    PluginScoreDetail,
    SchedulerMetrics,
    SchedulingResult,
)
from kschedlib.schedule_one import ScheduleResult, SchedulingAlgorithm, SchedulingError

if TYPE_CHECKING:
    from kschedlib.eviction.controller import Evictions
    from kschedlib.whatif.fork import Transaction
    from kschedlib.whatif.reports import (
        CapacityReport,
        DrainReport,
        RemovableNodesReport,
        Verdict,
    )

UNSCHEDULABLE_LEFTOVER_FLUSH_PERIOD = 30.0

# Constructor arguments fork() passes itself rather than copying from the parent.
_FORK_OWN_ARGS = frozenset(
    {"self", "config", "binder", "clock", "host_hooks", "plugins", "explain", "_registry"}
)


def _as_pod(obj: Any) -> Pod:
    """A Pod, or a Pod's Kubernetes JSON as a dict."""
    if isinstance(obj, Pod):
        return obj
    if isinstance(obj, Mapping):
        return Pod.from_dict(dict(obj))
    raise InvalidObjectError(
        type(obj).__name__, "", "expected a Pod or a Pod's Kubernetes JSON as a dict"
    )


def _as_node(obj: Any) -> Node:
    """A Node, or a Node's Kubernetes JSON as a dict."""
    if isinstance(obj, Node):
        return obj
    if isinstance(obj, Mapping):
        return Node.from_dict(dict(obj))
    raise InvalidObjectError(
        type(obj).__name__, "", "expected a Node or a Node's Kubernetes JSON as a dict"
    )


class Binder(Protocol):
    """The host's binder: ``bind`` raising means the binding failed."""

    def bind(self, pod: Pod, node_name: str) -> None: ...


class HostHooks(Protocol):
    """Optional host callbacks for side effects the real scheduler makes through the API."""

    def delete_pod(self, pod: Pod, reason: str) -> None: ...


class AcceptingBinder:
    """A binder that accepts every binding (simulation)."""

    def bind(self, pod: Pod, node_name: str) -> None:
        return None


@attrs.define(slots=True)
class _PendingBinding:
    """A pod past its scheduling cycle whose binding cycle waits on Permit."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: Pod
    host: str
    explanation: Explanation | None


class _Hooks:
    """What plugins ask of the host (preemption victims, nominations), applied to the
    scheduler's own state at once and reported to the host's hooks."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched

    def delete_pod(self, pod: Pod, reason: str) -> None:
        s = self._sched
        s._victims.append(pod)
        if s._txns:  # inside a transaction: recorded, delivered on commit
            s._txns[-1].evictions.append((pod, reason))
        elif s._host_hooks is not None:
            s._host_hooks.delete_pod(pod, reason)
        s.delete_pod(pod)

    def clear_nominated_node_name(self, pod: Pod) -> None:
        s = self._sched
        s.queue.delete_nominated_pod_if_exists(pod)
        current = s._pending.get(pod.uid)
        if current is not None and current.status.nominated_node_name:
            s._set_pending(current.with_nominated_node_name(""))

    def bind(self, pod: Pod, node_name: str) -> None:
        s = self._sched
        if s._txns:  # inside a transaction: recorded, delivered on commit
            s._txns[-1].bindings.append((pod, node_name))
            return
        s._binder.bind(pod, node_name)

    def update_object(self, obj: Any) -> None:
        """An API write by a plugin (DynamicResources' claim status), applied as the informer
        would deliver it."""
        self._sched.update_object(obj)

    def delete_object(self, obj: Any) -> None:
        """An API delete by a plugin (DynamicResources' extended-resource claim)."""
        self._sched.delete_object(obj)


def _top_score_indices(scores: Sequence[Any], top: int, selected: str | None) -> list[int]:
    """Indices of the ``top`` best-scored nodes (ties by name), ``selected`` always kept."""
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i].total_score, scores[i].name))
    keep = ranked[:top]
    if selected and all(scores[i].name != selected for i in keep):
        pick = [i for i in ranked if scores[i].name == selected]
        keep = [*keep[: max(top - 1, 0)], *pick]
    return keep


class Scheduler:
    """kube-scheduler v1.35 as a library: profiles, queue, cache, plugins and preemption."""

    def __init__(
        self,
        config: ConfigSource = None,
        *,
        binder: Binder | None = None,
        clock: Any = None,
        seed: int | None = None,
        deterministic: bool = False,
        extenders: Sequence[Extender] = (),
        plugins: Mapping[str, PluginFactory | PluginSpec] | None = None,
        host_hooks: HostHooks | None = None,
        assumed_pod_ttl: float = 0.0,
        explain: bool | Iterable[str] = True,
        feature_gates: FeatureGates | Mapping[str, bool] | str | None = None,
        node_local_cache: bool = True,
        explain_top_nodes: int | None = None,
        _registry: Registry | None = None,
    ) -> None:
        # What fork() needs to build an equal scheduler: every constructor argument but those
        # it sets itself (any argument added later is carried over too).
        self._init_kwargs: dict[str, Any] = {
            k: v for k, v in locals().items() if k not in _FORK_OWN_ARGS
        }
        self._txns: list[Transaction] = []
        # One FeatureGates value per scheduler: config defaulting, frameworks (plugins) and the
        # queue read it; nothing is global.
        self.feature_gates = FeatureGates.of(feature_gates)
        gates = self.feature_gates
        registry = in_tree_registry()
        if _registry is not None:
            registry = _registry
        elif plugins:
            extra = Registry()
            for name, f in plugins.items():
                if isinstance(f, PluginSpec):
                    extra.register(name, f.factory, f.args_type)
                else:
                    extra.register(name, f)
            registry = registry.merge(extra)
        self.registry = registry
        self.config = load_config(config, registry, gates)
        self.clock = clock if clock is not None else RealClock()
        self._binder: Binder = binder if binder is not None else AcceptingBinder()
        self._host_hooks = host_hooks
        # Explanations cost time and memory (a per-node breakdown per attempt): True records
        # the last attempt of every pod, False none, a collection of namespace/name keys
        # every attempt of just those pods.
        self.explain_enabled = explain is True
        self._explain_keys: frozenset[str] | None = (
            None if isinstance(explain, bool) else frozenset(explain)
        )
        self.explanation_history: dict[str, list[Explanation]] = {}
        """Every attempt's explanation of the pods named in ``explain=`` (oldest first)."""
        # With a limit, explanations keep the scores of the best nodes only (ties by name; the
        # selected node always among them): what a report shows, at a fraction of the cost.
        self._explain_top_nodes = explain_top_nodes
        self.objects = ObjectStore()
        self.cache = Cache(
            ttl=assumed_pod_ttl,
            clock=self.clock,
            pod_level_resources=gates.enabled("PodLevelResources"),
        )
        self.snapshot = Snapshot()
        self._hooks = _Hooks(self)
        self.extenders = list(extenders)
        self._gang = gates.enabled("GangScheduling")
        self._declared = gates.enabled("NodeDeclaredFeatures")
        self._nnn_for_expectation = gates.enabled("NominatedNodeNameForExpectation")
        self._clear_nnn_after_binding = gates.enabled("ClearingNominatedNodeNameAfterBinding")
        self._track_workloads = self._gang or gates.enabled("GenericWorkload")
        self.workload_manager = WorkloadManager()
        self.frameworks: dict[str, Framework] = {}
        for profile in self.config.profiles:
            fwk = Framework(
                profile,
                registry,
                objects=self.objects,
                clock=self.clock,
                host=self._hooks,
                binder=self._hooks,
                nominator=self,
                percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                snapshot=self.snapshot,
                rng_seed=seed,
                deterministic=deterministic,
                extenders=self.extenders,
                feature_gates=gates,
                workload_manager=self.workload_manager,
                pod_activator=self._activate_from_plugin,
                node_local_cache=node_local_cache,
            )
            self.frameworks[profile.scheduler_name] = fwk
        first = next(iter(self.frameworks.values()))
        self.queue = PriorityQueue(
            less=first.queue_sort_less(),
            clock=self.clock,
            pre_enqueue_plugins={n: f.pre_enqueue_plugins for n, f in self.frameworks.items()},
            queueing_hints={
                n: build_queueing_hints(f.plugins.values()) for n, f in self.frameworks.items()
            },
            pod_initial_backoff=float(self.config.pod_initial_backoff_seconds),
            pod_max_backoff=float(self.config.pod_max_backoff_seconds),
            pod_lister=self._lookup_pending,
            namespace_labels=self._namespace_labels,
            pop_from_backoff_q=gates.enabled("SchedulerPopFromBackoffQ"),
        )
        self.algorithm = SchedulingAlgorithm(
            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
            extenders=self.extenders,
            seed=seed,
            deterministic=deterministic,
        )
        self.events: list[Event] = []
        self.metrics = SchedulerMetrics()
        self.explanations: dict[str, Explanation] = {}
        self._pending: dict[str, Pod] = {}
        self._pending_keys: dict[str, str] = {}
        """namespace/name -> UID of the pending pods."""
        self._waiting: dict[str, _PendingBinding] = {}
        self._victims: list[Pod] = []
        self._last_leftover_flush = self.clock.now()
        self._in_cycle: tuple[CycleState, Pod, str] | None = None
        """(state, assumed pod, node) once a cycle has assumed its pod, for undoing it."""
        self._eviction: Any = None

    @property
    def eviction(self) -> Evictions:
        """Eviction against this scheduler's state (kubelet node-pressure eviction, the
        Eviction API and drain, taint-based eviction); created on first use."""
        if self._eviction is None:
            from kschedlib.eviction.controller import Evictions

            self._eviction = Evictions(self)
        return self._eviction  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ lookups

    def _lookup_pending(self, namespace: str, name: str) -> Pod | None:
        uid = self._pending_keys.get(f"{namespace}/{name}")
        return None if uid is None else self._pending.get(uid)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        ns = self.objects.get_namespace(namespace)
        return None if ns is None else ns.metadata.labels

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The nominator the frameworks read (the queue's)."""
        return self.queue.nominated_pods_for_node(node_name)

    def has_nominated_pods(self) -> bool:
        return bool(self.queue.nominator.nominated_pod_to_node)

    def nominated_filter_keys(
        self, min_priority: int, exclude_uid: str
    ) -> Callable[[str], tuple[tuple[Pod, bool], ...]]:
        return self.queue.nominated_filter_keys(min_priority, exclude_uid)

    def nominated_node_names(self) -> Collection[str]:
        """The nodes some pod is nominated to (a live view)."""
        return self.queue.nominator.nominated_pods.keys()

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.frameworks

    def pending_pods_count(self) -> dict[str, int]:
        """Pending pods per queue: active, backoff, unschedulable, gated."""
        return dict(self.queue.pending_pods_count())

    @property
    def queue_metrics(self) -> Any:
        """The queue's counters (incoming pods per queue and event, attempts per profile)."""
        return self.queue.metrics

    def pending_pods(self) -> list[Pod]:
        """Pods waiting to be scheduled, in any queue."""
        return list(self.queue.pending_pods()[0])

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name)

    # ------------------------------------------------------------------ node events

    # Unknown objects, as kube-scheduler's event handlers treat them: an update of an unknown
    # pod or node adds it (the cache's UpdateNode creates the node, the queue's Update adds
    # the pod), a delete of an unknown pod or node is ignored (kube-scheduler logs it).
    # Every method taking a Pod or Node also takes its Kubernetes JSON as a dict.

    def add_node(self, node: Node | Mapping[str, Any]) -> None:
        node = _as_node(node)
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD, None, node)

    def update_node(self, node: Node | Mapping[str, Any]) -> None:
        """Replace a node; an unknown node is added (kube-scheduler's cache.UpdateNode)."""
        node = _as_node(node)
        try:
            old = self.cache.get_node(node.metadata.name).node
        except (KeyError, CacheError):
            old = None
        if old is None:
            self.add_node(node)
            return
        self.cache.update_node(old, node)
        for ev in node_scheduling_properties_change(node, old):
            if ev.action_type == ActionType.UpdateNodeDeclaredFeature and not self._declared:
                continue
            self.queue.move_all_to_active_or_backoff_queue(ev, old, node)

    def delete_node(self, node: Node | Mapping[str, Any] | str) -> None:
        """A node is gone (by object or name); an unknown node is ignored."""
        name = node if isinstance(node, str) else _as_node(node).metadata.name
        try:
            old = self.cache.get_node(name).node
        except (KeyError, CacheError):
            old = None
        if old is None:
            return
        self.cache.remove_node(name)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_DELETE, old, None)

    # ------------------------------------------------------------------ pod events

    def add_pod(self, pod: Pod | Mapping[str, Any]) -> None:
        """A pod appeared: assigned pods go to the cache, our pending pods to the queue.
        Terminal pods are invisible, as they are to kube-scheduler's informers."""
        pod = _as_pod(pod)
        if not pod.metadata.namespace:  # built in code: the API server requires one
            raise InvalidObjectError(
                f"pod {pod.metadata.name}", "metadata.namespace", "Required value"
            )
        if is_terminal(pod):
            return
        if pod.spec.node_name:
            self._add_assigned(pod)
        elif self.responsible_for(pod):
            if pod.uid in self._pending:
                raise CacheError(f"pod {pod.key} is already pending")
            other = self._lookup_pending(pod.metadata.namespace, pod.metadata.name)
            if other is not None:
                raise CacheError(
                    f"pod {pod.key} (uid {pod.uid!r}) has the namespace/name of pending pod "
                    f"{other.key} (uid {other.uid!r}): delete that one first"
                )
            self._pending[pod.uid] = pod
            self._pending_keys[pod.key] = pod.uid
            if self._track_workloads:
                self.workload_manager.add_pod(pod)
            self.queue.add(pod)
            if pod.status.nominated_node_name:
                self.queue.add_nominated_pod(PodInfo.of(pod), None)
            if self._gang:
                # A new pod may complete a gang that others wait for (GangScheduling).
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_UNSCHEDULED_POD_ADD, None, pod
                )

    def _add_assigned(self, pod: Pod) -> None:
        if self._track_workloads:
            self.workload_manager.add_pod(pod)
        known = self._cached(pod)
        if known is not None and not self.cache.is_assumed_pod(pod):
            self.cache.update_pod(known, pod)
            for ev in pod_scheduling_properties_change(pod, known):
                self.queue.assigned_pod_updated(known, pod, ev)
            return
        self.cache.add_pod(pod)
        self.queue.assigned_pod_added(pod)

    def _cached(self, pod: Pod) -> Pod | None:
        try:
            return self.cache.get_pod(pod)
        except (KeyError, CacheError):
            return None

    def update_pod(self, pod: Pod | Mapping[str, Any]) -> None:
        """A new version of a pod (matched by UID); an unknown pod is added."""
        pod = _as_pod(pod)
        pending = self._pending.get(pod.uid)
        if is_terminal(pod):
            self.delete_pod(pod)
            return
        if pending is not None:
            if pod.spec.node_name:
                # Bound elsewhere (another scheduler or the host): leave the queue.
                self._forget_pending(pending)
                self._add_assigned(pod)
                return
            self._set_pending(pod, old=pending)
            return
        cached = self._cached(pod)
        if cached is not None:
            if self.cache.is_assumed_pod(pod):
                return
            self.cache.update_pod(cached, pod)
            for ev in pod_scheduling_properties_change(pod, cached):
                self.queue.assigned_pod_updated(cached, pod, ev)
            return
        self.add_pod(pod)

    def _drop_pending(self, pod: Pod) -> None:
        gone = self._pending.pop(pod.uid, None)
        if gone is not None and self._pending_keys.get(gone.key) == gone.uid:
            del self._pending_keys[gone.key]

    def _set_pending(self, pod: Pod, old: Pod | None = None) -> None:
        old = old if old is not None else self._pending.get(pod.uid)
        self._pending[pod.uid] = pod
        self.queue.update(old, pod)

    def _forget_pending(self, pod: Pod) -> None:
        self._drop_pending(pod)
        self.workload_manager.delete_pod(pod)
        self.queue.delete(pod)
        for fwk in self.frameworks.values():
            fwk.reject_waiting_pod(pod.uid)

    def delete_pod(self, pod: Pod | Mapping[str, Any] | str) -> None:
        """A pod is gone (by object, UID or namespace/name); an unknown pod is ignored."""
        if not isinstance(pod, (Pod, str)):
            pod = _as_pod(pod)
        found = self._find_pod(pod)
        if found is None:
            return
        pending = self._pending.get(found.uid)
        if pending is not None and not pending.spec.node_name:
            self._forget_pending(pending)
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_UNSCHEDULED_POD_DELETE, pending, None
            )
            return
        cached = self._cached(found)
        if cached is None:
            return
        for fwk in self.frameworks.values():
            fwk.reject_waiting_pod(found.uid)
        self._waiting.pop(found.uid, None)
        self.workload_manager.delete_pod(cached)
        self.cache.remove_pod(cached)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, cached, None)

    def _find_pod(self, pod: Pod | str) -> Pod | None:
        if isinstance(pod, Pod):
            return pod
        if pod in self._pending:
            return self._pending[pod]
        for p in self._pending.values():
            if p.key == pod:
                return p
        for p in self._cached_pods():
            if p.uid == pod or p.key == pod:
                return p
        return None

    # ------------------------------------------------------------------ other objects

    def add_object(self, obj: Any) -> None:
        """Namespaces, PDBs, storage objects, services, controllers and Workloads plugins read.
        A Workload's pod groups are immutable: changing them raises InvalidObjectError and
        leaves the stored Workload as it was."""
        if isinstance(obj, Workload):
            prev = self.objects.get_object("Workload", ObjectStore.key_of(obj))
            if isinstance(prev, Workload):
                problem = validate_workload_update(obj, prev)
                if problem is not None:
                    field, _, msg = problem.partition(": ")
                    raise InvalidObjectError(f"workload {obj.key}", field, msg)
        old = self.objects.upsert(obj)
        action = ActionType.Add if old is None else ActionType.Update
        ev = object_event(obj.kind, action)
        if ev is not None:
            self.queue.move_all_to_active_or_backoff_queue(ev, old, obj)

    update_object = add_object

    def delete_object(self, obj: Any) -> None:
        old = self.objects.delete(obj)
        ev = object_event(obj.kind, ActionType.Delete)
        if ev is not None and old is not None:
            self.queue.move_all_to_active_or_backoff_queue(ev, old, None)

    def apply(self, objects: Iterable[Any]) -> None:
        """Add many objects of any kind: nodes first, then other objects, then pods."""
        objs = list(objects)
        for o in objs:
            if isinstance(o, Node):
                self.add_node(o)
        for o in objs:
            if not isinstance(o, (Node, Pod)):
                self.add_object(o)
        for o in objs:
            if isinstance(o, Pod):
                self.add_pod(o)

    def _activate_from_plugin(self, pods: Any) -> None:
        """Handle.Activate for plugins: pending pods by object (a mapping or an iterable)."""
        items = pods.values() if isinstance(pods, Mapping) else pods
        self.queue.activate([p for p in items if p.uid in self._pending])

    def why_pending(self, pod: Pod | str) -> str | None:
        """Why a pending or waiting pod is not bound yet: the gating PreEnqueue plugin's
        message, the Permit wait (with the gang's progress), or the last FailedScheduling
        message; None for an unknown or bound pod."""
        found = self._find_pod(pod)
        if found is None:
            return None
        pb = self._waiting.get(found.uid)
        if pb is not None:
            return self._waiting_message(pb.fwk, pb.assumed)
        current = self._pending.get(found.uid)
        if current is None:
            return None
        fwk = self.framework_for(current)
        if fwk is not None:
            st = fwk.run_pre_enqueue_plugins(current)
            if st is not None:
                return f"{st.plugin}: {st.message()}" + self._gang_detail(fwk, current)
        for ev in reversed(self.events):
            if ev.pod == current.key and ev.reason == "FailedScheduling":
                return ev.message
        return "waiting in the scheduling queue"

    def _gang_detail(self, fwk: Framework, pod: Pod) -> str:
        pl = fwk.plugins.get("GangScheduling")
        describe = getattr(pl, "describe", None)
        if describe is None or pod.spec.workload_ref is None:
            return ""
        text = describe(pod)
        return f" ({text})" if text else ""

    def _waiting_message(self, fwk: Framework, pod: Pod) -> str:
        wp = fwk.get_waiting_pod(pod.uid)
        plugins = wp.get_pending_plugins() if wp is not None else []
        parts = []
        for name in plugins:
            pl = fwk.plugins.get(name)
            msg = MSG_WAITING_AT_PERMIT if name == "GangScheduling" else "waiting at Permit"
            parts.append(f"{name}: {msg}")
            if pl is not None and name == "GangScheduling":
                parts[-1] += self._gang_detail(fwk, pod)
        return "; ".join(parts) or "waiting at Permit"

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move pods to activeQ now, skipping their backoff (as podsToActivate does)."""
        self.queue.activate(list(pods))

    # ------------------------------------------------------------------ time

    def tick(self) -> None:
        """Periodic work due at the clock's time: backoff completions, the unschedulable
        leftover flush, expired assumed pods and Permit timeouts."""
        self.queue.flush_backoff_q_completed()
        now = self.clock.now()
        if now - self._last_leftover_flush >= UNSCHEDULABLE_LEFTOVER_FLUSH_PERIOD:
            self._last_leftover_flush = now
            self.queue.flush_unschedulable_pods_leftover()
        for pod in self.cache.cleanup_expired_assumed_pods(now):
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)

    # ------------------------------------------------------------------ the loop

    def run(self, until_idle: bool = True, max_cycles: int | None = None) -> list[SchedulingResult]:
        """Schedule until no pod is ready (and none waits at Permit with a verdict), or for
        ``max_cycles`` attempts."""
        results: list[SchedulingResult] = []
        cycles = 0
        while max_cycles is None or cycles < max_cycles:
            self.tick()
            resumed = self.resume_waiting()
            results.extend(resumed)
            r = self.schedule_one()
            if r is None:
                if not resumed:
                    break
                continue
            results.append(r)
            cycles += 1
            if not until_idle and cycles >= 1 and max_cycles is None:
                break
        return results

    def schedule_one(self) -> SchedulingResult | None:
        """Pop one pod and run its scheduling cycle (and binding cycle unless it waits at
        Permit). Returns None when no pod is ready."""
        while True:
            qpi = self.queue.pop()
            if qpi is None:
                return None
            pod = self._pending.get(qpi.pod.uid, qpi.pod)
            fwk = self.framework_for(pod)
            if fwk is None or pod.metadata.deletion_timestamp is not None or pod.uid not in self._pending:
                self.queue.done(pod.uid)
                continue
            if qpi.pod is not pod:
                qpi.pod_info.update(pod)
            return self._schedule(fwk, qpi)

    def schedule_pod(self, pod: Pod | str) -> SchedulingResult | None:
        """Run a scheduling cycle for one given pending pod now, whatever its place in the
        queue (what-if checks, harnesses). None when the pod is not pending or is gated."""
        found = self._find_pod(pod)
        if found is None or found.uid not in self._pending:
            return None
        current = self._pending[found.uid]
        fwk = self.framework_for(current)
        if fwk is None:
            return None
        qpi = self.queue.pop_pod(current)
        if qpi is None:
            return None
        if qpi.pod is not current:
            qpi.pod_info.update(current)
        return self._schedule(fwk, qpi)

    def _schedule(self, fwk: Framework, qpi: QueuedPodInfo) -> SchedulingResult:
        """One scheduling cycle; whatever goes wrong inside it (an error in kschedlib itself
        included) ends as an Error attempt with the pod requeued, never a lost pod."""
        start = time.perf_counter()
        self._in_cycle = None
        try:
            return self._scheduling_cycle(fwk, qpi, start)
        except Exception as exc:
            return self._internal_error(fwk, qpi, exc, start)
        finally:
            self._in_cycle = None

    def _internal_error(
        self, fwk: Framework, qpi: QueuedPodInfo, exc: Exception, start: float
    ) -> SchedulingResult:
        """An unexpected exception in a cycle: undo the assumption (Unreserve, forget the
        assumed pod) and handle it as an Error status (requeue with backoff, FailedScheduling)."""
        st = from_exception(exc)
        msg = f"internal error: {st.message()}"
        cycle = self._in_cycle
        self._in_cycle = None
        if cycle is not None:
            state, assumed, host = cycle
            self._waiting.pop(assumed.uid, None)
            with contextlib.suppress(Exception):
                fwk.waiting_pods.remove(assumed.uid)
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(Exception):
                self.cache.forget_pod(assumed)
        uid = qpi.pod.uid
        if uid not in self._pending and self._cached(qpi.pod) is None:
            # The error struck between leaving the queue and joining the cache: pending again.
            pod = qpi.pod.with_node_name("") if qpi.pod.spec.node_name else qpi.pod
            self._pending[uid] = pod
            self._pending_keys[pod.key] = uid
        try:
            return self._fail(fwk, qpi, Status(Code.Error, (msg,), "", exc),
                              CLEAR_NOMINATED_NODE, None, start, msg)
        except Exception:
            self._ensure_queued(qpi)
            self.events.append(
                Event("Warning", "FailedScheduling", qpi.pod.key, msg, self.clock.now())
            )
            return SchedulingResult(qpi.pod, Outcome.Error, None, msg, None, (), None)

    def _ensure_queued(self, qpi: QueuedPodInfo) -> None:
        """Last resort after a failed failure handling: the pod is pending again somewhere."""
        with contextlib.suppress(Exception):
            self.queue.done(qpi.pod.uid)
        pod = self._pending.get(qpi.pod.uid)
        if pod is None or pod.spec.node_name:
            return
        with contextlib.suppress(Exception):
            if not self.queue.where_is(pod):
                self.queue.add(pod)

    def _scheduling_cycle(
        self, fwk: Framework, qpi: QueuedPodInfo, start: float
    ) -> SchedulingResult:
        pod = qpi.pod
        state = CycleState()
        self._victims = []
        keys = self._explain_keys
        explain = self.explain_enabled or (keys is not None and pod.key in keys)
        try:
            self.cache.update_snapshot(self.snapshot)
        except KSchedError as exc:
            err = Status.error(exc)
            return self._fail(fwk, qpi, err, None, None, start, str(exc))
        try:
            result = self.algorithm.schedule_pod(
                fwk, state, pod, self.snapshot, explain=explain
            )
        except NoNodesAvailableError as exc:
            none = Status(Code.UnschedulableAndUnresolvable, (str(exc),))
            return self._fail(fwk, qpi, none, CLEAR_NOMINATED_NODE, None, start, str(exc))
        except FitError as fit:
            return self._fit_error(fwk, state, qpi, fit, start, explain)
        except SchedulingError as exc:
            part = exc.partial
            exp = (
                self._explain(fwk, pod, part.diagnosis, part)
                if part is not None and self.explain_enabled
                else None
            )
            return self._fail(
                fwk, qpi, Status.error(exc), CLEAR_NOMINATED_NODE, exp, start, str(exc)
            )
        explanation = self._explain(fwk, pod, result.diagnosis, result) if explain else None
        host = result.suggested_host
        assumed = pod.with_node_name(host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as exc:
            return self._fail(fwk, qpi, Status.error(exc), CLEAR_NOMINATED_NODE, explanation, start, str(exc))
        self._in_cycle = (state, assumed, host)
        self.queue.delete_nominated_pod_if_exists(assumed)
        st: Status | None = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and st.code != Code.Success:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail_single_node(fwk, qpi, st, host, explanation, start)
        st = fwk.run_permit_plugins(state, assumed, host)
        if st is not None and st.code not in (Code.Success, Code.Wait):
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail_single_node(fwk, qpi, st, host, explanation, start)
        pb = _PendingBinding(fwk, state, qpi, assumed, host, explanation)
        if st is not None and st.code == Code.Wait:
            if self._nnn_for_expectation:
                # The pod will wait on Permit: it is expected on ``host`` meanwhile.
                pb.assumed = assumed.with_nominated_node_name(host)
            self._waiting[pod.uid] = pb
            self.metrics.observe_attempt("waiting", time.perf_counter() - start)
            msg = self._waiting_message(fwk, assumed)
            return SchedulingResult(
                pb.assumed, Outcome.Waiting, host, msg, None, (), explanation
            )
        return self._binding_cycle(pb, start)

    def resume_waiting(self) -> list[SchedulingResult]:
        """Continue the binding cycles of pods whose Permit wait ended (allowed, rejected
        or timed out)."""
        out: list[SchedulingResult] = []
        for uid, pb in list(self._waiting.items()):
            verdict = pb.fwk.wait_on_permit(pb.assumed)
            if verdict is not None and verdict.code == Code.Wait:
                continue
            del self._waiting[uid]
            start = time.perf_counter()
            self._in_cycle = (pb.state, pb.assumed, pb.host)
            try:
                out.append(self._binding_cycle(pb, start, verdict))
            except Exception as exc:
                out.append(self._internal_error(pb.fwk, pb.qpi, exc, start))
            finally:
                self._in_cycle = None
        return out

    def _binding_cycle(
        self, pb: _PendingBinding, start: float, permit: Status | None = None
    ) -> SchedulingResult:
        """WaitOnPermit's verdict (``permit``), PreBind, Bind, PostBind; Unreserve and forget
        on failure."""
        fwk, state, assumed, host = pb.fwk, pb.state, pb.assumed, pb.host
        st = permit
        if (
            st is not None
            and st.is_rejected()
            and assumed.uid in self._pending
            and not self._pending[assumed.uid].spec.node_name
        ):
            # A rejection at WaitOnPermit fails as a FitError on the chosen node.
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(CacheError):
                self.cache.forget_pod(assumed)
            result = self._fail_single_node(fwk, pb.qpi, st, host, pb.explanation, start)
            # Deferred, and not for the pod itself: it stays unschedulable until an event.
            uid = assumed.uid
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
            )
            return result
        if (st is None or st.code == Code.Success) and self._nnn_for_expectation:
            flight = fwk.run_pre_bind_pre_flights(state, assumed, host)
            if flight is None:
                # PreBind has work to do: the pod is expected on ``host`` meanwhile.
                assumed = assumed.with_nominated_node_name(host)
                pb.assumed = assumed
            elif flight.code != Code.Skip:
                st = flight
        if st is None or st.code == Code.Success:
            st = fwk.run_pre_bind_plugins(state, assumed, host)
        if st is None or st.code == Code.Success:
            st = self._bind(fwk, state, assumed, host)
        if st is not None and st.code != Code.Success:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(CacheError):
                self.cache.forget_pod(assumed)
            rejected = st.is_rejected()
            if not rejected:
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, assumed, None
                )
            outcome = Outcome.Unschedulable if rejected else Outcome.BindFailed
            failed = self._fail(fwk, pb.qpi, st, CLEAR_NOMINATED_NODE, pb.explanation, start,
                                st.message(), outcome=outcome)
            if rejected:
                # Deferred, and not for the pod itself (handleBindingCycleError).
                uid = assumed.uid
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
                )
            return failed
        self.cache.finish_binding(assumed)
        # The binding is confirmed at once, as the informer's add of the assigned pod would.
        self._drop_pending(assumed)
        self.queue.done(assumed.uid)
        bound = assumed
        if assumed.status.nominated_node_name and self._clear_nnn_after_binding:
            bound = assumed.with_nominated_node_name("")
        self.cache.add_pod(bound)
        self.queue.assigned_pod_added(bound)
        if self._track_workloads:
            self.workload_manager.add_pod(bound)
        msg = f"Successfully assigned {assumed.key} to {host}"
        self.events.append(Event("Normal", "Scheduled", assumed.key, msg, self.clock.now()))
        fwk.run_post_bind_plugins(state, assumed, host)
        self.metrics.observe_attempt("scheduled", time.perf_counter() - start)
        return SchedulingResult(bound, Outcome.Scheduled, host, msg, None, (), pb.explanation)

    def _bind(self, fwk: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        for ext in self.extenders:
            if ext.is_binder() and ext.is_interested(pod):
                try:
                    ext.bind(pod, host)
                except Exception as exc:
                    return from_exception(exc, ext.name)
                return None
        return fwk.run_bind_plugins(state, pod, host)

    # ------------------------------------------------------------------ failures

    def _fit_error(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError, start: float,
        explain: bool = True,
    ) -> SchedulingResult:
        pod = qpi.pod
        nominating: NominatingInfo | None = None
        ran = fwk.has_post_filter_plugins()
        if ran:
            self.metrics.preemption_attempts += 1
            result, st = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
            fit.diagnosis.post_filter_msg = st.message() if st is not None else ""
            if result is not None:
                # An empty name clears an earlier nomination (a failed retry).
                nominating = NominatingInfo(result.nominated_node_name, NominatingMode.Override)
        explanation = self._explain(fwk, pod, fit.diagnosis, None) if explain else None
        self.metrics.preemption_victims += len(self._victims)
        message = fit.message()
        return self._fail(
            fwk, qpi, Status(Code.Unschedulable, (message,)), nominating, explanation, start,
            message, diagnosis=fit.diagnosis, post_filter_ran=ran,
        )

    def _fail_single_node(
        self, fwk: Framework, qpi: QueuedPodInfo, st: Status, host: str,
        explanation: Explanation | None, start: float,
    ) -> SchedulingResult:
        if st.is_rejected():
            d = Diagnosis()
            d.node_to_status.set(host, st)
            d.add_plugin_status(st)
            fit = FitError(qpi.pod, 1, d)
            return self._fail(fwk, qpi, st, CLEAR_NOMINATED_NODE, explanation, start,
                              fit.message(), diagnosis=d)
        return self._fail(fwk, qpi, st, CLEAR_NOMINATED_NODE, explanation, start, st.message())

    def _fail(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        st: Status,
        nominating: NominatingInfo | None,
        explanation: Explanation | None,
        start: float,
        message: str,
        *,
        diagnosis: Diagnosis | None = None,
        outcome: Outcome | None = None,
        post_filter_ran: bool = False,
    ) -> SchedulingResult:
        """handleSchedulingFailure: requeue as unschedulable, record the nomination and the
        FailedScheduling event."""
        pod = self._pending.get(qpi.pod.uid)
        victims = tuple(self._victims)
        self._victims = []
        if diagnosis is not None:
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(diagnosis.pending_plugins)
        else:  # an error: no plugin rejected the pod, so any event may help
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        nominated: str | None = None
        if pod is None or pod.spec.node_name:
            self.queue.done(qpi.pod.uid)
        else:
            if nominating is not None and nominating.nominating_mode == NominatingMode.Override:
                new = pod.with_nominated_node_name(nominating.nominated_node_name)
                if new != pod:
                    self._pending[pod.uid] = new
                    pod = new
                nominated = nominating.nominated_node_name or None
            qpi.pod_info.update(pod)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle())
            self.queue.add_nominated_pod(qpi.pod_info, nominating)
        rejected = st.is_rejected()
        self.events.append(
            Event("Warning", "FailedScheduling", qpi.pod.key, message, self.clock.now())
        )
        self.metrics.observe_attempt(
            "unschedulable" if rejected else "error", time.perf_counter() - start
        )
        if explanation is not None:
            self.explanations[qpi.pod.key] = explanation
        final = outcome or (Outcome.Unschedulable if rejected else Outcome.Error)
        return SchedulingResult(
            pod or qpi.pod, final, None, message, nominated, victims, explanation, post_filter_ran
        )

    # ------------------------------------------------------------------ explanations

    def _explain(
        self, fwk: Framework, pod: Pod, d: Diagnosis, result: ScheduleResult | None
    ) -> Explanation:
        pre = None
        rejected: dict[str, NodeVerdict] = {}
        if d.pre_filter_msg:
            a = d.node_to_status.absent_nodes_status
            pre = NodeVerdict(a.plugin or None, a.code.name, a.reasons)
        else:
            for name, st in d.node_to_status.items():
                rejected[name] = NodeVerdict(st.plugin or None, st.code.name, st.reasons)
            absent = d.node_to_status.absent_nodes_status
            if absent.reasons:
                feasible = {ni.name for ni in (result.feasible if result else [])}
                for ni in self.snapshot.list():
                    if ni.name not in rejected and ni.name not in feasible:
                        rejected[ni.name] = NodeVerdict(None, absent.code.name, absent.reasons)
        scores: dict[str, NodeScoreDetail] = {}
        feasible_names: tuple[str, ...] = ()
        selected = None
        fast = False
        if result is not None:
            feasible_names = tuple(sorted(ni.name for ni in result.feasible))
            selected = result.suggested_host or None
            fast = result.nominated_fast_path
            b = result.breakdown
            indices: Iterable[int] = range(len(result.scores))
            top = self._explain_top_nodes
            if top is not None:
                indices = _top_score_indices(result.scores, top, selected)
            for i in indices:
                nps = result.scores[i]
                plugins: dict[str, PluginScoreDetail] = {}
                if b is not None:
                    for p in b.plugins:
                        plugins[p] = PluginScoreDetail(b.raw[p][i], b.normalized[p][i], b.weights[p])
                ext = {s.name: s.score for s in nps.scores if s.name not in plugins}
                scores[nps.name] = NodeScoreDetail(plugins, ext, nps.total_score)
        exp = Explanation(
            pod.key, fwk.profile_name, pre, rejected, feasible_names, scores, selected, fast,
            d.post_filter_msg,
        )
        self.explanations[pod.key] = exp
        if self._explain_keys is not None and pod.key in self._explain_keys:
            self.explanation_history.setdefault(pod.key, []).append(exp)
        return exp

    def explain(self, pod: Pod | str) -> Explanation | None:
        """The breakdown of the last attempt for a pod (by object or namespace/name)."""
        key = pod.key if isinstance(pod, Pod) else pod
        return self.explanations.get(key)

    def explain_attempts(self, pod: Pod | str) -> list[Explanation]:
        """Every recorded attempt of a pod named in ``explain=`` (else the last one, if any)."""
        key = pod.key if isinstance(pod, Pod) else pod
        history = self.explanation_history.get(key)
        if history is not None:
            return list(history)
        last = self.explanations.get(key)
        return [] if last is None else [last]

    # ------------------------------------------------------------------ inspection

    def _cached_pods(self) -> list[Pod]:
        return [pi.pod for ni in self.cache.dump().nodes.values() for pi in ni.pods]

    def bound_pods(self) -> list[Pod]:
        return [p for p in self._cached_pods() if p.spec.node_name]

    def waiting_pods(self) -> list[Pod]:
        return [pb.assumed for pb in self._waiting.values()]

    # ------------------------------------------------------------------ what-if

    def fork(
        self,
        *,
        binder: Binder | None = None,
        host_hooks: HostHooks | None = None,
        clock: Any = None,
    ) -> Scheduler:
        """An independent scheduler with the same cluster, queue, nominations, config, plugin
        state and clock time; changes to one never show in the other.

        Copy-on-write: forking is cheap and memory grows with what either side changes. The
        fork binds with ``binder`` (default: accept every binding) and reports to
        ``host_hooks`` (default: none), so it never touches the host's world; its clock is a
        ``clone()`` of this one's (a FakeClock at the same time) unless ``clock`` is given.
        Custom plugins take part by implementing ``clone(handle) -> plugin``; without it the
        fork builds a fresh instance with the plugin's factory.
        """
        from kschedlib.whatif.fork import fork_scheduler

        return fork_scheduler(self, binder=binder, host_hooks=host_hooks, clock=clock)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Everything done inside (events, scheduling, preemption victims, bindings) is rolled
        back when the block ends, unless ``commit()`` was called on the yielded transaction;
        an exception always rolls back. Binder calls and victim deletions made inside are
        recorded on the transaction and delivered to the host's binder and hooks only when
        the outermost transaction commits. Transactions nest. After a rollback, objects taken
        from the scheduler before (``sched.queue``, ``sched.cache``) are stale: read them again.
        """
        from kschedlib.whatif.fork import begin

        txn = begin(self)
        try:
            yield txn
        except BaseException:
            txn.committed = False
            txn._close()
            raise
        txn._close()

    def can_schedule(self, pod: Pod | str) -> Verdict:
        """Would ``pod`` be scheduled now, where and why; if not, the FitError text and what
        preemption would do. Computed in a fork: nothing is bound, evicted or nominated here."""
        from kschedlib.whatif.questions import can_schedule

        return can_schedule(self, pod)

    def capacity(self, pod: Pod, *, limit: int | None = None) -> CapacityReport:
        """How many replicas of ``pod`` fit when created one after another (cluster-capacity),
        where they go, and the FitError of the first that did not fit."""
        from kschedlib.whatif.capacity import capacity

        return capacity(self, pod, limit=limit)

    def simulate_drain(self, node_names: Iterable[str]) -> DrainReport:
        """Can these nodes be removed? cluster-autoscaler's drainability rules, then the
        movable pods scheduled onto the remaining nodes in a fork."""
        from kschedlib.whatif.drain import simulate_drain

        return simulate_drain(self, list(node_names))

    def removable_nodes(self, candidates: Iterable[str] | None = None) -> RemovableNodesReport:
        """Nodes that can be removed one after another (each drain simulated on the cluster
        left by the previous removals), in cluster-autoscaler's scale-down order."""
        from kschedlib.whatif.drain import removable_nodes

        return removable_nodes(self, None if candidates is None else list(candidates))

    def add_nodes_like(self, node: Node | str, count: int, *, prefix: str | None = None) -> list[Node]:
        """Add ``count`` copies of a node (or of the named node) with unique names and
        hostname labels, for scale-up what-ifs (usually on a fork); returns them."""
        from kschedlib.whatif.nodes import add_nodes_like

        return add_nodes_like(self, node, count, prefix=prefix)
