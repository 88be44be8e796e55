"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, v1.35): the
names the plugin, the device-taint eviction and the report use, from the modules of
:mod:`kschedlib.plugins.dynamicresources.structured` that define them."""

from kschedlib.plugins.dynamicresources.structured.allocated import (
    allocated_capacity,
    allocated_devices,
)
from kschedlib.plugins.dynamicresources.structured.allocator import Allocator
from kschedlib.plugins.dynamicresources.structured.common import (
    AllocationError,
    CapacityMap,
    DeviceID,
    FailedOnNode,
    Features,
)
from kschedlib.plugins.dynamicresources.structured.matching import device_taints, tolerates
from kschedlib.plugins.dynamicresources.structured.pools import SliceIndex

__all__ = [
    "AllocationError", "Allocator", "CapacityMap", "DeviceID", "FailedOnNode", "Features",
    "SliceIndex", "allocated_capacity", "allocated_devices", "device_taints", "tolerates",
]
