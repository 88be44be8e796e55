"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as typed, immutable values."""

from __future__ import annotations

from typing import Any

import attrs

API_VERSION = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

EXTENSION_POINTS = (
    "pre_enqueue",
    "queue_sort",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "post_bind",
)


@attrs.define(slots=True, frozen=True, kw_only=True)
class PluginRef:
    """A plugin named in a plugin set; ``weight`` matters for Score (0 means the default 1)."""

    name: str = ""
    weight: int = 0


@attrs.define(slots=True, frozen=True, kw_only=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[PluginRef, ...] = ()

    def disabled_names(self) -> set[str]:
        return {p.name for p in self.disabled}


@attrs.define(slots=True, frozen=True, kw_only=True)
class Plugins:
    pre_enqueue: PluginSet = attrs.field(factory=PluginSet)
    queue_sort: PluginSet = attrs.field(factory=PluginSet)
    pre_filter: PluginSet = attrs.field(factory=PluginSet)
    filter: PluginSet = attrs.field(factory=PluginSet)
    post_filter: PluginSet = attrs.field(factory=PluginSet)
    pre_score: PluginSet = attrs.field(factory=PluginSet)
    score: PluginSet = attrs.field(factory=PluginSet)
    reserve: PluginSet = attrs.field(factory=PluginSet)
    permit: PluginSet = attrs.field(factory=PluginSet)
    pre_bind: PluginSet = attrs.field(factory=PluginSet)
    bind: PluginSet = attrs.field(factory=PluginSet)
    post_bind: PluginSet = attrs.field(factory=PluginSet)
    multi_point: PluginSet = attrs.field(factory=PluginSet)

    def point(self, name: str) -> PluginSet:
        ps: PluginSet = getattr(self, name)
        return ps


@attrs.define(slots=True, frozen=True, kw_only=True)
class PluginConfig:
    """Arguments of one plugin: ``args`` is the plugin's typed args object (or raw dict when
    the plugin takes none)."""

    name: str = ""
    args: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = attrs.field(factory=Plugins)
    plugin_config: tuple[PluginConfig, ...] = ()

    def args_for(self, name: str) -> Any:
        for pc in self.plugin_config:
            if pc.name == name:
                return pc.args
        return None


@attrs.define(slots=True, frozen=True, kw_only=True)
class KubeSchedulerConfiguration:
    """A defaulted and validated scheduler configuration."""

    profiles: tuple[Profile, ...] = ()
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    parallelism: int = 16

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None
