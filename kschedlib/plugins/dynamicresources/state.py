"""DynamicResources' names and messages, its per-cycle StateData and the small helpers its
extension points share."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from kschedlib.api.resource import is_extended_resource
from kschedlib.api.resource_v1 import RESOURCE_DEVICE_CLASS_PREFIX, AllocationResult, ResourceClaim
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.framework.status import Code, Status
from kschedlib.plugins.dynamicresources.allocator import Allocator

NAME = "DynamicResources"
STATE_KEY = NAME
KIND_RESOURCE_CLAIM = "ResourceClaim"
KIND_RESOURCE_SLICE = "ResourceSlice"
KIND_DEVICE_CLASS = "DeviceClass"
KIND_DEVICE_TAINT_RULE = "DeviceTaintRule"
MSG_NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_DELETED = "deletion of ResourceClaim completed"
# The name of the in-memory special claim before PreBind creates it (specialClaimInMemName).
SPECIAL_CLAIM_NAME = "<extended-resources>"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_IN_USE = "resourceclaim in use"
MSG_BINDING_TIMEOUT = "device binding timeout"
DEFAULT_BINDING_TIMEOUT = 600.0
"""DynamicResourcesArgs.bindingTimeout's default (seconds) with the binding-condition gates on."""
# Kept for callers of the earlier, allocation-less plugin.
MSG_ALLOCATION_UNSUPPORTED = MSG_CANNOT_ALLOCATE
# resourceapi.FirstAvailableDeviceRequestMaxSize: the prioritized-list score base.
FIRST_AVAILABLE_MAX = 8

_NO_CLAIMS = Status(Code.Unschedulable, (MSG_NO_CLAIMS_TO_DEALLOCATE,), NAME)
_STILL_NOT_SCHEDULABLE = Status(Code.Unschedulable, (MSG_STILL_NOT_SCHEDULABLE,), NAME)


def _is_extended(name: str) -> bool:
    """An extended resource name, the implicit ``deviceclass.resource.kubernetes.io/<class>``
    ones included."""
    return name.startswith(RESOURCE_DEVICE_CLASS_PREFIX) or is_extended_resource(name)


def _suffix(seed: str) -> str:
    """Five characters as kube-apiserver's generateName draws them (stable per seed here)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = int(hashlib.sha256(seed.encode()).hexdigest(), 16)
    out = []
    for _ in range(5):
        n, r = divmod(n, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


def _unresolvable(msg: str) -> Status:
    """statusUnschedulable: every DynamicResources rejection is UnschedulableAndUnresolvable."""
    return Status(Code.UnschedulableAndUnresolvable, (msg,), NAME)


class StateData:
    """Per-cycle data (stateData): the pod's claims and what Filter found per node."""

    __slots__ = (
        "claims", "available_on", "allocator", "to_allocate", "node_allocations",
        "unavailable_claims", "allocations", "ext_claim", "ext_resources", "ext_mapping",
        "node_ext_claims", "ext_by_requests", "user_claims", "bound_keys", "binding_deadline",
        "binding_unavailable",
    )

    def __init__(self, claims: tuple[ResourceClaim, ...] = ()) -> None:
        self.claims = claims
        self.user_claims = len(claims)
        # DRAExtendedResource: the special claim (last in ``claims``), the pod's scalar
        # requests and the resource-to-class mapping; per node the claim Filter built.
        self.ext_claim: ResourceClaim | None = None
        self.ext_resources: dict[str, int] = {}
        self.ext_mapping: dict[str, str] = {}
        self.node_ext_claims: dict[str, ResourceClaim | None] = {}
        self.ext_by_requests: dict[Any, ResourceClaim] = {}
        self.available_on: list[NodeSelectorMatcher | None] = []
        self.allocator: Allocator | None = None
        self.to_allocate: list[ResourceClaim] = []
        self.node_allocations: dict[str, list[AllocationResult]] = {}
        self.unavailable_claims: set[int] = set()
        # Set by Reserve: the allocation chosen for each claim index (None: was allocated).
        self.allocations: list[AllocationResult | None] = []
        # DRADeviceBindingConditions: claims PreBind wrote, the end of its wait, and the
        # allocated claims whose binding failed or timed out (unavailable to Filter).
        self.bound_keys: list[str] = []
        self.binding_deadline: float | None = None
        self.binding_unavailable: set[int] = set()

    def clone(self) -> StateData:
        return self


def _go_quote(text: str) -> str:
    """Go's %q for printable text: double quotes with backslash escapes."""
    return json.dumps(text, ensure_ascii=False)


def _utc(seconds: float) -> datetime:
    """A clock reading as the UTC time an API timestamp holds."""
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _seconds(stamp: Any) -> float | None:
    """An allocationTimestamp as seconds since the epoch (a clock reading or RFC 3339)."""
    if isinstance(stamp, bool) or stamp is None:
        return None
    if isinstance(stamp, (int, float)):
        return float(stamp)
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _not_found() -> Status:
    """What kube-scheduler reports when the cycle state has no entry (framework.ErrNotFound)."""
    return Status.error("not found", NAME)


def _field(obj: Any, *path: str) -> Any:
    """A nested field of an object given as attrs model or plain mapping."""
    for key in path:
        if obj is None:
            return None
        obj = obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)
    return obj
