"""Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate. Fields of alpha features (partitionable devices,
consumable capacity, device taints, binding conditions) are parsed so inputs round-trip;
the scheduler treats them as v1.35 does with those gates off."""

from __future__ import annotations

import builtins
from typing import Any

import attrs

from kschedlib.api.codec import one_of
from kschedlib.api.meta import KubeObject, ObjectMeta
from kschedlib.api.quantity import Quantity
from kschedlib.api.selectors import NodeSelector

API_VERSION = "resource.k8s.io/v1"
ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
# resourceapi.ResourceClaimReservedForMaxSize: how many consumers one claim may have.
RESERVED_FOR_MAX_SIZE = 256
# resourceapi.AllocationResultsMaxSize: devices in one claim's allocation.
ALLOCATION_RESULTS_MAX_SIZE = 32
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


# ------------------------------------------------------------------ selectors and classes


@attrs.define(slots=True, frozen=True, kw_only=True)
class CELDeviceSelector:
    expression: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceSelector:
    cel: CELDeviceSelector | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class OpaqueDeviceConfiguration:
    driver: str = ""
    parameters: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceClassConfiguration:
    opaque: OpaqueDeviceConfiguration | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceClassSpec:
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[DeviceClassConfiguration, ...] = ()
    extended_resource_name: str | None = None  # DRAExtendedResource (alpha, off)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceClass(KubeObject):
    label = "deviceclass"

    api_version: str = attrs.field(default=API_VERSION, metadata={"json": "apiVersion"})
    kind: str = "DeviceClass"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: DeviceClassSpec = attrs.field(factory=DeviceClassSpec)


# ------------------------------------------------------------------ slices


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceAttribute:
    """Exactly one of the typed values is set."""

    int: builtins.int | None = None
    bool: builtins.bool | None = None
    string: str | None = None
    version: str | None = None

    @property
    def value(self) -> Any:
        for v in (self.string, self.int, self.bool, self.version):
            if v is not None:
                return v
        return None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceCapacity:
    value: Quantity | None = None
    request_policy: Any = None  # DRAConsumableCapacity (alpha, off)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceTaint:
    key: str = ""
    value: str = ""
    effect: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class Device:
    name: str = ""
    attributes: dict[str, DeviceAttribute] = attrs.field(factory=dict)
    capacity: dict[str, DeviceCapacity] = attrs.field(factory=dict)
    # Alpha fields, parsed and ignored as with their gates off.
    consumes_counters: Any = None
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourcePool:
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceSliceSpec:
    driver: str = ""
    pool: ResourcePool = attrs.field(factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None  # DRAPartitionableDevices (alpha, off)
    devices: tuple[Device, ...] = ()
    shared_counters: Any = None  # DRAPartitionableDevices (alpha, off)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceSlice(KubeObject):
    label = "resourceslice"

    api_version: str = attrs.field(default=API_VERSION, metadata={"json": "apiVersion"})
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ResourceSliceSpec = attrs.field(factory=ResourceSliceSpec)


# ------------------------------------------------------------------ claims


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ExactDeviceRequest:
    device_class_name: str = ""
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = attrs.field(
        default=ALLOCATION_MODE_EXACT_COUNT,
        validator=one_of(ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_MODE_ALL),
    )
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Any = None  # DRAConsumableCapacity (alpha, off)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceSubRequest:
    name: str = ""
    device_class_name: str = ""
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = attrs.field(
        default=ALLOCATION_MODE_EXACT_COUNT,
        validator=one_of(ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_MODE_ALL),
    )
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Any = None

    @property
    def admin_access(self) -> bool | None:
        return None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceRequest:
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None  # DRAConsumableCapacity (alpha, off)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceClaimConfiguration:
    requests: tuple[str, ...] = ()
    opaque: OpaqueDeviceConfiguration | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceClaim:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimSpec:
    devices: DeviceClaim = attrs.field(factory=DeviceClaim)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceRequestAllocationResult:
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = attrs.field(default=None, metadata={"json": "shareID"})
    consumed_capacity: dict[str, Quantity] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceAllocationConfiguration:
    source: str = ""
    requests: tuple[str, ...] = ()
    opaque: OpaqueDeviceConfiguration | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceAllocationResult:
    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceAllocationConfiguration, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class AllocationResult:
    devices: DeviceAllocationResult = attrs.field(factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimConsumerReference:
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaim(KubeObject):
    label = "resourceclaim"

    api_version: str = attrs.field(default=API_VERSION, metadata={"json": "apiVersion"})
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)
    status: ResourceClaimStatus = attrs.field(factory=ResourceClaimStatus)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimTemplateSpec:
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimTemplate(KubeObject):
    label = "resourceclaimtemplate"

    api_version: str = attrs.field(default=API_VERSION, metadata={"json": "apiVersion"})
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = attrs.field(factory=ResourceClaimTemplateSpec)


DRA_KINDS: dict[str, type[KubeObject]] = {
    "DeviceClass": DeviceClass,
    "ResourceSlice": ResourceSlice,
    "ResourceClaim": ResourceClaim,
    "ResourceClaimTemplate": ResourceClaimTemplate,
}
