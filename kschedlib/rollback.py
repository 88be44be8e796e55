"""Rolling a scheduler back to a transaction's savepoint, in place.

The savepoint is a fork taken when the transaction began (nothing else uses it). A rollback
puts its state back into the objects the host holds: ``sched.queue``, ``sched.cache``,
``sched.snapshot``, ``sched.objects``, the frameworks and their plugin instances stay the same
objects and stay valid. A plugin with ``clone(handle)`` gets the state of its savepoint clone
back (cloned again for the host's framework, then moved into the host's instance); a plugin
without it is left as it is (its state must be derivable from the cluster, as the in-tree
plugins' is: their caches are keyed by NodeInfo generations, and every node the transaction
changed gets a fresh generation). The clock is not rewound.
"""

from __future__ import annotations

import copy
from typing import Any

# Scheduler attributes restored part by part below; any other attribute (added later by
# another feature) is taken from the savepoint as it is (containers copied into the host's).
_PARTS = frozenset(
    {
        "_init_kwargs", "_txns", "registry", "config", "clock", "_binder", "_host_hooks",
        "explain_enabled", "objects", "cache", "snapshot", "_hooks", "extenders", "frameworks",
        "queue", "algorithm", "metrics", "_waiting", "workload_manager", "_eviction",
        "_tickers", "feature_gates",
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
        if isinstance(host, list):
            host[:] = saved
            return host
        if isinstance(host, (dict, set)):
            host.clear()
            host.update(saved)
            return host
    return saved


def restore(sched: Any, saved: Any) -> None:
    """Make ``sched`` take ``saved``'s state in place (see the module docstring); ``saved``
    must not be used again."""
    sched.cache.restore_from(saved.cache)
    sched.queue.copy_state_from(saved.queue)
    sched.objects.copy_from(saved.objects)
    sched.workload_manager.copy_from(saved.workload_manager)
    alg, old = sched.algorithm, saved.algorithm
    alg.rng.setstate(old.rng.getstate())
    alg.next_start_node_index = old.next_start_node_index
    transplant(sched.metrics, saved.metrics)
    for profile, fwk in sched.frameworks.items():
        was = saved.frameworks[profile]
        fwk.waiting_pods._pods = dict(was.waiting_pods._pods)
        for name, plugin in fwk.plugins.items():
            clone = getattr(plugin, "clone", None)
            kept = was.plugins.get(name)
            if not callable(clone) or kept is None or type(kept) is not type(plugin):
                continue
            # The savepoint's copy, cloned again for the host's framework, moved in.
            transplant(plugin, kept.clone(fwk))
    sched._waiting = _restore_container(sched._waiting, {
        uid: type(pb)(sched.frameworks[pb.fwk.profile_name], pb.state, pb.qpi, pb.assumed,
                      pb.host, pb.explanation)
        for uid, pb in saved._waiting.items()
    })
    eviction = vars(sched).get("_eviction")
    kept_eviction = vars(saved).get("_eviction")
    if eviction is not None and kept_eviction is not None:
        memo: dict[int, Any] = {id(saved): sched, id(kept_eviction): eviction}
        for name, value in vars(saved).items():
            if name != "_eviction" and not isinstance(value, _VALUES) and name in vars(sched):
                memo[id(value)] = getattr(sched, name)
        transplant(eviction, copy.deepcopy(kept_eviction, memo))
    elif kept_eviction is None and eviction is not None:
        sched._eviction = None
        sched._tickers = [t for t in sched._tickers if t is not eviction]
    for name, value in vars(saved).items():
        if name not in _PARTS:
            setattr(sched, name, _restore_container(getattr(sched, name, None), value))
