"""CycleState: per-scheduling-cycle scratch space shared by the plugins of one profile."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class StateNotFoundError(KeyError):
    """No state was written under the key (framework.ErrNotFound)."""

    def __str__(self) -> str:
        return "not found"


@runtime_checkable
class StateData(Protocol):
    """State a plugin stores in CycleState; ``clone`` makes an independent copy."""

    def clone(self) -> StateData: ...


class CycleState(dict[str, Any]):
    """Plugin state keyed by string, plus the plugins PreFilter/PreScore told us to skip.

    A dict underneath, so that ``state.get(key)`` on the per-node hot path costs a C call.
    """

    __slots__ = (
        "skip_filter_plugins",
        "skip_score_plugins",
        "skip_pre_bind_plugins",
        "record_plugin_metrics",
    )

    def __init__(self) -> None:
        super().__init__()
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        """The state under ``key``; raises StateNotFoundError ("not found") when absent."""
        try:
            return self[key]
        except KeyError:
            raise StateNotFoundError(key) from None

    def write(self, key: str, value: Any) -> None:
        self[key] = value

    def delete(self, key: str) -> None:
        self.pop(key, None)

    def clone(self) -> CycleState:
        """A copy whose values are cloned when they know how (StateData.clone)."""
        c = CycleState()
        for k, v in self.items():
            clone = getattr(v, "clone", None)
            c[k] = clone() if clone is not None else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        return c

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CycleState({dict.__repr__(self)})"
