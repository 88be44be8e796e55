"""Cluster: a Scheduler over given nodes and pods, built in one call, for policy tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.clock import FakeClock
from kschedlib.framework.registry import PluginFactory, PluginSpec
from kschedlib.results import Explanation, SchedulingResult
from kschedlib.scheduler import Scheduler
from kschedlib.testing.builders import NodeWrapper, PodWrapper

__all__ = ["Cluster"]

Buildable = Any  # a Pod/Node, a builder, or Kubernetes JSON


def _obj(x: Buildable) -> Any:
    if isinstance(x, (PodWrapper, NodeWrapper)):
        return x.obj()
    if isinstance(x, Mapping):
        kind = x.get("kind")
        if kind == "Pod":
            return Pod.from_dict(x)
        if kind == "Node":
            return Node.from_dict(x)
        from kschedlib.api.objects import decode_any

        return decode_any(dict(x))
    return x


class Cluster:
    """A deterministic Scheduler (fake clock, smallest-name tie-break by default) loaded with
    nodes, running pods and other objects::

        c = Cluster(nodes=[make_node("n1").capacity(cpu="2")], pods=[...])
        result = c.schedule(make_pod("p").req(cpu="1"))

    ``scheduler`` is the Scheduler; ``clock`` its FakeClock.
    """

    def __init__(
        self,
        nodes: Iterable[Buildable] = (),
        pods: Iterable[Buildable] = (),
        objects: Iterable[Buildable] = (),
        *,
        config: Any = None,
        plugins: Mapping[str, PluginFactory | PluginSpec] | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        clock: FakeClock | None = None,
        **scheduler_kwargs: Any,
    ) -> None:
        self.clock = clock if clock is not None else FakeClock()
        self.scheduler = Scheduler(
            config, clock=self.clock, plugins=plugins, deterministic=deterministic, seed=seed,
            **scheduler_kwargs,
        )
        self.scheduler.apply([_obj(x) for x in (*nodes, *objects, *pods)])

    def add(self, *objs: Buildable) -> Cluster:
        """Add nodes, pods or other objects (as informers would deliver them)."""
        self.scheduler.apply([_obj(x) for x in objs])
        return self

    def schedule(self, pod: Buildable) -> SchedulingResult:
        """Add a pending pod and run its scheduling cycle now; the result of that attempt."""
        p = _obj(pod)
        if not isinstance(p, Pod):
            raise TypeError(f"schedule() takes a pod, got {type(p).__name__}")
        self.scheduler.add_pod(p)
        result = self.scheduler.schedule_pod(p)
        if result is None:
            raise AssertionError(
                f"pod {p.key} was not attempted (gated, not pending, or not for this scheduler)"
            )
        return result

    def run(self, *pods: Buildable) -> list[SchedulingResult]:
        """Add pending pods and schedule until idle; every attempt, in order (a pod that
        preempted appears twice: the attempt that nominated it, then the one that bound it)."""
        if pods:
            self.add(*pods)
        return self.scheduler.run()

    def explain(self, pod: Pod | str) -> Explanation | None:
        return self.scheduler.explain(pod)

    def node_of(self, pod: Pod | str) -> str | None:
        """The node a pod is bound to in the scheduler's cache, or None."""
        key = pod.key if isinstance(pod, Pod) else pod
        for p in self.scheduler.bound_pods():
            if p.key == key:
                return p.spec.node_name
        return None
