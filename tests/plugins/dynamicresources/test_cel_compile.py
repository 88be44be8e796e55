"""Kubernetes' DRA CEL tests (k8s.io/dynamic-resource-allocation/cel compile_test.go),
translated: each case compiles an expression in the scheduler's environment and evaluates
it for one device, expecting a compile error, a runtime error or a result.

Not translated, and why:
- the list-type attribute cases (``list-of-*``, ``includes-*``, ``in-operator-on-list``,
  ``macro-on-list-of-*``): list-valued attributes (DRAListTypeAttributes) come after v1.35;
- ``allow_multiple_allocations_disabled`` (the NewExpressions environment without
  DRAConsumableCapacity): the scheduler compiles with the stored-expressions environment,
  where the field always exists;
- ``expectCost`` (cel-go's compile-time worst-case estimate) is checked exactly, and the
  actual cost charged at runtime must stay within it; for the ``macro-exists-on-*`` cases
  the estimate uses v1.35's attribute size (64, DeviceAttributeMaxValueLength) where the
  newer test uses the list-type maximum;
- context cancellation: an in-process evaluation has no context to cancel; the runtime cost
  limit is what stops a long evaluation (test_cel_limits.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.resource_v1 import Device, ResourceSlice
from kschedlib.plugins.dynamicresources.cel import (
    CELError,
    compile_expression,
    device_activation,
)

MAX_ATTRS = 32  # resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_ID = 32  # resourceapi.DeviceMaxIDLength
MAX_VALUE = 64  # resourceapi.DeviceAttributeMaxValueLength


def _device(attributes: dict[str, Any] | None = None, capacity: dict[str, str] | None = None,
            allow_multiple: bool | None = None) -> Device:
    dev: dict[str, Any] = {"name": "d0", "attributes": attributes or {},
                           "capacity": {k: {"value": v} for k, v in (capacity or {}).items()}}
    if allow_multiple is not None:
        dev["allowMultipleAllocations"] = allow_multiple
    s = ResourceSlice.from_dict({
        "metadata": {"name": "s"},
        "spec": {"driver": "dra.example.com", "nodeName": "n1",
                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [dev]},
    })
    return s.spec.devices[0]


def _b(v: bool) -> dict[str, Any]:
    return {"bool": v}


def _expensive_attributes() -> dict[str, Any]:
    out = {}
    for i in range(MAX_ATTRS):
        suffix = f"-{i}"
        out["dra.example.com/" + "x" * (MAX_ID - len(suffix)) + suffix] = {"string": "abc"}
    return out


# name: (expression, driver, attributes, capacity, allowMultipleAllocations,
#        compile error, match error, match, Kubernetes' cost estimate)
CASES: dict[str, tuple[Any, ...]] = {
    "true": ("true", "", None, None, None, "", "", True, 0),
    "false": ("false", "", None, None, None, "", "", False, 0),
    "syntax-error": ("?!", "", None, None, None, "Syntax error", "", False, 0),
    "type-error": ("1", "", None, None, None,
                   "must evaluate to bool or the unknown type, not int", "", False, 0),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', "",
        None, None, None, "", "no such key: noSuchAttr", False, 6),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', "",
        None, None, None, "", "no such key: noSuchAttr", False, 6),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", None, None, None,
                              "", "", False, 3),
    "domain-check-positive": ('"dra.example.com" in device.attributes', "",
                              {"dra.example.com/something": _b(True)}, None, None, "", "",
                              True, 3),
    "empty-driver-name": ('device.driver == ""', "", None, None, None, "", "", True, 2),
    "real-driver-name": ('device.driver == "dra.example.com"', "dra.example.com", None, None,
                         None, "", "", True, 4),
    "driver-name-qualifier": ('device.attributes["dra.example.com"].name', "dra.example.com",
                              {"name": _b(True)}, None, None, "", "", True, 4),
    "driver-name-qualifier-map-lookup": (
        'device.attributes["dra.example.com"]["name"]', "dra.example.com", {"name": _b(True)},
        None, None, "", "", True, 4),
    "bind": ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
             "dra.example.com", {"name": _b(True)}, None, None, "", "", True, 15),
    "qualified-attribute-name": ('device.attributes["other.example.com"].name',
                                 "dra.example.com", {"other.example.com/name": _b(True)}, None,
                                 None, "", "", True, 4),
    "bool": ('device.attributes["dra.example.com"].name', "dra.example.com",
             {"name": _b(True)}, None, None, "", "", True, 4),
    "int": ('device.attributes["dra.example.com"].name > 0', "dra.example.com",
            {"name": {"int": 1}}, None, None, "", "", True, 5),
    "string": ('device.attributes["dra.example.com"].name == "fish"', "dra.example.com",
               {"name": {"string": "fish"}}, None, None, "", "", True, 5),
    "macro-exists-on-int": ('device.attributes["dra.example.com"].name.exists(x, x > 0)',
                            "dra.example.com", {"name": {"int": 1}}, None, None, "",
                            "got 'types.Int', expected iterable type", False,
                            5 + (3 + 3) * MAX_VALUE),
    "macro-exists-on-bool": ('device.attributes["dra.example.com"].name.exists(x, x == true)',
                             "dra.example.com", {"name": _b(True)}, None, None, "",
                             "got 'types.Bool', expected iterable type", False,
                             5 + (3 + 3) * MAX_VALUE),
    "macro-exists-on-string": (
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")', "dra.example.com",
        {"name": {"string": "fish"}}, None, None, "",
        "got 'types.String', expected iterable type", False, 5 + (3 + 3) * MAX_VALUE),
    "macro-exists-on-version": (
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        "dra.example.com", {"name": {"version": "1.0.0"}}, None, None, "",
        "got 'cel.Semver', expected iterable type", False, 5 + (3 + 4) * MAX_VALUE),
    "version": ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
                "dra.example.com", {"name": {"version": "1.0.0"}}, None, None, "", "", True, 6),
    "version_v": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) '
        '&& isSemver("v1.0.0", true)', "dra.example.com", {"name": {"version": "1.0.0"}}, None,
        None, "", "", True, 7),
    "quantity": ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
                 "dra.example.com", None, {"name": "1Mi"}, None, "", "", True, 6),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "dra.example.com", None, {"name": "1Mi"}, None, "", "", True, 10),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "", None, None, None, "", "", True, 11),
    "all": (
        """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
