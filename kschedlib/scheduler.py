"""The Scheduler facade: kube-scheduler's scheduleOne loop with no I/O.

The host feeds cluster events (nodes, pods, other objects), supplies a binder and a clock,
and gets results, events and explanations back. Nothing runs in the background: the host
calls ``schedule_one``/``run`` and ``tick`` as its clock advances.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from kschedlib.api.cluster import register_scheduler_class
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache import Cache
from kschedlib.backend.queue.hints import build_queueing_hints
from kschedlib.backend.queue.queue_events import (
    EVENT_ASSIGNED_POD_DELETE,
)
from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from kschedlib.backend.snapshot import Snapshot
from kschedlib.backend.workloadmanager import WorkloadManager
from kschedlib.config.loader import ConfigSource, load_config
from kschedlib.cycles import SchedulingCycles
from kschedlib.errors import KSchedError
from kschedlib.eventhandlers import EventHandlers
from kschedlib.explain import Explanations
from kschedlib.features import FeatureGates
from kschedlib.fork import Transaction, begin, fork_scheduler
from kschedlib.framework.batch import Batching, OpportunisticBatch
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extender import Extender
from kschedlib.framework.handle import ObjectStore, RealClock
from kschedlib.framework.registry import PluginFactory, PluginSpec, Registry
from kschedlib.framework.runtime import Framework
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.results import (
    EventLog,
    Explanation,
    ExplanationTable,
    SchedulerMetrics,
)
from kschedlib.schedule_one import SchedulingAlgorithm
from kschedlib.scheduler_base import AcceptingBinder, Binder, HostHooks, _PendingBinding
from kschedlib.whatif_reports import (
    CapacityReport,
    DrainReport,
    RemovableNodesReport,
    Verdict,
)

__all__ = ["AcceptingBinder", "Binder", "HostHooks", "Scheduler", "register_tool"]

UNSCHEDULABLE_LEFTOVER_FLUSH_PERIOD = 30.0

# Entry points of the tools built on a scheduler (what-if questions, eviction), which live in
# a layer above this one: each tool package registers its own when imported (the package
# ``kschedlib`` imports them all), so the facade offers them without importing upwards.
_TOOLS: dict[str, Callable[..., Any]] = {}


def register_tool(name: str, entry: Callable[..., Any]) -> None:
    """Make ``entry(scheduler, ...)`` the implementation of the facade method ``name``."""
    _TOOLS[name] = entry


def _tool(name: str) -> Callable[..., Any]:
    entry = _TOOLS.get(name)
    if entry is None:
        raise KSchedError(f"Scheduler.{name} is provided by a kschedlib tool package: import kschedlib")
    return entry

# Constructor arguments fork() passes itself rather than copying from the parent.
_FORK_OWN_ARGS = frozenset(
    {"self", "config", "binder", "clock", "host_hooks", "plugins", "explain", "_registry"}
)


class Ticker(Protocol):
    """A part of the scheduler with periodic work (eviction): ``Scheduler.tick()`` calls
    ``tick()`` when the clock has moved since the last call."""

    def tick(self) -> Any: ...


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

    def amend_assumed_pod(self, pod: Pod, annotations: Mapping[str, str]) -> Pod:
        """Reserve: the cycle's assumed pod with ``annotations`` added, accounted in the cache
        and carried to Permit, Bind and the bound pod (a pod patch in kube-scheduler)."""
        s = self._sched
        cycle = s._in_cycle
        if cycle is None or cycle[1].uid != pod.uid:
            raise KSchedError(
                f"amend_assumed_pod: pod {pod.key} is not the pod of the current scheduling cycle"
            )
        state, assumed, host = cycle
        new = assumed.with_annotations(annotations)
        s.cache.replace_assumed_pod(new)
        s._in_cycle = (state, new, host)
        return new

    def update_object(self, obj: Any) -> None:
        """An API write by a plugin (DynamicResources' claim status), applied as the informer
        would deliver it."""
        self._sched.update_object(obj)

    def delete_object(self, obj: Any) -> None:
        """An API delete by a plugin (DynamicResources' extended-resource claim)."""
        self._sched.delete_object(obj)


class Scheduler(EventHandlers, SchedulingCycles, Explanations):
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
        explain_full_pods: int | None = 1000,
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
        # With explain=True, only the last explanations of the ``explain_full_pods`` pods
        # explained most recently keep every scored node; older ones keep the top nodes'
        # scores (explain_top_nodes, else 5): memory stays bounded on a long-running host.
        self._explain_full_pods = explain_full_pods
        self._explain_order: dict[str, None] = {}
        """The pods whose explanations keep every node, oldest first."""
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
        self.events: EventLog = EventLog()
        self.metrics = SchedulerMetrics()
        # OpportunisticBatching: one batch per profile (framework/batch.py).
        self.batching: Batching | None = None
        if gates.enabled("OpportunisticBatching"):
            self.batching = Batching(self.frameworks, self.clock, seed=seed,
                                     deterministic=deterministic, metrics=self.metrics.batch)
        self._batch: OpportunisticBatch | None = None
        self.explanations: dict[str, Explanation] = ExplanationTable()
        self._pending: dict[str, Pod] = {}
        self._pending_keys: dict[str, str] = {}
        """namespace/name -> UID of the pending pods."""
        self._foreign: dict[str, Pod] = {}
        """Pending pods whose schedulerName no profile has (another scheduler's), by UID."""
        self._held: dict[str, Pod] = {}
        """Pods created only once another pod is bound, by that pod's namespace/name."""
        self._waiting: dict[str, _PendingBinding] = {}
        self._victims: list[Pod] = []
        self._last_leftover_flush = self.clock.now()
        self._in_cycle: tuple[CycleState, Pod, str] | None = None
        """(state, assumed pod, node) once a cycle has assumed its pod, for undoing it."""
        self._eviction: Any = None
        self._tickers: list[Ticker] = []
        self._ticked_at: float | None = None

    @property
    def eviction(self) -> Any:
        """Eviction against this scheduler's state (kubelet node-pressure eviction, the
        Eviction API and drain, taint-based eviction): a :class:`kschedlib.eviction.Evictions`
        created on first use."""
        if self._eviction is None:
            self._eviction = _tool("eviction")(self)
        return self._eviction

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

    # ------------------------------------------------------------------ time

    def tick(self) -> None:
        """Periodic work due at the clock's time, of every part the scheduler owns: backoff
        completions, the unschedulable leftover flush, expired assumed pods, and (once the
        clock has moved) the registered tickers' work: ``sched.eviction``'s graceful
        deletions and taint-based evictions. Permit timeouts are read by ``run()`` /
        ``resume_waiting()``."""
        self.queue.flush_backoff_q_completed()
        now = self.clock.now()
        if now - self._last_leftover_flush >= UNSCHEDULABLE_LEFTOVER_FLUSH_PERIOD:
            self._last_leftover_flush = now
            self.queue.flush_unschedulable_pods_leftover()
        for pod in self.cache.cleanup_expired_assumed_pods(now):
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)
        if self._tickers and now != self._ticked_at:
            self._ticked_at = now
            for ticker in list(self._tickers):
                ticker.tick()

    def add_ticker(self, ticker: Ticker) -> None:
        """Run ``ticker.tick()`` from :meth:`tick` (a part with periodic work of its own)."""
        if ticker not in self._tickers:
            self._tickers.append(ticker)


    # ------------------------------------------------------------------ inspection

    def _cached_pods(self) -> list[Pod]:
        return self.cache.pods()

    def bound_pods(self) -> list[Pod]:
        """Pods whose binding went through (what the API server shows with a nodeName).
        Pods the scheduler placed but has not bound yet are :meth:`assumed_pods`."""
        cache = self.cache
        return [p for p in cache.pods() if p.spec.node_name and not cache.is_assumed_pod(p)]

    def assumed_pods(self) -> list[Pod]:
        """Pods placed on a node in the cache but not bound yet: held at Permit
        (:meth:`waiting_pods`, e.g. a gang short of members) or in their binding cycle."""
        cache = self.cache
        return [p for p in cache.pods() if cache.is_assumed_pod(p)]

    def waiting_pods(self) -> list[Pod]:
        """Pods held at Permit (assumed on their node, waiting for a verdict)."""
        return [pb.assumed for pb in self._waiting.values()]

    def foreign_pods(self) -> list[Pod]:
        """Pending pods no profile schedules (their schedulerName names another scheduler);
        kube-scheduler ignores them, :meth:`why_pending` says so."""
        return list(self._foreign.values())

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
        new: Scheduler = fork_scheduler(self, binder=binder, host_hooks=host_hooks, clock=clock)
        return new

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Everything done inside (events, scheduling, preemption victims, bindings) is rolled
        back when the block ends, unless ``commit()`` was called on the yielded transaction;
        an exception always rolls back. Binder calls and victim deletions made inside are
        recorded on the transaction and delivered to the host's binder and hooks only when
        the outermost transaction commits; a binding the binder refuses then is a bind failure
        (the pod is pending again and retried after backoff), and every other binding is still
        delivered. Transactions nest. A rollback restores the state into the same objects
        (``sched.queue``, ``sched.cache``, the plugins stay valid; a plugin without ``clone()``
        keeps its own state); the clock is not rewound: a FakeClock advanced inside stays
        advanced.
        """
        txn = begin(self)
        try:
            yield txn
        except BaseException:
            txn.committed = False
            txn._close()
            raise
        txn._close()

    def __deepcopy__(self, memo: dict[int, Any]) -> Scheduler:
        """``copy.deepcopy(sched)`` is ``sched.fork()``: an independent scheduler (binding with
        an accepting binder, no host hooks, a clone of the clock)."""
        new = self.fork()
        memo[id(self)] = new
        return new

    def can_schedule(self, pod: Pod | str) -> Verdict:
        """Would ``pod`` be scheduled now, where and why; if not, the FitError text and what
        preemption would do. Computed in a fork: nothing is bound, evicted or nominated here."""
        result: Verdict = _tool("can_schedule")(self, pod)
        return result

    def capacity(self, pod: Pod, *, limit: int | None = None) -> CapacityReport:
        """How many replicas of ``pod`` fit when created one after another (cluster-capacity),
        where they go, and the FitError of the first that did not fit."""
        result: CapacityReport = _tool("capacity")(self, pod, limit=limit)
        return result

    def simulate_drain(self, node_names: Iterable[str]) -> DrainReport:
        """Can these nodes be removed? cluster-autoscaler's drainability rules, then the
        movable pods scheduled onto the remaining nodes in a fork."""
        result: DrainReport = _tool("simulate_drain")(self, list(node_names))
        return result

    def removable_nodes(
        self, candidates: Iterable[str] | None = None, *, mode: str = "schedule"
    ) -> RemovableNodesReport:
        """Nodes that can be removed one after another (each drain simulated on the cluster
        left by the previous removals), in cluster-autoscaler's scale-down order; the moved
        pods placed by their scheduling cycles, or with ``mode="fit"`` on the first node
        that passes the filters (as cluster-autoscaler checks them)."""
        result: RemovableNodesReport = _tool("removable_nodes")(
            self, None if candidates is None else list(candidates), mode=mode
        )
        return result

    def add_nodes_like(self, node: Node | str, count: int, *, prefix: str | None = None) -> list[Node]:
        """Add ``count`` copies of a node (or of the named node) with unique names and
        hostname labels, for scale-up what-ifs (usually on a fork); returns them."""
        result: list[Node] = _tool("add_nodes_like")(self, node, count, prefix=prefix)
        return result


register_scheduler_class(Scheduler)
