"""The structured allocator of k8s.io/dynamic-resource-allocation (v1.35): which devices a
node can give to a pod's claims. With the default feature set it is the "stable" variant;
with any alpha feature on (``Features.experimental``) it also checks shared counters
(partitionable devices), per-device node selection, device taints, consumable capacity of
``allowMultipleAllocations`` devices and binding conditions, as the "experimental" one does.

Search order, as in Go: claims in pod order, requests in claim order (a request with
``firstAvailable`` tries its subrequests in order), then for each device needed the pools
(here: in the order their first slice appears), each pool's slices in list order (the
scheduler lists them by name) and each slice's devices in order, backtracking over earlier
choices when a later request or a ``matchAttribute`` constraint cannot be satisfied."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.quantity import BINARY_SI, Quantity, quantity_from_int
from kschedlib.api.resource_v1 import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequirements,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.api.selectors import (
    NodeSelector,
    NodeSelectorMatcher,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kschedlib.plugins.dynamicresources.selector_cache import (
    CELCompileError,
    CELError,
    SelectorCache,
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


def node_selector_of_slice(s: ResourceSlice) -> NodeSelectorMatcher | None:
    sel = s.spec.node_selector
    return NodeSelectorMatcher(sel) if sel is not None else None


class _Pool:
    __slots__ = (
        "driver", "name", "generation", "slices", "incomplete", "invalid", "_flat", "_counters",
    )

    def __init__(self, driver: str, name: str, first: ResourceSlice) -> None:
        self.driver = driver
        self.name = name
        self.generation = first.spec.pool.generation
        self.slices: list[ResourceSlice] = [first]
        self.incomplete = False
        self.invalid = ""
        self._flat: list[tuple[DeviceID, Device, ResourceSlice]] | None = None
        self._counters: dict[str, dict[str, Fraction]] | None = None

    def counter_sets(self) -> dict[str, dict[str, Fraction]]:
        """The pool's shared counter sets (from any of its slices), by set and counter name."""
        out = self._counters
        if out is None:
            out = {}
            for s in self.slices:
                for cs in s.spec.shared_counters:
                    out[cs.name] = {
                        n: (c.value.as_fraction() if c.value is not None else Fraction(0))
                        for n, c in cs.counters.items()
                    }
            self._counters = out
        return out

    def devices(self) -> list[tuple[DeviceID, Device, ResourceSlice]]:
        """The pool's devices in search order (slices in order, devices in order)."""
        flat = self._flat
        if flat is None:
            flat = [
                ((s.spec.driver, s.spec.pool.name, d.name), d, s)
                for s in self.slices
                for d in s.spec.devices
            ]
            self._flat = flat
        return flat

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _add_slice(pools: dict[tuple[str, str], _Pool], s: ResourceSlice) -> None:
    key = (s.spec.driver, s.spec.pool.name)
    pool = pools.get(key)
    if pool is None:
        pools[key] = _Pool(key[0], key[1], s)
        return
    gen = s.spec.pool.generation
    if gen < pool.generation:
        return  # outdated
    if gen > pool.generation:
        pool.slices = []
        pool.generation = gen
    pool.slices.append(s)


