"""Scheduler forks and transactions: copy-on-write copies of a scheduler's whole state.

A fork shares every NodeInfo with its parent until one of them changes it (the cache and the
snapshot copy an entry before their first write after the fork), copies the queue's small
bookkeeping objects, rebuilds the frameworks from the same configuration, and gives each
plugin either a ``clone(handle)`` of the parent's instance or a fresh one built by its
factory (whose state must then be derivable from the cluster, as the in-tree plugins' is).
A transaction takes a lighter savepoint instead (:mod:`kschedlib.rollback`: the cache's
change journal and copies of the small parts) and, on rollback, restores it in place.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.errors import KSchedError
from kschedlib.framework.registry import PluginSpec, Registry
from kschedlib.rollback import Savepoint

# kschedlib.scheduler imports this module, so its types are not imported here: a Scheduler,
# its binder and its host hooks are what ``Scheduler.fork``/``transaction`` pass in.
Scheduler = Any
Binder = Any
HostHooks = Any

__all__ = ["Transaction", "TransactionError", "clone_clock", "fork_scheduler"]

# Scheduler attributes fork_scheduler copies itself; any other attribute (added later by
# another feature) is copied shallowly when it is a plain container or value.
_HANDLED = frozenset(
    {
        "_init_kwargs",
        "_txns",
        "registry",
        "config",
        "clock",
        "_binder",
        "_host_hooks",
        "explain_enabled",
        "objects",
        "cache",
        "snapshot",
        "_hooks",
        "extenders",
        "frameworks",
        "queue",
        "algorithm",
        "events",
        "metrics",
        "explanations",
        "_pending",
        "_waiting",
        "_victims",
        "_last_leftover_flush",
        "feature_gates",
        "workload_manager",
        "_eviction",
        "batching",
        "_batch",
        "_tickers",
        "explanation_history",
    }
)
_VALUES = (int, float, str, bytes, bool, type(None), tuple, frozenset)


class TransactionError(KSchedError):
    """A transaction used out of order (commit after exit, nested exit out of order)."""


def clone_clock(clock: Any) -> Any:
    """An independent clock at the same time: ``clock.clone()`` when it has one (FakeClock);
    otherwise the clock itself (a wall clock has no state to copy)."""
    clone = getattr(clock, "clone", None)
    return clone() if callable(clone) else clock


def _fork_registry(sched: Scheduler) -> Registry:
    """The scheduler's registry with each factory replaced by one that clones the parent's
    plugin instance (same profile, same name) when it has ``clone(handle)``."""
    specs: dict[str, PluginSpec] = {}
    for name, spec in sched.registry.items():
        specs[name] = PluginSpec(name, _cloning_factory(sched, name, spec.factory), spec.args_type)
    return Registry(specs)


def _cloning_factory(
    sched: Scheduler, name: str, factory: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    def make(args: Any, handle: Any) -> Any:
        parent = sched.frameworks.get(getattr(handle, "profile_name", ""))
        old = parent.plugins.get(name) if parent is not None else None
        clone = getattr(old, "clone", None)
        if callable(clone):
            return clone(handle)
        return factory(args, handle)

    return make


def fork_scheduler(
    sched: Scheduler,
    *,
    binder: Binder | None = None,
    host_hooks: HostHooks | None = None,
    clock: Any = None,
) -> Scheduler:
    """An independent scheduler equal to ``sched`` now (see module docstring)."""
    clk = clock if clock is not None else clone_clock(sched.clock)
    new = type(sched)(
        sched.config,
        binder=binder,
        clock=clk,
        host_hooks=host_hooks,
        explain=sched.explain_enabled,
        _registry=_fork_registry(sched),
        **sched._init_kwargs,
    )
    new.registry = sched.registry
    new.objects.copy_from(sched.objects)
    new.cache = sched.cache.fork(clk)
    sched.snapshot.share_into(new.snapshot)
    new.queue.copy_state_from(sched.queue)
    alg, old_alg = new.algorithm, sched.algorithm
    alg.rng.setstate(old_alg.rng.getstate())
    alg.next_start_node_index = old_alg.next_start_node_index
    new.events = sched.events.copy()
    new.metrics = copy.deepcopy(sched.metrics)
    if sched.batching is not None:
        new.batching = sched.batching.fork(clk, new.metrics.batch)
    new.explanations = sched.explanations.copy()  # (an ExplanationTable)
    new.explanation_history = {k: list(v) for k, v in sched.explanation_history.items()}
    new._pending = dict(sched._pending)
    new._victims = list(sched._victims)
    new._last_leftover_flush = sched._last_leftover_flush
    new.workload_manager.copy_from(sched.workload_manager)
    eviction = vars(sched).get("_eviction")
    if eviction is not None:
        # Eviction state refers to the scheduler and its parts: map them to the fork's.
        memo: dict[int, Any] = {id(sched): new}
        for name, value in vars(sched).items():
            if name != "_eviction" and not isinstance(value, _VALUES) and name in vars(new):
                memo[id(value)] = getattr(new, name)
        new._eviction = copy.deepcopy(eviction, memo)
    # The scheduler's own tickers (eviction), mapped to the fork's copies; others stay home.
    new._tickers = [new._eviction] if eviction is not None and eviction in sched._tickers else []
    for uid, pb in sched._waiting.items():
        fwk = new.frameworks[pb.fwk.profile_name]
        wp = pb.fwk.waiting_pods.get(uid)
        if wp is not None:
            fwk.waiting_pods.add(_copy_waiting_pod(wp))
        new._waiting[uid] = type(pb)(
            fwk, pb.state.clone(), pb.qpi.fork_copy(), pb.assumed, pb.host, pb.explanation
        )
    for name, value in vars(sched).items():
        if name in _HANDLED:
            continue
        if isinstance(value, (list, dict, set)):
            setattr(new, name, copy.copy(value))
        elif isinstance(value, _VALUES):
            setattr(new, name, value)
    return new


def _copy_waiting_pod(wp: Any) -> Any:
    c = copy.copy(wp)
    c._deadlines = dict(wp._deadlines)
    c._timeouts = dict(wp._timeouts)
    return c


@attrs.define(slots=True, eq=False)
class Transaction:
    """An open transaction (see ``Scheduler.transaction``): what it recorded so far."""

    _sched: Scheduler
    _savepoint: Savepoint | None
    bindings: list[tuple[Pod, str]] = attrs.field(factory=list)
    """Binder calls made inside, in order (delivered to the host's binder on commit)."""
    evictions: list[tuple[Pod, str]] = attrs.field(factory=list)
    """Preemption victims deleted inside, with the reason (delivered to the host on commit)."""
    committed: bool = False
    closed: bool = False

    def commit(self) -> None:
        """Keep what was done inside when the ``with`` block ends."""
        if self.closed:
            raise TransactionError("the transaction has already ended")
        self.committed = True

    def rollback(self) -> None:
        """Undo everything done inside now; the ``with`` block then ends without effect."""
        if self.closed:
            raise TransactionError("the transaction has already ended")
        self.committed = False
        self._close()

    def _close(self) -> None:
        if self.closed:
            return
        sched = self._sched
        if not sched._txns or sched._txns[-1] is not self:
            raise TransactionError("transactions must end innermost first")
        sched._txns.pop()
        self.closed = True
        saved, self._savepoint = self._savepoint, None
        assert saved is not None
        if not self.committed:
            saved.restore(sched)
            return
        saved.release(sched)
        if sched._txns:  # nested: the outer transaction now owns what this one recorded
            outer = sched._txns[-1]
            outer.bindings.extend(self.bindings)
            outer.evictions.extend(self.evictions)
            return
        hooks = sched._host_hooks
        for pod, reason in self.evictions:
            if hooks is not None:
                hooks.delete_pod(pod, reason)
        # Every binding is delivered; one the binder refuses is a bind failure (the pod is
        # pending again, retried after backoff), as it would have been outside.
        for pod, node in self.bindings:
            try:
                sched._binder.bind(pod, node)
            except Exception as exc:
                sched._binding_refused(pod, node, exc)


def begin(sched: Scheduler) -> Transaction:
    """Open a transaction: take a savepoint (:class:`kschedlib.rollback.Savepoint`)."""
    txn = Transaction(sched, Savepoint(sched))
    sched._txns.append(txn)
    return txn

