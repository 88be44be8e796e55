"""CEL for DRA device selectors in the scheduler: the ``device`` variable of one device
(k8s.io/dynamic-resource-allocation/cel's DeviceMatches input) and the compiler of
:mod:`kschedlib.api.cel`, re-exported.

Attributes and capacities are keyed by domain (an attribute without a domain belongs to
the driver's domain); a missing domain is an empty map. ``allowMultipleAllocations`` is
always present (false when unset), as in the scheduler's stored-expressions environment."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.compiler import (
    CEL_SELECTOR_EXPRESSION_MAX_COST as CEL_SELECTOR_EXPRESSION_MAX_COST,
)
from kschedlib.api.cel.compiler import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH as CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
)
from kschedlib.api.cel.compiler import CompiledExpression as CompiledExpression
from kschedlib.api.cel.compiler import DomainMap
from kschedlib.api.cel.compiler import compile_expression as compile_expression
from kschedlib.api.cel.errors import CELCompileError as CELCompileError
from kschedlib.api.cel.errors import CELError as CELError
from kschedlib.api.cel.library import QuantityValue as QuantityValue
from kschedlib.api.cel.library import SemverValue as SemverValue
from kschedlib.api.resource_v1 import Device


def _attr_value(a: Any) -> Any:
    if a.string is not None:
        return a.string
    if a.bool is not None:
        return a.bool
    if a.int is not None:
        return a.int
    if a.version is not None:
        try:
            return SemverValue(a.version)
        except CELError:
            return a.version
    return None


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_activation(driver: str, device: Device) -> dict[str, Any]:
    """The ``device`` variable for one device of a slice of ``driver``."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, a in device.attributes.items():
        domain, ident = _split(name, driver)
        v = _attr_value(a)
        if v is not None:
            attrs.setdefault(domain, {})[ident] = v
    caps: dict[str, dict[str, Any]] = {}
    for name, c in device.capacity.items():
        if c.value is None:
            continue
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = QuantityValue(c.value)
    return {
        "device": {
            "driver": driver,
            "attributes": DomainMap(attrs),
            "capacity": DomainMap(caps),
            "allowMultipleAllocations": bool(device.allow_multiple_allocations),
        }
    }
