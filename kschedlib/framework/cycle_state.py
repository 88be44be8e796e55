"""CycleState: per-scheduling-cycle scratch space shared by the plugins of one profile."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class StateNotFoundError(KeyError):
    """No state was written under the key (framework.ErrNotFound)."""


@runtime_checkable
class StateData(Protocol):
    """State a plugin stores in CycleState; ``clone`` makes an independent copy."""

    def clone(self) -> StateData: ...


class CycleState:
    """Plugin state keyed by string, plus the plugins PreFilter/PreScore told us to skip."""

    __slots__ = (
        "_storage",
        "skip_filter_plugins",
        "skip_score_plugins",
        "skip_pre_bind_plugins",
        "record_plugin_metrics",
    )

    def __init__(self) -> None:
        self._storage: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        try:
            return self._storage[key]
        except KeyError:
            raise StateNotFoundError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._storage.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._storage[key] = value

    def delete(self, key: str) -> None:
        self._storage.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._storage

    def clone(self) -> CycleState:
        """A copy whose values are cloned when they know how (StateData.clone)."""
        c = CycleState()
        for k, v in self._storage.items():
            clone = getattr(v, "clone", None)
            c._storage[k] = clone() if clone is not None else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        return c
