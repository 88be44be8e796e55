"""The DRA CEL environment: the device variable, Kubernetes' library functions, errors,
limits and memoization."""

from __future__ import annotations

import pytest

from kschedlib.api.resource_v1 import ResourceSlice
from kschedlib.plugins.dynamicresources.cel import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CELCompileError,
    CELError,
    SemverValue,
    compile_expression,
)
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache

DRIVER = "gpu.example.com"
SLICE = ResourceSlice.from_dict({
    "metadata": {"name": "s"},
    "spec": {"driver": DRIVER, "nodeName": "n1",
             "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "g0", "attributes": {
                 "model": {"string": "L40S"}, "numa": {"int": 1}, "mig": {"bool": True},
                 "driverVersion": {"version": "550.127.5"},
                 "resource.kubernetes.io/pcieRoot": {"string": "pci0000:10"}},
                 "capacity": {"memory": {"value": "48Gi"}}}]},
})
DEVICE = SLICE.spec.devices[0]


def _eval(expr: str) -> bool:
    return SelectorCache().matches(expr, DRIVER, DEVICE)


@pytest.mark.parametrize("expr, want", [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "L40S"', True),
    ('device.attributes["gpu.example.com"].model in ["A100", "L40S"]', True),
    ('device.attributes["gpu.example.com"].model.matches("^L[0-9]+S?$")', True),
    ('device.attributes["gpu.example.com"].model.startsWith("A")', False),
    ('device.attributes["gpu.example.com"].numa >= 1 && device.attributes["gpu.example.com"].mig', True),
    ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:10"', True),
    ('has(device.attributes["gpu.example.com"].cuda)', False),
    ('has(device.attributes["other.example.com"].x)', False),
    ('device.attributes["other.example.com"].size() == 0', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', False),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("550.0.0"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.major() == 550', True),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("550.127.5")) == 0', True),
    # cross-type numeric comparisons, as Kubernetes configures cel-go
    ('device.attributes["gpu.example.com"].numa > 0.5', True),
    ('device.attributes["gpu.example.com"].numa == 1.0', True),
    ('device.attributes["gpu.example.com"].numa < 1u', False),
    # the strings extension
    ('device.attributes["gpu.example.com"].model.lowerAscii() == "l40s"', True),
    ('"a,b,c".split(",").size() == 3 && ["x", "y"].join("-") == "x-y"', True),
    ('device.attributes["gpu.example.com"].model.indexOf("40") == 1', True),
    # cel.bind (cel-go's bindings extension, which Kubernetes enables)
    ('cel.bind(a, device.attributes["gpu.example.com"], a.numa == 1 && a.mig)', True),
    ('cel.bind(x, 1, cel.bind(y, 2, x + y == 3 && device.driver == "gpu.example.com"))', True),
    # optional types
    ('device.attributes["gpu.example.com"].?cuda.orValue("none") == "none"', True),
    ('device.attributes["gpu.example.com"].?numa.value() == 1', True),
    ('device.attributes["other.example.com"].?x.hasValue()', False),
    ('device.attributes[?"gpu.example.com"].?model.orValue("") == "L40S"', True),
    ('optional.of(1).value() == 1 && !optional.none().hasValue()', True),
    ('"keeps .?x and [?y] inside strings".size() > 0', True),
    # the sets extension
    ('sets.contains(["A100", "L40S", "H100"], [device.attributes["gpu.example.com"].model])', True),
    ('sets.intersects([0, 2], [device.attributes["gpu.example.com"].numa])', False),
    ('sets.equivalent([1, 2], [2, 1, 1])', True),
    # errors are absorbed by && and || when the other side decides, as in cel-go
    ('device.attributes["gpu.example.com"].cuda == "8.0" || true', True),
    ('false && device.attributes["gpu.example.com"].cuda == "8.0"', False),
])
def test_expressions(expr: str, want: bool) -> None:
    assert _eval(expr) is want


def test_runtime_errors_use_cel_go_wording() -> None:
    with pytest.raises(CELError, match="^no such key: cuda$"):
        _eval('device.attributes["gpu.example.com"].cuda == "8.0"')
    with pytest.raises(CELError, match="^no such key: x$"):
        _eval('device.attributes["other.example.com"].x')
    with pytest.raises(CELError, match="no such overload"):
        _eval('device.attributes["gpu.example.com"].model + 1 == 2')
    with pytest.raises(CELError, match="^CEL result of type string could not be converted to bool"):
        _eval('device.attributes["gpu.example.com"].model')
    # a result whose declared type is not bool is a compile error (found before any device)
    with pytest.raises(CELCompileError, match="must evaluate to bool or the unknown type, not string"):
        _eval('device.driver')


