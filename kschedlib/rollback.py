"""Rolling a scheduler back to a transaction's savepoint, in place.

A savepoint records the cache's changes from its start (a journal) and copies the small
parts of the scheduler. A rollback puts the state back into the objects the host holds:
``sched.queue``, ``sched.cache``, ``sched.snapshot``, ``sched.objects``, the frameworks and
their plugin instances stay the same objects and stay valid. A plugin with
``clone(handle)`` gets its saved state back (the savepoint's clone, cloned again for the
host's framework, moved into the host's instance); a plugin without it is left as it is (its
state must be derivable from the cluster, as the in-tree plugins' is: their caches are
keyed by NodeInfo generations, and every node the transaction changed gets a fresh
generation). The clock is not rewound.
"""

from __future__ import annotations

import copy
from typing import Any

from kschedlib.results import EventLog

# Scheduler attributes restored part by part below; any other attribute (added later by
# another feature) is taken from the savepoint as it is (containers copied into the host's).
_PARTS = frozenset(
    {
        "_init_kwargs", "_txns", "registry", "config", "clock", "_binder", "_host_hooks",
        "explain_enabled", "objects", "cache", "snapshot", "_hooks", "extenders", "frameworks",
        "queue", "algorithm", "metrics", "_waiting", "workload_manager", "_eviction",
        "_tickers", "feature_gates", "batching", "_batch",
    }
)
_VALUES = (int, float, str, bytes, bool, type(None), tuple, frozenset)


def _attribute_names(obj: Any) -> list[str]:
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [n for n in dict.fromkeys(names) if n not in ("__dict__", "__weakref__")]


def transplant(dst: Any, src: Any) -> None:
    """Give ``dst`` every attribute value of ``src`` (same class); references ``src``'s
    attributes hold to ``src`` itself (one level down) are pointed at ``dst``."""
    for name in _attribute_names(src):
        try:
            value = getattr(src, name)
        except AttributeError:
            continue
        if value is src:
            value = dst
        object.__setattr__(dst, name, value)
        if not isinstance(value, _VALUES) and value is not dst:
            for inner in _attribute_names(value):
                try:
                    if getattr(value, inner) is src:
                        object.__setattr__(value, inner, dst)
                except (AttributeError, TypeError):
                    continue


def _restore_container(host: Any, saved: Any) -> Any:
    """``saved``'s content in the host's container object (lists, dicts and sets keep their
    identity); other values are taken as they are."""
    if type(host) is type(saved):
        if isinstance(host, EventLog):
            host[:] = saved
            host.last_failure = dict(saved.last_failure)
            return host
        if isinstance(host, list):
            host[:] = saved
            return host
        if isinstance(host, (dict, set)):
            host.clear()
            host.update(saved)
            return host
    return saved


def _copy_waiting_pod(wp: Any) -> Any:
    c = copy.copy(wp)
    c._deadlines = dict(wp._deadlines)
    c._timeouts = dict(wp._timeouts)
    return c


def _parts_memo(sched: Any) -> dict[int, Any]:
    """A deepcopy memo that keeps the scheduler and its parts as they are (shared)."""
    memo: dict[int, Any] = {id(sched): sched}
    for name, value in vars(sched).items():
        if name not in ("_eviction", "_tickers") and not isinstance(value, _VALUES):
            memo[id(value)] = value
    return memo


class Savepoint:
    """What a transaction needs to roll a scheduler back: the cache's change journal and
    copies of the small parts (queue, objects, plugin clones, bookkeeping). Taking one costs
    O(queued pods + objects + recorded bookkeeping), never O(nodes); see :meth:`restore`."""

    def __init__(self, sched: Any) -> None:
        from kschedlib.backend.queue.scheduling_queue import PriorityQueue
        from kschedlib.backend.workloadmanager import WorkloadManager
        from kschedlib.framework.handle import ObjectStore

        self._cache = sched.cache.savepoint()
        self._queue = PriorityQueue(clock=sched.clock)
        self._queue.copy_state_from(sched.queue)
        self._objects = ObjectStore()
        self._objects.copy_from(sched.objects)
        self._workloads = WorkloadManager()
        self._workloads.copy_from(sched.workload_manager)
        alg = sched.algorithm
        self._rng = alg.rng.getstate()
        self._next_start = alg.next_start_node_index
        self._metrics = copy.deepcopy(sched.metrics)
        batching = vars(sched).get("batching")
        self._batching = (
            None if batching is None else batching.fork(sched.clock, self._metrics.batch)
        )
        self._waiting_pods: dict[str, dict[str, Any]] = {}
        self._plugins: dict[tuple[str, str], Any] = {}
        for profile, fwk in sched.frameworks.items():
            self._waiting_pods[profile] = {
                uid: _copy_waiting_pod(wp) for uid, wp in fwk.waiting_pods._pods.items()
            }
            for name, plugin in fwk.plugins.items():
                clone = getattr(plugin, "clone", None)
                if callable(clone):
                    self._plugins[(profile, name)] = clone(fwk)
        self._waiting = {
            uid: type(pb)(pb.fwk, pb.state.clone(), pb.qpi.fork_copy(), pb.assumed, pb.host,
                          pb.explanation)
            for uid, pb in sched._waiting.items()
        }
        eviction = vars(sched).get("_eviction")
        self._eviction = (
            None if eviction is None else copy.deepcopy(eviction, _parts_memo(sched))
        )
        self._rest: dict[str, Any] = {}
        for name, value in vars(sched).items():
            if name in _PARTS:
                continue
            if name == "explanation_history":
                value = {k: list(v) for k, v in value.items()}
            elif isinstance(value, EventLog):  # (copy.copy would append event by event)
                value = value.copy()
            elif isinstance(value, (list, dict, set)):
                value = copy.copy(value)
            self._rest[name] = value

    def release(self, sched: Any) -> None:
        """The transaction committed: keep what was done (an outer savepoint still can undo it)."""
        sched.cache.release(self._cache)

    def restore(self, sched: Any) -> None:
        """Roll ``sched`` back to this savepoint, in place (see the module docstring)."""
        sched.cache.rollback(self._cache)
        sched.queue.copy_state_from(self._queue)
        sched.objects.copy_from(self._objects)
        sched.workload_manager.copy_from(self._workloads)
        alg = sched.algorithm
        alg.rng.setstate(self._rng)
        alg.next_start_node_index = self._next_start
        transplant(sched.metrics, self._metrics)
        if self._batching is not None:
            # The opportunistic batches as they were, counting into the host's metrics.
            sched.batching = self._batching.fork(sched.clock, sched.metrics.batch)
        for profile, fwk in sched.frameworks.items():
            fwk.waiting_pods._pods = dict(self._waiting_pods.get(profile, {}))
            for name, plugin in fwk.plugins.items():
                kept = self._plugins.get((profile, name))
                if kept is not None and type(kept) is type(plugin):
                    # The savepoint's copy, cloned again for the host's framework, moved in.
                    transplant(plugin, kept.clone(fwk))
        sched._waiting = _restore_container(sched._waiting, dict(self._waiting))
        eviction = vars(sched).get("_eviction")
        if self._eviction is not None and eviction is not None:
            transplant(eviction, copy.deepcopy(self._eviction, _parts_memo(sched)))
        elif self._eviction is None and eviction is not None:
            sched._eviction = None
            sched._tickers = [t for t in sched._tickers if t is not eviction]
        for name, value in self._rest.items():
            setattr(sched, name, _restore_container(getattr(sched, name, None), value))
