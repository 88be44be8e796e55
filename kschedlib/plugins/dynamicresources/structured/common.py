"""What the allocator's parts share: device IDs, capacity maps, the allocation errors, the
feature switches and the records of one (sub)request and of one chosen device."""

from __future__ import annotations

from fractions import Fraction

import attrs

from kschedlib.api.quantity import Quantity
from kschedlib.api.resource_v1 import (
    CapacityRequirements,
    Device,
    DeviceClass,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""

CapacityMap = dict[str, Fraction]
"""Consumed capacity of one device by capacity name."""


class AllocationError(Exception):
    """Something wrong with a claim, class or pool: aborts the scheduling cycle (Error)."""


class _TooMany(Exception):
    """errAllocationResultMaxSizeExceeded: the claim would get more results than allowed."""


class FailedOnNode(AllocationError):  # noqa: N818 - the Go name
    """ErrFailedAllocationOnNode: a problem of this node only (invalid pools); the node is
    unschedulable with this message, other nodes may still work."""


@attrs.define(slots=True, frozen=True)
class Features:
    """The allocator features of v1.35's default feature set; alpha ones off."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False  # DRAPartitionableDevices (alpha)
    device_taints: bool = False  # DRADeviceTaints (alpha)
    consumable_capacity: bool = False  # DRAConsumableCapacity (alpha)
    device_binding_conditions: bool = False  # DRADeviceBindingConditions (alpha)
    device_taint_rules: bool = False  # DRADeviceTaintRules (alpha; the plugin reads the rules)
    extended_resource: bool = False  # DRAExtendedResource (alpha; the plugin's business)
    device_status: bool = True  # DRAResourceClaimDeviceStatus (beta)

    @property
    def experimental(self) -> bool:
        """Whether v1.35 picks the "experimental" allocator (any alpha feature on)."""
        return (
            self.partitionable_devices or self.device_taints or self.consumable_capacity
            or self.device_binding_conditions
        )


@attrs.define(slots=True)
class _Req:
    """requestData: one request or subrequest to satisfy."""

    name: str  # the request's (or subrequest's) own name
    parent: str  # the parent request's name for a subrequest, else ""
    device_class: DeviceClass | None
    selectors: tuple[DeviceSelector, ...]
    mode: str
    count: int
    admin_access: bool
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base_name(self) -> str:
        return self.parent or self.name

    @property
    def sub_name(self) -> str:
        return self.name if self.parent else ""


@attrs.define(slots=True)
class _Result:
    req: _Req
    id: DeviceID
    slice: ResourceSlice
    device: Device | None = None
    # A shared allocation of an allowMultipleAllocations device (DRAConsumableCapacity).
    shared: bool = False
    consumed: dict[str, Quantity] | None = None


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"
