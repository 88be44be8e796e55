"""DynamicResources: kube-scheduler v1.35's DRA plugin with structured parameters.

PreEnqueue holds pods whose claims do not exist (yet); PreFilter collects the pod's claims,
checks device classes and prepares the structured allocator; Filter allocates per node;
PostFilter deallocates an allocated claim that kept the pod off some nodes; Reserve keeps
the chosen allocation in flight; PreBind writes allocation and ``reservedFor`` into the
scheduler's object store; Score ranks prioritized-list choices. Every rejection is
UnschedulableAndUnresolvable, as in v1.35.

The plugin class is assembled from one mixin per group of extension points: PreEnqueue and
the queueing hints (:mod:`.enqueue`), PreFilter (:mod:`.prefilter`), Filter and PostFilter
(:mod:`.filter`), Score (:mod:`.score`), Reserve, Unreserve and PreBind (:mod:`.binding`), on
the state and object-store accessors they share (:mod:`.base`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from kschedlib.errors import ConfigError
from kschedlib.features import features_of
from kschedlib.framework.registry import PluginSpec
from kschedlib.plugins.dynamicresources.allocator import Features
from kschedlib.plugins.dynamicresources.binding import BindingMixin
from kschedlib.plugins.dynamicresources.claims import extended_resource_claim, pod_claims
from kschedlib.plugins.dynamicresources.enqueue import EnqueueMixin
from kschedlib.plugins.dynamicresources.filter import FilterMixin
from kschedlib.plugins.dynamicresources.prefilter import PreFilterMixin
from kschedlib.plugins.dynamicresources.score import ScoreMixin
from kschedlib.plugins.dynamicresources.state import (
    MSG_ALLOCATION_UNSUPPORTED,
    MSG_NO_CLAIMS_TO_DEALLOCATE,
    MSG_STILL_NOT_SCHEDULABLE,
    NAME,
    STATE_KEY,
    StateData,
)

__all__ = [
    "MSG_ALLOCATION_UNSUPPORTED", "MSG_NO_CLAIMS_TO_DEALLOCATE", "MSG_STILL_NOT_SCHEDULABLE",
    "NAME", "PLUGINS", "STATE_KEY", "DynamicResources", "StateData", "extended_resource_claim",
    "new", "pod_claims",
]


class DynamicResources(EnqueueMixin, PreFilterMixin, FilterMixin, ScoreMixin, BindingMixin):
    """DRA with structured parameters (v1.35 default feature set)."""

    __slots__ = ()

    def clone(self, handle: Any) -> DynamicResources:
        """A copy bound to ``handle`` for a scheduler fork: its own in-flight allocations and
        device counts; the pure memo of selector results is shared."""
        new = DynamicResources(handle, self.features)
        new.binding_timeout = self.binding_timeout
        new.cel = self.cel
        new._in_flight = dict(self._in_flight)
        new._alloc_counts = Counter(self._alloc_counts)
        new._alloc_gen = self._alloc_gen
        return new


def new(args: Any, handle: Any) -> DynamicResources:
    """Factory: the allocator's features from the handle's feature gates."""
    fts = features_of(handle)
    plugin = DynamicResources(
        handle,
        Features(
            admin_access=fts.enable_dra_admin_access,
            prioritized_list=fts.enable_dra_prioritized_list,
            partitionable_devices=fts.enable_dra_partitionable_devices,
            device_taints=fts.enable_dra_device_taints,
            consumable_capacity=fts.enable_dra_consumable_capacity,
            device_binding_conditions=fts.enable_dra_device_binding_conditions,
            device_taint_rules=fts.enable_dra_device_taint_rules,
            extended_resource=fts.enable_dra_extended_resource,
            device_status=fts.enable_dra_resource_claim_device_status,
        ),
    )
    timeout = args.get("bindingTimeout") if isinstance(args, Mapping) else None
    if timeout is not None:
        plugin.binding_timeout = _duration_seconds(timeout, "bindingTimeout")
    return plugin


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def _duration_seconds(value: Any, field: str) -> float:
    """A metav1.Duration ("600s", "10m", "1m30s") or a number of seconds, validated > 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and value and _DURATION_PART.sub("", value) == "":
        seconds = sum(
            float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(value)
        )
    else:
        raise ConfigError(f"DynamicResourcesArgs.{field}: invalid duration {value!r}")
    if seconds <= 0:
        raise ConfigError(f"DynamicResourcesArgs.{field}: must be positive, got {value!r}")
    return seconds


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
