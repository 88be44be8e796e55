"""The replica loop: each replica batched when it can be, else a scheduling cycle."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kschedlib.api.pod import Pod
from kschedlib.errors import InvalidObjectError
from kschedlib.framework.runtime import Framework
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.results import Outcome
from kschedlib.whatif.capacity.batched import FastPath
from kschedlib.whatif.capacity.replicas import Replicas, pod_info_like
from kschedlib.whatif_reports import CapacityReport

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler


# Plugins of the binding path that do nothing for pods without volume or resource claims.
_NOOP_BINDING_PLUGINS = frozenset({"VolumeBinding", "DynamicResources", "DefaultBinder"})


def capacity(sched: Scheduler, pod: Pod, *, limit: int | None = None, batch: bool = True) -> CapacityReport:
    """Schedule replicas of ``pod`` one after another in a fork until one does not fit or
    ``limit`` fit. ``batch=False`` schedules every replica through ``schedule_pod`` (the
    reference the batched loop is tested against)."""
    if limit is not None and limit < 0:
        raise InvalidObjectError("capacity", "limit", f"must be >= 0, got {limit}")
    if pod.spec.node_name:
        raise InvalidObjectError(f"pod {pod.key}", "spec.nodeName", "is set: give an unbound pod")
    fork = sched.fork()
    fork.explain_enabled = False
    if not fork.responsible_for(pod):
        raise InvalidObjectError(
            f"pod {pod.key}", "spec.schedulerName",
            f'"{pod.spec.scheduler_name}" is not a profile of this scheduler',
        )
    fwk = fork.framework_for(pod)
    assert fwk is not None
    saved_post_filter = {name: list(f.post_filter_plugins) for name, f in fork.frameworks.items()}
    for f in fork.frameworks.values():
        f.post_filter_plugins.clear()  # cluster-capacity does not preempt
    base = pod.metadata.name or "replica"
    maker = Replicas(pod, base)
    fast = FastPath(fork, fwk, pod) if batch and fast_eligible(fork, fwk, pod) else None
    with collector_paused():
        placed, counts, stop, preemption, batched = _replicas(
            fork, fwk, maker, fast, limit, saved_post_filter
        )
    key = f"{pod.metadata.namespace or 'default'}/{base}"
    return CapacityReport(
        key, len(placed), counts, stop, limit, tuple(placed), batched,
        preemption_node=preemption[0] if preemption else None,
        preemption_victims=preemption[1] if preemption else (),
    )


def _replicas(
    fork: Scheduler, fwk: Framework, maker: Replicas, fast: FastPath | None, limit: int | None,
    saved_post_filter: dict[str, list[Any]],
) -> tuple[list[tuple[str, str]], dict[str, int], str, tuple[str, tuple[str, ...]] | None, int]:
    """The replica loop: placements, count per node, stop reason, preemption, batched count."""
    placed: list[tuple[str, str]] = []
    counts: dict[str, int] = {}
    stop = "limit"
    preemption: tuple[str, tuple[str, ...]] | None = None
    i = 0
    batched = 0
    proto: PodInfo | None = None
    while limit is None or i < limit:
        replica = maker.make(i)
        if i == 0 and fast is not None and fwk.run_pre_enqueue_plugins(replica) is not None:
            fast = None  # gated: the ordinary path reports it
        host = fast.schedule(replica) if fast is not None else None
        if host is None:
            fork.add_pod(replica)
            result = fork.schedule_pod(replica)
            if result is None:
                stop = "the pod is not ready for scheduling: a PreEnqueue plugin gates it"
                break
            if result.outcome != Outcome.Scheduled:
                # The stop reason is the whole FailedScheduling message, PostFilter part
                # included: the replica's cycle runs again with preemption (in the fork, which
                # is thrown away) to learn what it would say and whether it would help.
                for name, f in fork.frameworks.items():
                    f.post_filter_plugins[:] = saved_post_filter[name]
                again = fork.schedule_pod(replica)
                if again is not None and again.outcome != Outcome.Scheduled:
                    result = again
                stop = result.message
                if result.nominated_node:
                    preemption = (result.nominated_node, tuple(v.key for v in result.victims))
                break
            host = result.node
            assert host is not None
            if fast is not None:
                fast.forget()
        else:
            bound = maker.bound(replica, host)
            if proto is None:
                fork.cache.add_pod(bound)  # the cache builds the PodInfo as it always does
                info = proto = next(
                    pi for pi in fork.cache.get_node(host).pods if pi.pod.uid == bound.uid
                )
            else:
                info = pod_info_like(proto, bound)
                fork.cache.add_pod(bound, pod_info=info)
            assert fast is not None
            fast.placed(replica, info, host)
            batched += 1
        placed.append((replica.metadata.name, host))
        counts[host] = counts.get(host, 0) + 1
        i += 1
    return placed, counts, stop, preemption, batched


def fast_eligible(fork: Scheduler, fwk: Framework, pod: Pod) -> bool:
    """Whether replicas of ``pod`` may take the batched path at all."""
    if fork.extenders or pod.spec.resource_claims:
        return False
    if fork.batching is not None and fwk.sign_pod(pod) is not None:
        return False  # replicas would take opportunistic batching hints: full cycles
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None or v.ephemeral is not None:
            return False
    in_tree = in_tree_registry()
    for name, plugin in fwk.plugins.items():
        spec = fork.registry.get(name)
        tree = in_tree.get(name)
        custom = spec is None or tree is None or spec.factory is not tree.factory
        if custom and _runs_in_cycle(fwk, plugin):
            return False
    for point in ("reserve", "permit", "pre_bind", "bind", "post_bind"):
        for pl in fwk.points.get(point, ()):
            if pl.name not in _NOOP_BINDING_PLUGINS:
                return False
    return True


def _runs_in_cycle(fwk: Framework, plugin: Any) -> bool:
    """Whether an out-of-tree plugin takes part in scheduling cycles or gates pods (batched
    replicas skip the queue: PreEnqueue runs for the first one only)."""
    for point in ("pre_enqueue", "pre_filter", "filter", "pre_score", "score", "reserve", "permit",
                  "pre_bind", "bind", "post_bind"):
        if plugin in fwk.points.get(point, ()):
            return True
    return False




@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Automatic garbage collection paused: the replica loop allocates objects that stay
    alive in the fork (replicas, their NodeInfo copies), which collections would only walk
    (about a sixth of the loop's time at 5000 nodes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