def test_optional_none_dereference_is_a_runtime_error() -> None:
    with pytest.raises(CELError, match="optional.none\\(\\) dereference"):
        _eval('device.attributes["gpu.example.com"].?cuda.value() == "8.0"')


def test_compile_errors_and_length_limit() -> None:
    with pytest.raises(CELCompileError, match="compilation failed"):
        _eval("device.driver ==")
    long_expr = "true && " * (CEL_SELECTOR_EXPRESSION_MAX_LENGTH // 8) + "true"
    assert len(long_expr) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH
    c = compile_expression(long_expr)
    assert c.error is not None and c.error.startswith("expression too long")


def test_semver_ordering() -> None:
    assert SemverValue("1.2.3-alpha").compare(SemverValue("1.2.3")) == -1
    assert SemverValue("1.2.3-alpha.2").compare(SemverValue("1.2.3-alpha.10")) == -1
    assert SemverValue("2.0.0").compare(SemverValue("1.99.99")) == 1
    with pytest.raises(CELError):
        SemverValue("01.2.3")


def test_results_are_memoized_per_expression_and_device() -> None:
    cache = SelectorCache()
    expr = 'device.attributes["gpu.example.com"].numa == 1'
    assert cache.matches(expr, DRIVER, DEVICE)
    compiled = compile_expression(expr)
    assert compile_expression(expr) is compiled
    calls = 0
    real = compiled.device_matches

    def counting(act: object) -> bool:
        nonlocal calls
        calls += 1
        return bool(real(act))  # type: ignore[arg-type]

    fresh = SelectorCache()
    original = type(compiled).device_matches
    try:
        type(compiled).device_matches = lambda self, act: counting(act)  # type: ignore[method-assign]
        for _ in range(3):
            assert fresh.matches(expr, DRIVER, DEVICE)
    finally:
        type(compiled).device_matches = original  # type: ignore[method-assign]
    assert calls == 1


def test_runtime_cost_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluation stops with cel-go's error once the cost budget is spent (one unit per
    evaluated node, so a lowered limit keeps the test fast)."""
    import kschedlib.api.cel.compiler as cel_mod

    assert cel_mod.CEL_SELECTOR_EXPRESSION_MAX_COST == 1_000_000
    items = "[" + ", ".join(str(i) for i in range(30)) + "]"
    expr = f"{items}.all(x, {items}.all(y, x + y >= 0))"
    assert _eval(expr)
    monkeypatch.setattr(cel_mod, "CEL_SELECTOR_EXPRESSION_MAX_COST", 2000)
    with pytest.raises(CELError, match="^operation cancelled: actual cost limit exceeded$"):
        _eval(expr)
    assert _eval('device.driver == "gpu.example.com"')


def test_interleaved_expressions_and_devices_match_fresh_evaluation() -> None:
    """The cache keeps results per (expression, device) and one activation (the last
    device's): in any order, its answers are those of a fresh evaluation, and it never
    holds an activation per device."""
    sl = ResourceSlice.from_dict({
        "metadata": {"name": "s2"},
        "spec": {"driver": DRIVER, "nodeName": "n1",
                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"g{i}", "attributes": {"numa": {"int": i % 3}},
                              "capacity": {"memory": {"value": f"{16 * (i + 1)}Gi"}}}
                             for i in range(6)]},
    })
    exprs = [
        'device.driver == "gpu.example.com"',
        'device.attributes["gpu.example.com"].numa == 1',
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.attributes["gpu.example.com"].numa / 0 == 1',  # a runtime error
    ]
    cache = SelectorCache()
    order = [(e, d) for d in sl.spec.devices for e in exprs]
    order += [(e, d) for e in exprs for d in reversed(sl.spec.devices)]  # all hits
    for e, d in order:
        try:
            got: object = cache.matches(e, DRIVER, d)
        except CELError as exc:
            got = f"error: {exc}"
        try:
            want: object = SelectorCache().matches(e, DRIVER, d)
        except CELError as exc:
            want = f"error: {exc}"
        assert got == want, (e, d.name)
    assert cache.matches(exprs[1], DRIVER, sl.spec.devices[1])
    assert not cache.matches(exprs[1], DRIVER, sl.spec.devices[2])
    # One activation at most, whatever the number of devices seen.
    assert not hasattr(cache, "_activations")
    assert cache._last[0] is sl.spec.devices[-1]  # the last device evaluated
