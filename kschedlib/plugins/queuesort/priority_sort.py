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


    @staticmethod
    def ordered_less(a: Any, b: Any) -> bool:
        """``less``, with what it holds equal (same priority and timestamp) ordered by
        arrival (``seq``): the scheduling queue's order in one call."""
        p1 = a.pod_info.pod.spec.priority or 0
        p2 = b.pod_info.pod.spec.priority or 0
        if p1 != p2:
            return bool(p1 > p2)
        t1 = a.timestamp
        t2 = b.timestamp
        if t1 != t2:
            return bool(t1 < t2)
        return bool(a.seq < b.seq)


def new(args: Any, handle: Any) -> PrioritySort:
    return PrioritySort()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
