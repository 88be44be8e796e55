"""The runtime cost limit bounds time and memory; every CEL error is one line, also in a
FailedScheduling message."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from kschedlib.plugins.dynamicresources.cel import compile_expression

COST_ERROR = "operation cancelled: actual cost limit exceeded"

_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
# Expressions that would run for minutes or need gigabytes without the cost limit.
EXPENSIVE = {
    # cel-go's own example: 10^7 iterations
    "nested-all": f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, "
                  f"{_TEN}.all(z4, {_TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))",
    # a string doubled 40 times (2^44 characters)
    "string-doubling": "cel.bind(s0, 'xxxxxxxxxxxxxxxx', " + "".join(
        f"cel.bind(s{i + 1}, s{i} + s{i}, " for i in range(40)) + "s40.size() > 0" + ")" * 41,
    # a list doubled 40 times
    "list-doubling": f"cel.bind(l0, {_TEN}, " + "".join(
        f"cel.bind(l{i + 1}, l{i} + l{i}, " for i in range(40)) + "l40.size() > 0" + ")" * 41,
    # replace() growing a string tenfold per step
    "replace-growth": "cel.bind(r0, 'xxxxxxxxxx', " + "".join(
        f"cel.bind(r{i + 1}, r{i}.replace('x', 'xxxxxxxxxx'), " for i in range(12))
    + "r12.size() > 0" + ")" * 13,
    # comprehensions building 10^8 elements
    "nested-map": f"{_TEN}.map(a, {_TEN}.map(b, {_TEN}.map(c, {_TEN}.map(d, {_TEN}.map(e, "
                  f"{_TEN}.map(f, {_TEN}.map(g, {_TEN}.map(h, 'abcdefgh')))))))).size() > 0",
}

_CHILD = textwrap.dedent("""
    import json, resource, sys
    limit = 1024 * 1024 * 1024  # 1 GiB of address space for the whole interpreter
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
    from kschedlib.plugins.dynamicresources.cel import CELError, compile_expression
    out = {}
    for name, expr in json.loads(sys.stdin.read()).items():
        c = compile_expression(expr)
        assert c.error is None, (name, c.error)
        try:
            c.device_matches({"device": {}})
            out[name] = "no error"
        except CELError as exc:
            out[name] = str(exc)
    print(json.dumps(out))
