"""PrioritySort: higher pod priority first, then the earlier queue timestamp."""

from __future__ import annotations

from typing import Any

from kschedlib.framework.interface import QueuedPodInfoLike
from kschedlib.framework.registry import PluginSpec

NAME = "PrioritySort"


class PrioritySort:
    """Orders the active queue by ``spec.priority`` (descending), ties by arrival time."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfoLike, b: QueuedPodInfoLike) -> bool:
        # pod_priority inlined (a hot comparison): an unset priority counts as 0.
        p1 = a.pod.spec.priority or 0
        p2 = b.pod.spec.priority or 0
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def new(args: Any, handle: Any) -> PrioritySort:
    return PrioritySort()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
