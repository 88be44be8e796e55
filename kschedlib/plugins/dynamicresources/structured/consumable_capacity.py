"""Consumable capacity (DRAConsumableCapacity): what a request consumes of a shared device's
capacity under the request policies, and whether it still fits."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kschedlib.api.quantity import BINARY_SI, Quantity, quantity_from_int
from kschedlib.api.resource_v1 import (
    CapacityRequestPolicy,
    CapacityRequirements,
    Device,
    DeviceCapacity,
)


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