class SliceIndex:
    """The ResourceSlices of a cycle, indexed by node so that gathering a node's pools does
    not walk every slice (GatherPools' result is the same)."""

    __slots__ = ("_by_node", "_selected", "order", "_pools", "_generations")

    def __init__(self, slices: Iterable[ResourceSlice], features: Features) -> None:
        ordered = sorted(slices, key=lambda s: s.metadata.name)
        self.order = {id(s): i for i, s in enumerate(ordered)}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        # Pools per node object (nodes are immutable: a label change is a new object).
        self._pools: dict[str, tuple[Node, list[_Pool]]] = {}
        # Slices for all nodes or with a node selector, in order, with their matcher (None =
        # all nodes).
        self._selected: list[tuple[ResourceSlice, NodeSelectorMatcher | None]] = []
        # Per pool: how many slices each generation has, over all slices (checkSlicesInPool).
        self._generations: dict[tuple[str, str], dict[int, int]] = {}
        for s in ordered:
            spec = s.spec
            gens = self._generations.setdefault((spec.driver, spec.pool.name), {})
            gens[spec.pool.generation] = gens.get(spec.pool.generation, 0) + 1
            if spec.per_device_node_selection:
                if features.partitionable_devices:
                    # Each device names its nodes; the slice is a candidate everywhere.
                    self._selected.append((s, None))
                continue  # perDeviceNodeSelection needs DRAPartitionableDevices
            if spec.node_name:
                self._by_node.setdefault(spec.node_name, []).append(s)
            elif spec.all_nodes:
                self._selected.append((s, None))
            elif spec.node_selector is not None:
                self._selected.append((s, NodeSelectorMatcher(spec.node_selector)))
            # else: nothing known set (a future extension): ignored

    def pools_for(self, node: Node) -> list[_Pool]:
        """GatherPools: the pools whose slices are available on the node."""
        hit = self._pools.get(node.metadata.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._gather(node)
        self._pools[node.metadata.name] = (node, out)
        return out

    def _gather(self, node: Node) -> list[_Pool]:
        local = self._by_node.get(node.metadata.name, ())
        chosen: list[ResourceSlice] = list(local)
        labels = node.metadata.labels
        name = node.metadata.name
        for s, m in self._selected:
            if m is None or m.matches(labels, name):
                chosen.append(s)
        if local and len(chosen) > len(local):
            chosen.sort(key=lambda s: self.order[id(s)])
        pools: dict[tuple[str, str], _Pool] = {}
        for s in chosen:
            _add_slice(pools, s)
        out: list[_Pool] = []
        for p in pools.values():
            want = p.slices[0].spec.pool.resource_slice_count
            complete = len(p.slices) == want
            if not complete:
                # Slices of the pool for other nodes count too; a newer generation elsewhere
                # means this one is being replaced: the pool is ignored.
                gens = self._generations.get((p.driver, p.name), {})
                if any(g > p.generation for g in gens):
                    continue
                complete = gens.get(p.generation, 0) == want
            p.incomplete = not complete
            out.append(p)
            seen: set[str] = set()
            for s in p.slices:
                for d in s.spec.devices:
                    if d.name in seen:
                        p.invalid = f"duplicate device name {d.name}"
                        break
                    seen.add(d.name)
                if p.invalid:
                    break
        return out


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


class _MatchAttribute:
    __slots__ = ("request_names", "attribute", "value", "num")

    def __init__(self, requests: Sequence[str], attribute: str) -> None:
        self.request_names = set(requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.num = 0

    def _applies(self, base: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return base in self.request_names
        return base in self.request_names or f"{base}/{sub}" in self.request_names

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.value = attr
            self.num = 1
            return True
        cur = self.value
        assert cur is not None
        if attr.string is not None:
            ok = cur.string is not None and cur.string == attr.string
        elif attr.int is not None:
            ok = cur.int is not None and cur.int == attr.int
        elif attr.bool is not None:
            ok = cur.bool is not None and cur.bool == attr.bool
        elif attr.version is not None:
            ok = cur.version is not None and cur.version == attr.version
        else:
            ok = False
        if ok:
            self.num += 1
        return ok

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.num -= 1


def _attr_equal(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    if a.string is not None:
        return b.string is not None and a.string == b.string
    if a.int is not None:
        return b.int is not None and a.int == b.int
    if a.bool is not None:
        return b.bool is not None and a.bool == b.bool
    if a.version is not None:
        return b.version is not None and a.version == b.version
    return True  # unknown type: treated as a duplicate (the device is rejected)


class _DistinctAttribute(_MatchAttribute):
    """distinctAttribute (DRAConsumableCapacity): every device of the requests has a
    different value of the attribute."""

    __slots__ = ("values",)

    def __init__(self, requests: Sequence[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[DeviceAttribute] = []

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if any(_attr_equal(attr, v) for v in self.values):
            return False
        self.values.append(attr)
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.values.pop()


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


# ------------------------------------------------------------------ consumable capacity


def _frac(q: Quantity | None) -> Fraction:
    return q.as_fraction() if q is not None else Fraction(0)


def _round_up_range(req: Quantity, policy: CapacityRequestPolicy) -> Quantity:
    """roundUpRange: at least min, and min plus a whole number of steps (as an integer
    quantity in BinarySI, as v1.35 writes it)."""
    rng = policy.valid_range
    assert rng is not None and rng.min is not None
    if req.as_fraction() < rng.min.as_fraction():
        return rng.min
    if rng.step is None:
        return req
    lo, step = rng.min.value(), rng.step.value()
    added = req.value() - lo
    n = added // step if step else 0
    if step and added % step:
        n += 1
    return quantity_from_int(lo + step * n, BINARY_SI)


def consumed_quantity(requested: Quantity | None, cap: DeviceCapacity) -> Quantity:
    """calculateConsumedCapacity: what a request (or its absence) takes of one capacity."""
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value if cap.value is not None else quantity_from_int(0)
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        r = requested.as_fraction()
        for v in policy.valid_values:
            if r <= v.as_fraction():
                return v
    return requested


def violates_policy(value: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    v = value.as_fraction()
    if policy.default is not None and v == policy.default.as_fraction():
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and v > rng.max.as_fraction():
            return True
        if rng.step is not None:
            span = v - _frac(rng.min)
            if span % rng.step.as_fraction() != 0:
                return True
        return False
    if policy.valid_values:
        return all(v != x.as_fraction() for x in policy.valid_values)
    return False


class _Consumption:
    """What one request takes of one device, by capacity: quantities (for the allocation
    result), their values and the device's totals; ``ok`` False when a request names a
    capacity the device lacks or a request policy is violated."""

    __slots__ = ("ok", "quantities", "values", "totals")

    def __init__(self, requests: CapacityRequirements | None, device: Device) -> None:
        wanted = requests.requests if requests is not None else {}
        self.ok = all(name in device.capacity for name in wanted)
        self.quantities: dict[str, Quantity] = {}
        self.values: list[tuple[str, Fraction, Fraction]] = []
        if not self.ok:
            return
        for name, cap in device.capacity.items():
            consumed = consumed_quantity(wanted.get(name), cap)
            if violates_policy(consumed, cap.request_policy):
                self.ok = False
                return
            self.quantities[name] = consumed
            self.values.append((name, consumed.as_fraction(), _frac(cap.value)))


_CONSUMPTION: dict[tuple[int, int], tuple[Any, Device, _Consumption]] = {}


def consumption(requests: CapacityRequirements | None, device: Device) -> _Consumption:
    """The memoized _Consumption of a request on a device (both immutable)."""
    key = (id(requests), id(device))
    hit = _CONSUMPTION.get(key)
    if hit is not None and hit[0] is requests and hit[1] is device:
        return hit[2]
    c = _Consumption(requests, device)
    if len(_CONSUMPTION) > 100_000:
        _CONSUMPTION.clear()
    _CONSUMPTION[key] = (requests, device, c)
    return c


def capacity_fits(
    current: Mapping[str, Fraction] | None,
    requests: CapacityRequirements | None,
    device: Device,
    allocating: Mapping[str, Fraction] | None,
) -> bool:
    """CmpRequestOverCapacity: the request's capacity (with the device's request policy)
    still fits next to what is allocated and being allocated."""
    c = consumption(requests, device)
    if not c.ok:
        return False  # undefined capacity ("skip the device") or a policy violation
    for name, value, total in c.values:
        if current:
            value += current.get(name, 0)
        if allocating:
            value += allocating.get(name, 0)
        if value > total:
            return False
    return True


def consumed_capacity(requests: CapacityRequirements | None, device: Device) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest: per capacity of the device, what the request takes."""
    return consumption(requests, device).quantities


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """An attribute by fully qualified name; the driver's own domain may be left out."""
    a = device.attributes.get(name)
    if a is not None:
        return a
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


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


class Allocator:
    """structured.Allocator for one scheduling cycle: the claims' view of the cluster's
    devices (slices, classes, devices in use). ``allocate`` is called per node."""

    __slots__ = (
        "features", "classes", "allocated", "slices", "cel", "matches", "_setups",
        "request_matches", "allocated_capacity", "taint_rules", "_taints", "_available",
    )

    def __init__(
        self,
        features: Features,
        allocated: AbstractSet[DeviceID],
        classes: Callable[[str], DeviceClass | None],
        slices: SliceIndex,
        cel: SelectorCache,
        request_matches: dict[Any, tuple[Any, Device, bool]] | None = None,
        *,
        allocated_capacity: Mapping[DeviceID, CapacityMap] | None = None,
        taint_rules: Sequence[DeviceTaintRule] = (),
    ) -> None:
        self.features = features
        # Capacity consumed on shared devices by allocated claims (DRAConsumableCapacity).
        self.allocated_capacity: Mapping[DeviceID, CapacityMap] = allocated_capacity or {}
        # DeviceTaintRules (DRADeviceTaintRules): their taints add to the devices' own.
        self.taint_rules = tuple(taint_rules)
        self._taints: dict[DeviceID, tuple[Device, tuple[DeviceTaint, ...]]] = {}
        # Per pool name: counters left after the allocated devices (checkAvailableCounters).
        self._available: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.request_matches = request_matches if request_matches is not None else {}
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self.cel = cel
        # Whether a device fits a (sub)request does not depend on the node: shared by the
        # per-node runs of one cycle (keyed by claim identity and request indices).
        self.matches: dict[tuple[int, int, int, DeviceID], bool] = {}
        # Node-independent request setups (claims without allocationMode All).
        self._setups: dict[tuple[int, ...], tuple[Any, Any]] = {}

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[AllocationResult] | None:
        """One AllocationResult per claim, or None when the node cannot satisfy them all.
        AllocationError when something is wrong with a claim, class or pool."""
        return _Run(self, node, claims).run()

    def device_taints(self, did: DeviceID, device: Device) -> tuple[DeviceTaint, ...]:
        """The device's taints, those of matching DeviceTaintRules appended."""
        if not self.taint_rules:
            return device.taints
        hit = self._taints.get(did)
        if hit is not None and hit[0] is device:
            return hit[1]
        taints = device_taints(did, device, self.taint_rules, self.classes, self.cel)
        self._taints[did] = (device, taints)
        return taints

    def available_counters(self, pool: _Pool) -> dict[str, dict[str, Fraction]]:
        """The pool's counter sets minus what its allocated devices consume."""
        hit = self._available.get(pool.name)
        if hit is not None:
            return hit
        avail = {k: dict(v) for k, v in pool.counter_sets().items()}
        for did, device, _s in pool.devices():
            if did not in self.allocated:
                continue
            for cc in device.consumes_counters:
                cs = avail.get(cc.counter_set)
                if cs is None:
                    continue
                for name, c in cc.counters.items():
                    if name in cs:
                        cs[name] -= _frac(c.value)
        self._available[pool.name] = avail
        return avail

    def setup_for(self, claims: Sequence[ResourceClaim]) -> tuple[Any, Any] | None:
        return self._setups.get(tuple(id(c) for c in claims))

    def remember_setup(self, claims: Sequence[ResourceClaim], setup: tuple[Any, Any]) -> None:
        self._setups[tuple(id(c) for c in claims)] = setup


class _Run:
    """One Allocate call (the Go ``allocator`` struct)."""

    def __init__(self, a: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools = a.slices.pools_for(node)
        self.requests: list[list[list[_Req]]] = []  # claim -> request -> (sub)requests
        self.has_subrequests: list[list[bool]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        # Devices being allocated in this run, with the claims (indices) they go to.
        self.allocating: dict[DeviceID, set[int]] = {}
        self.matches = a.matches
        self.claim_ids = [id(c) for c in claims]
        fts = a.features
        self.experimental = fts.experimental
        self.consumable = fts.consumable_capacity
        # Capacity being allocated on shared devices in this run.
        self.allocating_capacity: dict[DeviceID, CapacityMap] = {}
        # Counters consumed by devices being allocated: pool name -> set -> counter.
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.pool_of: dict[tuple[str, str], _Pool] = (
            {(p.driver, p.name): p for p in self.pools} if self.experimental else {}
        )

    # ------------------------------------------------------------------ setup

    def _check(
        self, ci: int, name: str, selectors: Sequence[DeviceSelector], has_admin: bool,
        capacity: CapacityRequirements | None, what: str = "request",
    ) -> None:
        """validateDeviceRequest's checks before the class lookup."""
        claim = self.claims[ci]
        fts = self.a.features
        if capacity is not None and not fts.consumable_capacity and fts.experimental:
            raise AllocationError(
                f"claim {_claim_key(claim)}, {what} {name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                raise AllocationError(
                    f"claim {_claim_key(claim)}, request {name}, selector #{i}: CEL expression "
                    "empty (unsupported selector type?)"
                )
        if has_admin and not fts.admin_access:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {name}: admin access is requested, but "
                "the feature is disabled"
            )

    def _validate(self, ci: int, ri: int, si: int, req: _Req) -> None:
        claim = self.claims[ci]
        if req.mode == ALLOCATION_MODE_EXACT_COUNT:
            req.num_devices = req.count
        elif req.mode == ALLOCATION_MODE_ALL:
            req.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for d in s.spec.devices:
                        did = (s.spec.driver, s.spec.pool.name, d.name)
                        if not self._selectable(ci, ri, si, req, d, did):
                            continue
                        if s.spec.per_device_node_selection and not device_node_matches(
                            self.node, d
                        ):
                            continue
                        if self.a.features.consumable_capacity and not self._capacity_fits(
                            req, did, d
                        ):
                            continue
                        req.all_devices.append((did, d, s))
            req.num_devices = len(req.all_devices)
        else:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {req.name}: unsupported count mode "
                f"{req.mode}"
            )

    def _class(self, ci: int, request_name: str, class_name: str) -> DeviceClass:
        if not class_name:
            raise AllocationError(
                f"claim {_claim_key(self.claims[ci])}, request {request_name}: missing device "
                "class name (unsupported request type?)"
            )
        dc = self.a.classes(class_name)
        if dc is None:
            raise AllocationError(
                f"claim {_claim_key(self.claims[ci])}, request {request_name}: could not "
                f'retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" '
                "not found"
            )
        return dc

    def _setup(self) -> None:
        cached = self.a.setup_for(self.claims)
        if cached is not None:
            self.requests, self.has_subrequests = cached
        else:
            self._setup_requests()
        for claim in self.claims:
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                if c.match_attribute is not None:
                    cons.append(_MatchAttribute(c.requests, c.match_attribute))
                elif c.distinct_attribute is not None and self.a.features.experimental:
                    cons.append(_DistinctAttribute(c.requests, c.distinct_attribute))
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            self.constraints.append(cons)

    def _setup_requests(self) -> None:
        node_independent = True
        for ci, claim in enumerate(self.claims):
            per_claim = 0
            reqs: list[list[_Req]] = []
            subs: list[bool] = []
            for ri, r in enumerate(claim.spec.devices.requests):
                if r.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {_claim_key(claim)}, request {r.name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    alts: list[_Req] = []
                    for si, sr in enumerate(r.first_available):
                        self._check(ci, sr.name, sr.selectors, False, sr.capacity, "subrequest")
                        req = _Req(
                            sr.name, r.name, self._class(ci, sr.name, sr.device_class_name),
                            sr.selectors, sr.allocation_mode, sr.count, False,
                            tolerations=sr.tolerations, capacity=sr.capacity,
                        )
                        self._validate(ci, ri, si, req)
                        alts.append(req)
                    per_claim += min(x.num_devices for x in alts)
                    reqs.append(alts)
                    subs.append(True)
                elif r.exactly is not None:
                    ex = r.exactly
                    self._check(
                        ci, r.name, ex.selectors, ex.admin_access is not None, ex.capacity
                    )
                    admin = bool(ex.admin_access) and self.a.features.admin_access
                    req = _Req(
                        r.name, "", self._class(ci, r.name, ex.device_class_name),
                        ex.selectors, ex.allocation_mode, ex.count, admin,
                        tolerations=ex.tolerations, capacity=ex.capacity,
                    )
                    self._validate(ci, ri, 0, req)
                    per_claim += req.num_devices
                    reqs.append([req])
                    subs.append(False)
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {r.name}: unsupported request type"
                    )
            if per_claim > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_claim_key(claim)}: number of requested devices {per_claim} "
                    f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.requests.append(reqs)
            self.has_subrequests.append(subs)
            if any(x.mode == ALLOCATION_MODE_ALL for alts in reqs for x in alts):
                node_independent = False
        if node_independent:
            self.a.remember_setup(self.claims, (self.requests, self.has_subrequests))

    # ------------------------------------------------------------------ selection

    def _selectors_match(
        self, ci: int, device: Device, driver: str, dc: DeviceClass | None,
        selectors: Sequence[DeviceSelector],
    ) -> bool:
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                continue
            try:
                ok = self.a.cel.matches(sel.cel.expression, driver, device)
            except CELCompileError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {exc}") from None
            except CELError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {exc}") from None
            if not ok:
                return False
        return True

    def _selectable(
        self, ci: int, ri: int, si: int, req: _Req, device: Device, did: DeviceID
    ) -> bool:
        if device.binding_conditions and not self.a.features.device_binding_conditions:
            return False  # devices with binding conditions need DRADeviceBindingConditions
        key = (self.claim_ids[ci], ri, si, did)
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = self._request_matches(ci, req, device, did[0])
        self.matches[key] = ok
        return ok

    def _request_matches(self, ci: int, req: _Req, device: Device, driver: str) -> bool:
        """The class's selectors, then the request's; memoized across cycles by (class,
        selectors, device) since none of them depends on the claim or the node. Errors are
        not memoized: their message names the claim."""
        dc = req.device_class
        shared = self.a.request_matches
        key = (id(dc), req.selectors, id(device))
        hit = shared.get(key)
        if hit is not None and hit[0] is dc and hit[1] is device:
            return hit[2]
        ok = (
            dc is None or self._selectors_match(ci, device, driver, dc, dc.spec.selectors)
        ) and self._selectors_match(ci, device, driver, None, req.selectors)
        if len(shared) > 200_000:
            shared.clear()
        shared[key] = (dc, device, ok)
        return ok

    def _in_use(self, did: DeviceID) -> bool:
        """deviceInUse: allocated already, or being allocated for any claim of this run."""
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _usable(self, ci: int, req: _Req, did: DeviceID) -> bool:
        """The "in use" check: an admin-access request only avoids devices it is already
        allocating for the same claim."""
        if req.admin_access:
            return ci not in self.allocating.get(did, ())
        return not self._in_use(did)

    def _capacity_fits(self, req: _Req, did: DeviceID, device: Device) -> bool:
        return capacity_fits(
            self.a.allocated_capacity.get(did), req.capacity, device,
            self.allocating_capacity.get(did),
        )

    def _check_counters(self, did: DeviceID, device: Device) -> bool:
        """checkAvailableCounters: add the device's consumption; False (and taken back) when
        some counter of its pool would go below zero."""
        pool = self.pool_of.get((did[0], did[1]))
        if pool is None:
            return False
        avail = self.a.available_counters(pool)
        used = self.consumed_counters.setdefault(pool.name, {})
        for cc in device.consumes_counters:
            cs = used.setdefault(cc.counter_set, {})
            for name, c in cc.counters.items():
                cs[name] = cs.get(name, 0) + _frac(c.value)
        for set_name, counters in avail.items():
            cs = used.get(set_name, {})
            for name, have in counters.items():
                if have < cs.get(name, 0):
                    self._release_counters(did, device)
                    return False
        return True

    def _release_counters(self, did: DeviceID, device: Device) -> None:
        pool = self.pool_of.get((did[0], did[1]))
        if pool is None:
            return
        used = self.consumed_counters.get(pool.name, {})
        for cc in device.consumes_counters:
            cs = used.setdefault(cc.counter_set, {})
            for name, c in cc.counters.items():
                cs[name] = cs.get(name, 0) - _frac(c.value)

    def _take(
        self, ci: int, req: _Req, did: DeviceID, device: Device, s: ResourceSlice, must: bool
    ) -> bool:
        """allocateDevice: check use and constraints, then record the device."""
        if not self.experimental:
            if not self._usable(ci, req, did):
                return False
            if device.consumes_counters:
                return False  # counters need DRAPartitionableDevices
        elif not self._take_experimental(ci, req, did, device):
            return False
        base, sub = req.base_name, req.sub_name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, device, did[0]):
                if must:
                    raise AllocationError(
                        f"claim {_claim_key(self.claims[ci])}, request {req.name}: cannot add "
                        f"device {did[0]}/{did[1]}/{did[2]} because a claim constraint would "
                        "not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return False
        if not self.consumable:
            self.allocating.setdefault(did, set()).add(ci)
            self.results[ci].append(_Result(req, did, s, device))
            return True
        multi = bool(device.allow_multiple_allocations)
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
        if not self._capacity_fits(req, did, device):
            return False  # as in Go, without undoing the steps above (cannot happen here)
        if not multi:
            self.results[ci].append(_Result(req, did, s, device))
            return True
        used = consumption(req.capacity, device)
        cur = self.allocating_capacity.setdefault(did, {})
        for name, value, _total in used.values:
            cur[name] = cur.get(name, 0) + value
        self.results[ci].append(_Result(req, did, s, device, True, used.quantities or None))
        return True

    def _take_experimental(self, ci: int, req: _Req, did: DeviceID, device: Device) -> bool:
        """The experimental allocator's checks before the constraints: use, counters, taints."""
        fts = self.a.features
        multi = fts.consumable_capacity and bool(device.allow_multiple_allocations)
        if req.admin_access:
            if not multi and ci in self.allocating.get(did, ()):
                return False
        elif self._in_use(did):
            return False
        if device.consumes_counters:
            if not fts.partitionable_devices:
                return False
            if not self._check_counters(did, device):
                return False
        # As in v1.35, counters taken above stay taken when a taint or constraint rejects
        # the device afterwards.
        return not (
            fts.device_taints
            and taint_prevents_allocation(self.a.device_taints(did, device), req)
        )

    def _untake(self, ci: int, req: _Req, did: DeviceID, keep: int) -> None:
        """The rollback of _take: results are truncated to what they were before it."""
        for c in self.constraints[ci]:
            c.remove(req.base_name, req.sub_name)
        holders = self.allocating.get(did)
        if holders is not None:
            holders.discard(ci)
        if self.experimental:
            res = self.results[ci][keep] if keep < len(self.results[ci]) else None
            if res is not None and res.shared:
                cur = self.allocating_capacity.get(did)
                if cur is not None and res.consumed:
                    for name, q in res.consumed.items():
                        cur[name] = cur.get(name, 0) - q.as_fraction()
            elif (
                res is not None and res.device is not None and res.device.consumes_counters
                and self.a.features.partitionable_devices
            ):
                self._release_counters(did, res.device)
        del self.results[ci][keep:]

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: satisfy device ``di`` of (sub)request (ci, ri, si), then the rest.
        _TooMany when the claim would exceed the result limit (more aggressive backtracking)."""
        if ci >= len(self.claims):
            return True
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _TooMany:
                return False
        alts = reqs[ri]
        if not in_sub and self.has_subrequests[ci][ri]:
            all_too_many = True
            for sub in range(len(alts)):
                try:
                    if self._one(ci, ri, sub, 0, True):
                        return True
                except _TooMany:
                    continue
                all_too_many = False
            if all_too_many:
                raise _TooMany
            return False
        req = alts[si]
        do_all = req.mode == ALLOCATION_MODE_ALL
        if do_all and not req.all_devices:
            return False
        if di >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooMany
        if do_all:
            assert req.all_devices is not None
            did, device, s = req.all_devices[di]
            keep = len(self.results[ci])
            if not self._take(ci, req, did, device, s, True):
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except _TooMany:
                self._untake(ci, req, did, keep)
                raise
            if not done:
                self._untake(ci, req, did, keep)
            return done
        allocated, allocating, admin = self.a.allocated, self.allocating, req.admin_access
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue  # never allocated from, but other pools may do
            for did, device, s in pool.devices():
                # The "in use" check, inlined from _usable (hot loop).
                if admin:
                    holders = allocating.get(did)
                    if holders and ci in holders:
                        continue
                elif did in allocated or allocating.get(did):
                    continue
                if not self._selectable(ci, ri, si, req, device, did):
                    continue
                if self.experimental:
                    if s.spec.per_device_node_selection and not device_node_matches(
                        self.node, device
                    ):
                        continue
                    if self.a.features.consumable_capacity and not self._capacity_fits(
                        req, did, device
                    ):
                        continue
                keep = len(self.results[ci])
                if not self._take(ci, req, did, device, s, False):
                    continue
                try:
                    done = self._one(ci, ri, si, di + 1, in_sub)
                except _TooMany:
                    self._untake(ci, req, did, keep)
                    raise
                if done:
                    return True
                self._untake(ci, req, did, keep)
        return False

    # ------------------------------------------------------------------ results

    def run(self) -> list[AllocationResult] | None:
        self._setup()
        try:
            done = self._one(0, 0, 0, 0, False)
        except _TooMany:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        out: list[AllocationResult] = []
        for ci, claim in enumerate(self.claims):
            if self.experimental:
                results = tuple(self._full_result(claim, i, r)
                                for i, r in enumerate(self.results[ci]))
                node_selector = self._node_selector(self.results[ci], self.node.metadata.name)
            else:
                results = tuple(_device_result(r.req.full_name, r.id, r.req.admin_access)
                                for r in self.results[ci])
                node_selector = self._node_selector(self.results[ci])
            config = self._config(claim, self.results[ci])
            out.append(
                AllocationResult(
                    devices=DeviceAllocationResult(results=results, config=config),
                    node_selector=node_selector,
                )
            )
        return out

    def _full_result(
        self, claim: ResourceClaim, index: int, r: _Result
    ) -> DeviceRequestAllocationResult:
        """An allocation result of the experimental allocator: tolerations, share ID and
        consumed capacity, binding conditions."""
        fts = self.a.features
        share_id = None
        if r.shared:
            # kube-scheduler draws a random UUID; a stable one keeps runs reproducible.
            share_id = str(uuid.uuid5(
                uuid.NAMESPACE_URL,
                f"{claim.metadata.uid or _claim_key(claim)}/{index}/{'/'.join(r.id)}",
            ))
        dev = r.device
        return DeviceRequestAllocationResult(
            request=r.req.full_name, driver=r.id[0], pool=r.id[1], device=r.id[2],
            admin_access=True if r.req.admin_access else None,
            tolerations=r.req.tolerations,
            binding_conditions=(
                dev.binding_conditions if dev is not None and fts.device_binding_conditions
                else ()
            ),
            binding_failure_conditions=(
                dev.binding_failure_conditions
                if dev is not None and fts.device_binding_conditions else ()
            ),
            share_id=share_id,
            consumed_capacity=dict(r.consumed) if r.consumed else {},
        )

    @staticmethod
    def _config(
        claim: ResourceClaim, results: list[_Result]
    ) -> tuple[DeviceAllocationConfiguration, ...]:
        """The configs of the chosen (sub)requests' classes, once per class with every
        request using the class, then the claim's configs: those for all requests, and the
        others once per request (or chosen subrequest) they name, as v1.35 writes them."""
        if not claim.spec.devices.config and all(
            r.req.device_class is None or not r.req.device_class.spec.config for r in results
        ):
            return ()
        chosen: dict[str, _Req] = {}
        for r in results:
            chosen.setdefault(r.req.base_name, r.req)
        class_configs: list[tuple[list[str], Any]] = []
        by_class: dict[str, list[list[str]]] = {}
        for request in claim.spec.devices.requests:
            req = chosen.get(request.name)
            if req is None or req.device_class is None:
                continue
            dc = req.device_class
            lists = by_class.get(dc.metadata.name)
            if lists is not None:
                for names in lists:
                    names.append(req.full_name)
                continue
            lists = []
            for c in dc.spec.config:
                names = [req.full_name]
                lists.append(names)
                class_configs.append((names, c.opaque))
            by_class[dc.metadata.name] = lists
        out = [
            DeviceAllocationConfiguration(source="FromClass", requests=tuple(names), opaque=op)
            for names, op in class_configs
        ]
        for cc in claim.spec.devices.config:
            if not cc.requests:
                out.append(DeviceAllocationConfiguration(
                    source="FromClaim", requests=cc.requests, opaque=cc.opaque))
                continue
            for request in claim.spec.devices.requests:
                req = chosen.get(request.name)
                if request.name in cc.requests or (
                    req is not None and req.parent and req.full_name in cc.requests
                ):
                    out.append(DeviceAllocationConfiguration(
                        source="FromClaim", requests=cc.requests, opaque=cc.opaque))
        return tuple(out)

    @staticmethod
    def _node_selector(results: list[_Result], node_name: str = "") -> NodeSelector | None:
        """createNodeSelector; ``node_name`` (the experimental allocator) enables per-device
        node selection and devices that bind to the node."""
        fields: list[NodeSelectorRequirement] = []
        exprs: list[NodeSelectorRequirement] = []
        for r in results:
            spec = r.slice.spec
            dev = r.device
            if node_name and spec.per_device_node_selection and dev is not None:
                if dev.node_name or dev.binds_to_node:
                    return _node_name_selector(node_name)
                sel = dev.node_selector
            else:
                if spec.node_name or (node_name and dev is not None and dev.binds_to_node):
                    return _node_name_selector(node_name or spec.node_name or "")
                sel = spec.node_selector
            if sel is not None:
                if len(sel.node_selector_terms) == 1:
                    t = sel.node_selector_terms[0]
                    fields.extend(x for x in t.match_fields if x not in fields)
                    exprs.extend(x for x in t.match_expressions if x not in exprs)
                elif len(sel.node_selector_terms) > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim: unsupported ResourceSlice.NodeSelector "
                        f"with {len(sel.node_selector_terms)} terms"
                    )
        if fields or exprs:
            return NodeSelector(node_selector_terms=(NodeSelectorTerm(
                match_expressions=tuple(exprs), match_fields=tuple(fields)),))
        return None


_NODE_NAME_SELECTORS: dict[str, NodeSelector] = {}
_DEVICE_RESULTS: dict[tuple[str, DeviceID, bool], DeviceRequestAllocationResult] = {}


def _device_result(request: str, did: DeviceID, admin: bool) -> DeviceRequestAllocationResult:
    """One allocation result (immutable, so shared between cycles)."""
    key = (request, did, admin)
    r = _DEVICE_RESULTS.get(key)
    if r is None:
        r = DeviceRequestAllocationResult(
            request=request, driver=did[0], pool=did[1], device=did[2],
            admin_access=True if admin else None,
        )
        if len(_DEVICE_RESULTS) > 100_000:
            _DEVICE_RESULTS.clear()
        _DEVICE_RESULTS[key] = r
    return r


def _node_name_selector(name: str) -> NodeSelector:
    """The selector for devices local to one node (immutable, so shared)."""
    sel = _NODE_NAME_SELECTORS.get(name)
    if sel is None:
        sel = NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(
            NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,)),
        )),))
        if len(_NODE_NAME_SELECTORS) > 100_000:
            _NODE_NAME_SELECTORS.clear()
        _NODE_NAME_SELECTORS[name] = sel
    return sel


def allocated_devices(
    claims: Iterable[ResourceClaim], shared_aware: bool = False
) -> set[DeviceID]:
    """GatherAllocatedState: devices of allocated claims, except admin-access results (and,
    with ``shared_aware`` (DRAConsumableCapacity), shared results)."""
    out: set[DeviceID] = set()
    for c in claims:
        alloc = c.status.allocation
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.admin_access or (shared_aware and r.share_id is not None):
                continue
            out.add((r.driver, r.pool, r.device))
    return out


def allocated_capacity(claims: Iterable[ResourceClaim]) -> dict[DeviceID, CapacityMap]:
    """The capacity that shared allocations (results with a share ID) consume, per device."""
    out: dict[DeviceID, CapacityMap] = {}
    for c in claims:
        alloc = c.status.allocation
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.share_id is None or not r.consumed_capacity:
                continue
            cur = out.setdefault((r.driver, r.pool, r.device), {})
            for name, q in r.consumed_capacity.items():
                cur[name] = cur.get(name, 0) + q.as_fraction()
    return out

