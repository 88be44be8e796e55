"""Scheduler extenders as a protocol the host implements (no HTTP: the host does the I/O)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from kschedlib.api.pod import Pod
from kschedlib.framework.types import NodeInfo

MAX_EXTENDER_PRIORITY = 10
EXTENDER_NAME = "Extender"


@runtime_checkable
class Extender(Protocol):
    """framework.Extender. ``filter`` returns (feasible nodes, failed: name -> reason,
    failed and unresolvable: name -> reason); ``prioritize`` returns ([(node, 0..10)], weight).
    Raising from filter/prioritize is the extender's error."""

    @property
    def name(self) -> str: ...

    def filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], Mapping[str, str], Mapping[str, str]]: ...

    def prioritize(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[tuple[str, int]], int]: ...

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def is_binder(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def process_preemption(
        self, pod: Pod, node_to_victims: Mapping[str, list[Pod]]
    ) -> Mapping[str, list[Pod]]: ...
