"""Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate. Fields of alpha features (partitionable devices,
consumable capacity, device taints, binding conditions) are typed; the allocator honours
them only when their feature gate is on, as v1.35 does. DeviceTaintRule is
resource.k8s.io/v1alpha3."""

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
class CapacityRequestPolicyRange:
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class CapacityRequestPolicy:
    """How a shared device's capacity may be requested (DRAConsumableCapacity)."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceCapacity:
    value: Quantity | None = None
    request_policy: CapacityRequestPolicy | None = None  # DRAConsumableCapacity


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceTaint:
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class Counter:
    value: Quantity | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class CounterSet:
    """Shared counters of a pool (DRAPartitionableDevices)."""

    name: str = ""
    counters: dict[str, Counter] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceCounterConsumption:
    counter_set: str = ""
    counters: dict[str, Counter] = attrs.field(factory=dict)


@attrs.define(slots=True, frozen=True, kw_only=True)
class Device:
    name: str = ""
    attributes: dict[str, DeviceAttribute] = attrs.field(factory=dict)
    capacity: dict[str, DeviceCapacity] = attrs.field(factory=dict)
    # Alpha fields, used only with their feature gates on.
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
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
    per_device_node_selection: bool | None = None  # DRAPartitionableDevices
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()  # DRAPartitionableDevices


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
class CapacityRequirements:
    """Capacity a request consumes from a shared device (DRAConsumableCapacity)."""

    requests: dict[str, Quantity] = attrs.field(factory=dict)


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
    capacity: CapacityRequirements | None = None  # DRAConsumableCapacity


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
    capacity: CapacityRequirements | None = None

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
    distinct_attribute: str | None = None  # DRAConsumableCapacity


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
class DeviceCondition:
    """A metav1.Condition in a device's status (binding conditions)."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: Any = None
    observed_generation: int | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class AllocatedDeviceStatus:
    """status.devices[]: what the driver reports about an allocated device."""

    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = attrs.field(default=None, metadata={"json": "shareID"})
    conditions: tuple[DeviceCondition, ...] = ()
    data: Any = None
    network_data: Any = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()


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


# ------------------------------------------------------------------ taint rules (v1alpha3)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceTaintSelector:
    device_class_name: str | None = None
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    selectors: tuple[DeviceSelector, ...] = ()


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceTaintRuleSpec:
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = attrs.field(factory=DeviceTaint)


@attrs.define(slots=True, frozen=True, kw_only=True)
class DeviceTaintRule(KubeObject):
    """A taint for the devices its selector picks (DRADeviceTaintRules)."""

    label = "devicetaintrule"

    api_version: str = attrs.field(
        default="resource.k8s.io/v1alpha3", metadata={"json": "apiVersion"}
    )
    kind: str = "DeviceTaintRule"
    metadata: ObjectMeta = attrs.field(factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = attrs.field(factory=DeviceTaintRuleSpec)
    status: Any = None


EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

DRA_KINDS: dict[str, type[KubeObject]] = {
    "DeviceClass": DeviceClass,
    "ResourceSlice": ResourceSlice,
    "ResourceClaim": ResourceClaim,
    "ResourceClaimTemplate": ResourceClaimTemplate,
    "DeviceTaintRule": DeviceTaintRule,
}
