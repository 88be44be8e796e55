"""Selectors the API server rejects at create are rejected when DeviceClasses, ResourceClaims
and ResourceClaimTemplates are decoded: InvalidObjectError naming the expression's field."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.objects import decode_any
from kschedlib.errors import InvalidObjectError


def _class(*expressions: str) -> dict[str, Any]:
    return {"kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


def _claim(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    spec = {"devices": {"requests": [request]}}
    return {"kind": kind, "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec}


def _sel(expr: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": expr}}]


@pytest.mark.parametrize("doc, obj, path, problem", [
    (_class('device.driver == "gpu.example.com"', "noSuchVar"), "deviceclass gpu",
     "spec.selectors[1].cel.expression",
     "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar'"),
    (_class("1"), "deviceclass gpu", "spec.selectors[0].cel.expression",
     "must evaluate to bool or the unknown type, not int"),
    (_claim("ResourceClaim", {"name": "r", "exactly": {
        "deviceClassName": "gpu", "selectors": _sel("device.driver ==")}}),
     "resourceclaim ns/c", "spec.devices.requests[0].exactly.selectors[0].cel.expression",
     "Syntax error: mismatched input '<EOF>'"),
    (_claim("ResourceClaim", {"name": "r", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu", "selectors": _sel("true")},
        {"name": "b", "deviceClassName": "gpu", "selectors": _sel('device.driver > 1')}]}),
     "resourceclaim ns/c",
     "spec.devices.requests[0].firstAvailable[1].selectors[0].cel.expression",
     "found no matching overload for '_>_' applied to '(string, int)'"),
    (_claim("ResourceClaimTemplate", {"name": "r", "exactly": {
        "deviceClassName": "gpu", "selectors": _sel("device.nope")}}),
     "resourceclaimtemplate ns/c",
     "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression",
     "undefined field 'nope'"),
    (_class("true || " * 1300 + "true"), "deviceclass gpu", "spec.selectors[0].cel.expression",
     "Too long: may not be more than 10240 bytes"),
    (_class("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
            "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
            "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
            "x + y + z + z2 + z3 + z4 > 0))))))"),
     "deviceclass gpu", "spec.selectors[0].cel.expression",
     "Forbidden: too complex, exceeds cost limit"),
])
def test_invalid_selectors_are_rejected_at_decode(
    doc: dict[str, Any], obj: str, path: str, problem: str
) -> None:
    with pytest.raises(InvalidObjectError) as err:
        decode_any(doc)
    assert err.value.obj.lower() == obj and err.value.field == path
    assert problem in err.value.problem and "\n" not in str(err.value)


def test_valid_selectors_decode() -> None:
    dc = decode_any(_class('device.attributes["gpu.example.com"].?model.orValue("") == "L4"',
                           'cel.bind(a, device.attributes["gpu.example.com"], a.numa == 1)'))
    assert len(dc.spec.selectors) == 2
    claim = decode_any(_claim("ResourceClaim", {"name": "r", "exactly": {
        "deviceClassName": "gpu",
        "selectors": _sel('device.capacity["gpu.example.com"].memory.isGreaterThan('
                          'quantity("1Gi"))')}}))
    assert claim.spec.devices.requests[0].exactly.selectors[0].cel is not None
