"""The libraries of the apiserver's CEL base environment, as selectors see them."""

from __future__ import annotations

import pytest

from kschedlib.plugins.dynamicresources.cel import CELError, compile_expression

_DEVICE = {"device": {"driver": "gpu.example.com", "attributes": {}, "capacity": {},
                      "allowMultipleAllocations": False}}


def _run(expr: str) -> object:
    c = compile_expression(expr)
    assert c.error is None, c.error
    return c.evaluate(_DEVICE)[0]


@pytest.mark.parametrize("expr", [
    # strings extension
    '"%s has %d GiB (%.1f%%)".format(["gpu", 16, 12.5]) == "gpu has 16 GiB (12.5%)"'
    .replace('["gpu", 16, 12.5]', '[dyn("gpu"), dyn(16), dyn(12.5)]'),
    'strings.quote("a\\nb") == "\\"a\\\\nb\\""',
    '"gpu".reverse() == "upg"',
    '"  x ".trim() == "x" && "a,b,,c".split(",").size() == 4 && ["a", "b"].join("/") == "a/b"',
    '"hello".substring(1, 3) == "el" && "hello".charAt(4) == "o" && "hello".indexOf("l") == 2',
    '"hello".lastIndexOf("l") == 3 && "hello".replace("l", "L", 1) == "heLlo"',
    '"MiXeD".lowerAscii() == "mixed" && "MiXeD".upperAscii() == "MIXED"',
    # regex
    '"gpu-a100-80gb".find("[0-9]+gb") == "80gb" && "a1b22c333".findAll("[0-9]+").size() == 3',
    '"a1b22c333".findAll("[0-9]+", 2) == ["1", "22"] && "abc".matches("^a.c$")',
    # lists and sets
    '[1, 2, 3].isSorted() && [3, 1, 2].sum() == 6 && [3, 1, 2].min() == 1 && [3, 1, 2].max() == 3',
    '["a", "b", "a"].indexOf("a") == 0 && ["a", "b", "a"].lastIndexOf("a") == 2',
    'sets.contains([1, 2, 3], [3, 1]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])',
    # quantity and semver
    'quantity("1.5Gi").isGreaterThan(quantity("1536Mi")) == false && quantity("2").asInteger() == 2',
    'quantity("500m").add(quantity("500m")).isInteger() && quantity("1").sub(2).sign() == -1',
    'isQuantity("10Gi") && !isQuantity("ten")',
    'semver("v1.2", true) == semver("1.2.0") && isSemver("v1.2.3", true) && !isSemver("v1.2.3")',
    'semver("1.2.3-alpha").isLessThan(semver("1.2.3")) && semver("2.0.0").major() == 2',
    # IP, CIDR, URL
    'ip("10.0.0.1").family() == 4 && ip("::1").isLoopback() && isIP("192.168.0.1") && !isIP("x")',
    'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3")) && cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")',
    'cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8") && cidr("10.0.0.0/8").prefixLength() == 8',
    'ip.isCanonical("10.0.0.1") && string(cidr("10.0.0.0/8").ip()) == "10.0.0.0"',
    'url("https://user@example.com:8443/a%20b?x=1&x=2").getHost() == "example.com:8443"',
    'url("https://example.com:8443/p").getHostname() == "example.com" && url("https://example.com:8443/p").getPort() == "8443"',
    'url("https://example.com/p?x=1&x=2").getQuery()["x"] == ["1", "2"] && isURL("/relative/path")',
    # optionals, bind, two-variable comprehensions, macros
    '{"a": 1}.?b.orValue(5) == 5 && optional.ofNonZeroValue(0).hasValue() == false',
    'cel.bind(xs, [1, 2, 3], xs.map(x, x * 2).filter(y, y > 2) == [4, 6])',
    '{"a": 1, "b": 2}.all(k, v, v > 0) && [10, 20].exists(i, v, i == 1 && v == 20)',
    '[1, 2, 3].exists_one(x, x == 2) && [1, 2, 3].existsOne(x, x > 2)',
    # timestamps and durations
    'timestamp("2024-01-02T03:04:05Z") + duration("1h") == timestamp("2024-01-02T04:04:05Z")',
    'duration("1h30m") > duration("89m") && timestamp("2024-01-02T03:04:05Z").getFullYear() == 2024',
    # numbers
    '1 < 1.5 && 2u > 1 && 0x10 == 16 && 7 / 2 == 3 && -7 % 3 == -1 && 7.0 / 2.0 == 3.5',
    'device.allowMultipleAllocations == false',
])
def test_library_expression_is_true(expr: str) -> None:
    assert _run(expr) is True


@pytest.mark.parametrize("expr, error", [
    ('quantity("ten").sign() == 1', "quantities must match the regular expression"),
    ('semver("1.2").major() == 1', "Invalid version: 1.2"),
    ('ip("10.0.0.256").family() == 4', "parse error"),
    ('"a".matches("[a")', "given regex is invalid"),
    ("9223372036854775807 + 1 > 0", "integer overflow"),
    ('[1][3] == 1', "index out of range: 3"),
    ('optional.none().value() == 1', "optional.none() dereference"),
    ('duration("1x") > duration("1s")', 'time: invalid duration "1x"'),
])
def test_library_runtime_errors(expr: str, error: str) -> None:
    with pytest.raises(CELError) as err:
        _run(expr)
    assert error in str(err.value)
