"""The API server's validation of CEL device selectors (pkg/apis/resource/validation):
an expression that is too long, does not compile or whose worst-case cost estimate exceeds
the runtime limit makes a DeviceClass, ResourceClaim or ResourceClaimTemplate invalid at
create, with the field path of the expression."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kschedlib.api.cel.compiler import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    compile_expression,
)

Problem = tuple[str, str]
"""A field path and the API server's wording."""


def _selectors(selectors: Any, path: str) -> Iterator[Problem]:
    for i, sel in enumerate(selectors or ()):
        cel = getattr(sel, "cel", None)
        if cel is None:
            continue
        where = f"{path}[{i}].cel.expression"
        expr = cel.expression
        if len(expr) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            limit = CEL_SELECTOR_EXPRESSION_MAX_LENGTH
            yield where, f"Too long: may not be more than {limit} bytes"
            continue
        compiled = compile_expression(expr)
        if compiled.error is not None:
            shown = expr if len(expr) <= 64 else expr[:61] + "..."
            yield where, f"Invalid value: \"{shown}\": {compiled.error}"
        elif (compiled.max_cost or 0) > CEL_SELECTOR_EXPRESSION_MAX_COST:
            yield where, "Forbidden: too complex, exceeds cost limit"


def _claim_spec(spec: Any, path: str) -> Iterator[Problem]:
    devices = getattr(spec, "devices", None)
    for i, req in enumerate(getattr(devices, "requests", ()) or ()):
        rpath = f"{path}.devices.requests[{i}]"
        if req.exactly is not None:
            yield from _selectors(req.exactly.selectors, f"{rpath}.exactly.selectors")
        for j, sub in enumerate(req.first_available or ()):
            yield from _selectors(sub.selectors, f"{rpath}.firstAvailable[{j}].selectors")


def selector_problems(kind: str, obj: Any) -> Iterator[Problem]:
    """The invalid device selectors of a DeviceClass, ResourceClaim or
    ResourceClaimTemplate (nothing for other kinds)."""
    if kind == "DeviceClass":
        yield from _selectors(obj.spec.selectors, "spec.selectors")
    elif kind == "ResourceClaim":
        yield from _claim_spec(obj.spec, "spec")
    elif kind == "ResourceClaimTemplate":
        yield from _claim_spec(obj.spec.spec, "spec.spec")