""")


def test_expensive_selectors_stop_with_the_cost_error_in_bounded_memory() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], input=json.dumps(EXPENSIVE), capture_output=True,
        text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {name: COST_ERROR for name in EXPENSIVE}


@pytest.mark.parametrize("expr, error", [
    ("?!", "compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '?'"),
    ("device.driver ==", "compilation failed: ERROR: <input>:1:15: Syntax error: "
                         "mismatched input '<EOF>'"),
    ("noSuchVar", "compilation failed: ERROR: <input>:1:1: undeclared reference to "
                  "'noSuchVar' (in container '')"),
    ("1", "must evaluate to bool or the unknown type, not int"),
    ('device.driver.startsWith(1)', "found no matching overload for 'startsWith' applied to "
                                    "'string.(int)'"),
    ('device.driver + 1 == "x"', "found no matching overload for '_+_' applied to "
                                 "'(string, int)'"),
    ("device.noSuchField", "undefined field 'noSuchField'"),
    ('quantity(1).isInteger()', "found no matching overload for 'quantity' applied to '(int)'"),
    ('[1, "a"].size() == 2', "expected type 'int' but found 'string'"),
    ("device.driver.noSuchFunction()", "undeclared reference to 'noSuchFunction'"),
    ("(" * 300 + "true" + ")" * 300, "max recursion depth exceeded"),
])
def test_compile_errors_are_found_without_a_device_in_one_line(expr: str, error: str) -> None:
    c = compile_expression(expr)
    assert c.error is not None and error in c.error
    assert "\n" not in c.error and "0x" not in c.error


def _cluster(expression: str) -> list[Any]:
    """A pod whose claim's class has ``expression``, set after decoding (an object built in
    Python is not validated, so the scheduler meets the error as it would for a class stored
    before a stricter API server)."""
    import attrs

    from kschedlib.api.objects import decode_any

    docs: list[dict[str, Any]] = [
        {"kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}},
        {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": [
            {"cel": {"expression": "true"}}]}},
        {"kind": "ResourceSlice", "metadata": {"name": "n1-gpu"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "L4"}}}]}},
        {"kind": "ResourceClaim", "metadata": {"name": "c0", "namespace": "default", "uid": "c0"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}},
        {"kind": "Pod", "metadata": {"name": "p0", "namespace": "default", "uid": "p0"},
         "spec": {"containers": [{"name": "c"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "c0"}]}},
    ]
    objs = [decode_any(d) for d in docs]
    dc = objs[1]
    sel = dc.spec.selectors[0]
    objs[1] = attrs.evolve(dc, spec=attrs.evolve(dc.spec, selectors=(attrs.evolve(
        sel, cel=attrs.evolve(sel.cel, expression=expression)),)))
    return objs


@pytest.mark.parametrize("expression, wanted", [
    ('device.attributes["gpu.example.com"].memory > 1', "no such key: memory"),
    ('device.attributes["gpu.example.com"].model', "CEL result of type string could not be "
                                                   "converted to bool"),
    ('device.driver ==', "Syntax error: mismatched input '<EOF>'"),
    (f"{_TEN}.all(a, {_TEN}.all(b, {_TEN}.all(c, {_TEN}.all(d, {_TEN}.all(e, "
     f"{_TEN}.all(f, {_TEN}.all(g, a + b + c + d + e + f + g >= 0)))))))", COST_ERROR),
])
def test_failed_scheduling_message_carries_the_cel_error_in_one_line(
    expression: str, wanted: str
) -> None:
    from kschedlib.framework.handle import FakeClock
    from kschedlib.results import Outcome
    from kschedlib.scheduler import Scheduler

    s = Scheduler(clock=FakeClock(), deterministic=True)
    s.apply(_cluster(expression))
    (r,) = s.run()
    assert r.outcome != Outcome.Scheduled
    assert wanted in r.message, r.message
    assert "\n" not in r.message and "0x" not in r.message and len(r.message) < 600


_SEEDS = [
    'device.attributes["gpu.example.com"].model.matches("^L[0-9]+S?$")',
    "cel.bind(a, '\\u00e9\\x41\\101', a.size() == 3 && \"\"\"x\ny\"\"\".size() == 3)",
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) >= 0 || [1, 2][1] == 2',
    '{"a": [1u, 2u]}.all(k, v, v.exists(x, x / 0u == 1u)) ? 1.5 / 0.0 > 0.0 : -9 % 4 == -1',
    'url("https://a.b:80/p?q=1").getQuery()["q"][0] == "1" && cidr("10.0.0.0/8").containsIP("10.1.2.3")',
]


def test_malformed_expressions_give_one_line_cel_errors_only() -> None:
    """Seeded mutations of valid selectors: every outcome is a compile error or a CEL error
    (one line), never another exception."""
    import random

    from kschedlib.plugins.dynamicresources.cel import CELError

    rng = random.Random(25)
    alphabet = list("()[]{}.,?:!-+*/%<>=\"'a1 xu&|\\\n")
    runs = 0
    for seed in _SEEDS:
        for _ in range(120):
            chars = list(seed)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(chars))
                if rng.random() < 0.5:
                    del chars[i]
                else:
                    chars.insert(i, rng.choice(alphabet))
            c = compile_expression("".join(chars))
            runs += 1
            if c.error is not None:
                assert "\n" not in c.error
                continue
            try:
                c.evaluate({"device": {"driver": "d", "attributes": {}, "capacity": {}}},
                           cost_limit=10_000)
            except CELError as exc:
                assert "\n" not in str(exc)
    assert runs == 600