""", "dra.example.com",
        {"bool": _b(True), "int": {"int": 1}, "string": {"string": "fish"},
         "version": {"version": "1.0.0"}}, {"quantity": "1Mi"}, None, "", "", True, 52),
    "many": ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b '
             '&& device.attributes["dra.example.com"].c', "dra.example.com",
             {"a": _b(True), "b": _b(True), "c": _b(True)}, None, None, "", "", True, 12),
    "check_attribute_domains": ('device.attributes.exists_one(x, x == "dra.example.com")',
                                "dra.example.com", {"services": {"string": "some_example_value"}},
                                None, None, "", "", True, 164),
    "check_attribute_ids": ('device.attributes["dra.example.com"].exists_one(x, x == "services")',
                            "dra.example.com", {"services": {"string": "some_example_value"}},
                            None, None, "", "", True, 133),
    "split_attribute": (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        "dra.example.com", {"services": {"string": "some_example_value"}}, None, None, "", "",
        True, 19),
    "regexp_attribute": ('device.attributes["dra.example.com"].services.matches("[^a]?sym")',
                         "dra.example.com", {"services": {"string": "asymetric"}}, None, None,
                         "", "", True, 18),
    "check_capacity_domains": ('device.capacity.exists_one(x, x == "dra.example.com")',
                               "dra.example.com", None, {"memory": "1Mi"}, None, "", "", True,
                               164),
    "check_capacity_ids": ('device.capacity["dra.example.com"].exists_one(x, x == "memory")',
                           "dra.example.com", None, {"memory": "1Mi"}, None, "", "", True, 133),
    "expensive": (
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
        "dra.example.com", "expensive", None, None, "", "actual cost limit exceeded", False,
        85555551),
    "allow_multiple_allocations": ("device.allowMultipleAllocations == true", "dra.example.com",
                                   None, None, True, "", "", True, 3),
    "allow_multiple_allocations_default": ("device.allowMultipleAllocations == false",
                                           "dra.example.com", None, None, None, "", "", True, 3),
    "allow_multiple_allocations_false": ("device.allowMultipleAllocations == false",
                                         "dra.example.com", None, None, False, "", "", True, 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kubernetes_dra_cel_case(name: str) -> None:
    (expr, driver, attributes, capacity, allow_multiple, compile_error, match_error,
     want, estimate) = CASES[name]
    compiled = compile_expression(expr)
    if compile_error:
        assert compiled.error is not None and compile_error in compiled.error
        assert "\n" not in compiled.error
        return
    assert compiled.error is None, compiled.error
    # cel-go's worst-case estimate, as Kubernetes' test expects it
    assert compiled.max_cost == estimate
    if attributes == "expensive":
        attributes = _expensive_attributes()
    device = _device(attributes, capacity, allow_multiple)
    activation = device_activation(driver, device)
    if match_error:
        with pytest.raises(CELError) as err:
            compiled.evaluate(activation)
        assert match_error in str(err.value) and "\n" not in str(err.value)
        return
    result, cost = compiled.evaluate(activation)
    assert result is want
    # the estimate bounds the actual cost of every case
    assert cost <= max(estimate, 1), (cost, estimate)


def test_the_cost_estimator_knows_every_macro_the_compiler_expands() -> None:
    from kschedlib.api.cel import compiler, tree

    assert set(compiler._LOOPS) == tree.MACRO_NAMES
