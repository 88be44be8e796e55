"""DefaultBinder Bind: hands the binding to the host (the API call in kube-scheduler)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Status

NAME = "DefaultBinder"


@runtime_checkable
class Binder(Protocol):
    """What the host offers to bind a pod; raising means the binding failed."""

    def bind(self, pod: Pod, node_name: str) -> None: ...


class DefaultBinder:
    """Binds through ``handle.binder`` (read at bind time); without one, binding is left to
    the host's own bookkeeping and always succeeds."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        binder = getattr(self._handle, "binder", None)
        if binder is None:
            return None
        try:
            binder.bind(pod, node_name)
        except Exception as exc:  # any failure of the host's binder fails the binding
            return Status.error(exc, NAME)
        return None


def new(args: Any, handle: Any) -> DefaultBinder:
    return DefaultBinder(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
