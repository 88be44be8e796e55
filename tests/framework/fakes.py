"""Configurable fake plugins and a helper to build a Framework from them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kschedlib.api import Node, Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.config import load_config
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.interface import NodeScore, PreFilterResult
from kschedlib.framework.registry import Registry
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Status


class Sort:
    name = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.timestamp < b.timestamp)


class Binder:
    name = "Binder"

    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.bound.append((pod.key, node_name))
        return None


class Fake:
    """A plugin whose behaviour at each point is a callable set by the test."""

    def __init__(self, name: str, log: list[str], **behaviour: Callable[..., Any]) -> None:
        self.name = name
        self.log = log
        self.b = behaviour
        for point in ("pre_filter", "filter", "pre_score", "score", "reserve", "permit",
                      "pre_bind", "bind", "post_filter"):
            if point not in behaviour:
                setattr(self, point, None)

    def _call(self, point: str, *args: Any) -> Any:
        self.log.append(f"{point}:{self.name}")
        return self.b[point](*args)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[Any]) -> Any:  # type: ignore[no-redef]
        return self._call("pre_filter", state, pod, nodes)

    def pre_filter_extensions(self) -> Any:
        return None

    def filter(self, state: CycleState, pod: Pod, ni: Any) -> Any:  # type: ignore[no-redef]
        return self._call("filter", state, pod, ni)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Any) -> Any:  # type: ignore[no-redef]
        return self._call("pre_score", state, pod, nodes)

    def score(self, state: CycleState, pod: Pod, ni: Any) -> Any:  # type: ignore[no-redef]
        return self.b["score"](state, pod, ni)

    def score_extensions(self) -> Any:
        norm = self.b.get("normalize")
        if norm is None:
            return None

        class Ext:
            def normalize_score(_s, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Any:
                return norm(scores)

        return Ext()

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Any:  # type: ignore[no-redef]
        return self._call("reserve", state, pod, node)

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        self.log.append(f"unreserve:{self.name}")

    def permit(self, state: CycleState, pod: Pod, node: str) -> Any:  # type: ignore[no-redef]
        return self._call("permit", state, pod, node)

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Any:  # type: ignore[no-redef]
        return self._call("pre_bind", state, pod, node)

    def bind(self, state: CycleState, pod: Pod, node: str) -> Any:  # type: ignore[no-redef]
        return self._call("bind", state, pod, node)

    def post_filter(self, state: CycleState, pod: Pod, m: Any) -> Any:  # type: ignore[no-redef]
        return self._call("post_filter", state, pod, m)


def make_framework(
    plugins: list[Any],
    *,
    weights: dict[str, int] | None = None,
    extra_plugins_cfg: dict[str, Any] | None = None,
    nodes: Sequence[Node] = (),
    pods: Sequence[Pod] = (),
) -> tuple[Framework, Snapshot]:
    reg = Registry()
    binder = Binder()
    reg.register("Sort", lambda a, h: Sort())
    reg.register("Binder", lambda a, h: binder)
    for p in plugins:
        reg.register(p.name, (lambda pl: lambda a, h: pl)(p))
    weights = weights or {}
    cfg = {
        "profiles": [
            {
                "schedulerName": "test",
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "Sort"}, {"name": "Binder"}]
                        + [{"name": p.name, "weight": weights.get(p.name, 0)} for p in plugins],
                        "disabled": [{"name": "*"}],
                    },
                    **(extra_plugins_cfg or {}),
                },
            }
        ]
    }
    snap = Snapshot.from_objects(pods, nodes)
    fwk = Framework(load_config(cfg, reg).profiles[0], reg, clock=FakeClock(), snapshot=snap)
    return fwk, snap


def node(name: str, **labels: str) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels},
                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def pod(name: str = "p", **spec: Any) -> Pod:
    return Pod.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


ALL = PreFilterResult(None)
