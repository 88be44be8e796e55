"""v1.35 defaults: the default plugin set (multiPoint, in order, with score weights) and the
merge of a user's plugin sets into it."""

from __future__ import annotations

from kschedlib.config.types import EXTENSION_POINTS, PluginRef, Plugins, PluginSet
from kschedlib.features import DEFAULT_FEATURE_GATES, FeatureGates

DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef(name="SchedulingGates"),
    PluginRef(name="PrioritySort"),
    PluginRef(name="NodeUnschedulable"),
    PluginRef(name="NodeName"),
    PluginRef(name="TaintToleration", weight=3),
    PluginRef(name="NodeAffinity", weight=2),
    PluginRef(name="NodePorts"),
    PluginRef(name="NodeResourcesFit", weight=1),
    PluginRef(name="VolumeRestrictions"),
    PluginRef(name="NodeVolumeLimits"),
    PluginRef(name="VolumeBinding"),
    PluginRef(name="VolumeZone"),
    PluginRef(name="PodTopologySpread", weight=2),
    PluginRef(name="InterPodAffinity", weight=2),
    PluginRef(name="DynamicResources", weight=2),
    PluginRef(name="DefaultPreemption"),
    PluginRef(name="NodeResourcesBalancedAllocation", weight=1),
    PluginRef(name="ImageLocality", weight=1),
    PluginRef(name="DefaultBinder"),
)


def default_plugins(feature_gates: FeatureGates | None = None) -> Plugins:
    """getDefaultPlugins with applyFeatureGates: NodeDeclaredFeatures and GangScheduling are
    appended when their gates are on (DynamicResources is GA and locked on in v1.35)."""
    gates = feature_gates if feature_gates is not None else DEFAULT_FEATURE_GATES
    enabled = list(DEFAULT_MULTI_POINT)
    if gates.enabled("NodeDeclaredFeatures"):
        enabled.append(PluginRef(name="NodeDeclaredFeatures"))
    if not gates.enabled("DynamicResourceAllocation"):
        enabled = [p for p in enabled if p.name != "DynamicResources"]
    if gates.enabled("GangScheduling"):
        enabled.append(PluginRef(name="GangScheduling"))
    return Plugins(multi_point=PluginSet(enabled=tuple(enabled)))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: drop disabled defaults (all with "*"), override re-configured defaults in
    place, then append the remaining custom plugins."""
    disabled_names = custom.disabled_names() | default.disabled_names()
    disabled = tuple(PluginRef(name=p.name) for p in (*custom.disabled, *default.disabled))
    custom_index = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for d in default.enabled:
            if d.name in disabled_names:
                continue
            hit = custom_index.get(d.name)
            if hit is not None:
                replaced.add(hit[0])
                d = hit[1]
            enabled.append(d)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=tuple(enabled), disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default
    fields = {
        name: merge_plugin_set(default.point(name), custom.point(name))
        for name in (*EXTENSION_POINTS, "multi_point")
    }
    return Plugins(**fields)


def plugin_names(plugins: Plugins) -> list[str]:
    """Every plugin enabled anywhere, in first-seen order (pluginsNames)."""
    seen: dict[str, None] = {}
    for name in ("multi_point", *EXTENSION_POINTS):
        for p in plugins.point(name).enabled:
            seen.setdefault(p.name, None)
    return list(seen)
