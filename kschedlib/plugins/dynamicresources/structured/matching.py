"""Device matching beyond the request's selectors: taints and tolerations (DeviceTaintRules
included), CEL selectors of a rule, and a device's own node selection."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import (
    Device,
    DeviceClass,
    DeviceSelector,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
)
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.plugins.dynamicresources.selector_cache import CELError, SelectorCache
from kschedlib.plugins.dynamicresources.structured.common import DeviceID, _Req


def tolerates(t: DeviceToleration, taint: DeviceTaint) -> bool:
    """resourceclaim.ToleratesTaint."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    if t.operator in ("", "Equal"):
        return t.value == taint.value
    return t.operator == "Exists"


def taint_prevents_allocation(taints: Iterable[DeviceTaint], req: _Req) -> bool:
    """A NoSchedule or NoExecute taint that no toleration of the request tolerates (other
    effects, None included, never prevent allocation)."""
    for taint in taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            tolerates(t, taint) for t in req.tolerations
        ):
            return True
    return False


def device_taints(
    did: DeviceID, device: Device, rules: Sequence[DeviceTaintRule],
    classes: Callable[[str], DeviceClass | None], cel: SelectorCache,
) -> tuple[DeviceTaint, ...]:
    """A device's taints: its own, then those of the DeviceTaintRules that select it (by
    driver, pool, device, class and CEL selectors)."""
    out = list(device.taints)
    for rule in rules:
        sel = rule.spec.device_selector
        if sel is not None:
            if sel.driver is not None and sel.driver != did[0]:
                continue
            if sel.pool is not None and sel.pool != did[1]:
                continue
            if sel.device is not None and sel.device != did[2]:
                continue
            if sel.device_class_name is not None:
                dc = classes(sel.device_class_name)
                if dc is None or not _cel_all(cel, dc.spec.selectors, did[0], device):
                    continue
            if sel.selectors and not _cel_all(cel, sel.selectors, did[0], device):
                continue
        out.append(rule.spec.taint)
    return tuple(out)


def _cel_all(
    cel: SelectorCache, selectors: Sequence[DeviceSelector], driver: str, device: Device
) -> bool:
    for sel in selectors:
        if sel.cel is None:
            return False
        try:
            if not cel.matches(sel.cel.expression, driver, device):
                return False
        except CELError:
            return False
    return True


def device_node_matches(node: Node, device: Device) -> bool:
    """NodeMatches for a device of a slice with perDeviceNodeSelection."""
    if device.node_name:
        return device.node_name == node.metadata.name
    if device.all_nodes:
        return True
    if device.node_selector is not None:
        return NodeSelectorMatcher(device.node_selector).matches(
            node.metadata.labels, node.metadata.name
        )
    return False
