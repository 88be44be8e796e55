"""CEL for DRA device selectors, on top of cel-python (celpy).

Kubernetes' DRA environment (k8s.io/dynamic-resource-allocation/cel): one variable
``device`` with ``driver``, ``attributes`` and ``capacity``; the last two are keyed by
domain (an attribute without a domain belongs to the driver's domain) and a missing
domain is an empty map. Attribute values are strings, ints, bools and semantic versions;
capacities are Quantities. The Kubernetes library functions used on them (``quantity()``,
``semver()``, ``compareTo``, ``isGreaterThan``, ``major()``...) are provided here, and
runtime errors are reported with cel-go's wording ("no such key: model").

Each expression is compiled once (module-wide cache); results per (expression, device)
are memoized by :class:`SelectorCache` (devices are immutable: a new ResourceSlice
generation brings new device objects)."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import celpy
import lark
from celpy import celtypes, evaluation
from celpy.evaluation import CELEvalError

from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.api.resource_v1 import Device
from kschedlib.errors import QuantityError

# resourceapi.CELSelectorExpressionMaxLength (10 Ki characters).
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
# resourceapi.CELSelectorExpressionMaxCost: the runtime cost limit of one evaluation.
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000


# The errors and the memo live in selector_cache (importable without cel-python); they are
# re-exported here.
from kschedlib.plugins.dynamicresources.selector_cache import (  # noqa: E402
    CELCompileError as CELCompileError,
)
from kschedlib.plugins.dynamicresources.selector_cache import (  # noqa: E402
    CELError as CELError,
)
from kschedlib.plugins.dynamicresources.selector_cache import (  # noqa: E402
    SelectorCache as SelectorCache,
)

# ------------------------------------------------------------------ value types


class SemverValue:
    """A semantic version (k8s.io/apiserver/pkg/cel/library semver)."""

    __slots__ = ("major", "minor", "patch", "pre", "text")

    _RE = re.compile(
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
        r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
        r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
    )

    def __init__(self, text: str) -> None:
        m = self._RE.match(text)
        if m is None:
            raise CELError(f"Invalid version: {text}" if text else "Version string empty")
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre: tuple[Any, ...] = tuple(
            int(p) if p.isdigit() else p for p in (m.group(4) or "").split(".") if p
        )

    def compare(self, other: SemverValue) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) and isinstance(y, int):
                return -1 if x < y else 1
            if isinstance(x, int):
                return -1
            if isinstance(y, int):
                return 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SemverValue) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self) -> str:
        return f"semver({self.text!r})"


class QuantityValue:
    """A resource.Quantity (k8s.io/apiserver/pkg/cel/library quantity)."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity) -> None:
        self.q = q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuantityValue) and self.q.cmp(other.q) == 0

    def __hash__(self) -> int:
        return hash(str(self.q))

    def __repr__(self) -> str:
        return f"quantity({str(self.q)!r})"


def _want(value: Any, cls: type, fn: str) -> Any:
    if not isinstance(value, cls):
        raise CELError(f"no such overload: {fn}")
    return value


def _semver(s: Any) -> SemverValue:
    return SemverValue(str(_want(s, str, "semver")))


def _is_semver(s: Any, *_: Any) -> celtypes.BoolType:
    try:
        SemverValue(str(_want(s, str, "isSemver")))
    except CELError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _quantity(s: Any) -> QuantityValue:
    try:
        return QuantityValue(parse_quantity(str(_want(s, str, "quantity"))))
    except QuantityError:
        raise CELError("quantities must match the regular expression "
                       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def _is_quantity(s: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(_want(s, str, "isQuantity")))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, SemverValue) and isinstance(b, SemverValue):
        return a.compare(b)
    if isinstance(a, QuantityValue) and isinstance(b, QuantityValue):
        return a.q.cmp(b.q)
    raise CELError("no such overload: compareTo")


def _compare_to(a: Any, b: Any) -> celtypes.IntType:
    return celtypes.IntType(_compare(a, b))


def _greater(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(a, b) > 0)


def _less(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(a, b) < 0)


def _major(v: Any) -> celtypes.IntType:
    return celtypes.IntType(_want(v, SemverValue, "major").major)


def _minor(v: Any) -> celtypes.IntType:
    return celtypes.IntType(_want(v, SemverValue, "minor").minor)


def _patch(v: Any) -> celtypes.IntType:
    return celtypes.IntType(_want(v, SemverValue, "patch").patch)


def _sign(v: Any) -> celtypes.IntType:
    q = _want(v, QuantityValue, "sign").q
    return celtypes.IntType(q.sign())


def _is_integer(v: Any) -> celtypes.BoolType:
    f = _want(v, QuantityValue, "isInteger").q.as_fraction()
    return celtypes.BoolType(f.denominator == 1 and -(2**63) <= f.numerator < 2**63)


def _as_integer(v: Any) -> celtypes.IntType:
    f = _want(v, QuantityValue, "asInteger").q.as_fraction()
    if f.denominator != 1 or not -(2**63) <= f.numerator < 2**63:
        raise CELError("cannot convert value to integer")
    return celtypes.IntType(f.numerator)


def _as_float(v: Any) -> celtypes.DoubleType:
    q = _want(v, QuantityValue, "asApproximateFloat").q
    return celtypes.DoubleType(float(q.as_fraction()))


def _qty_arith(sign: int) -> Callable[[Any, Any], QuantityValue]:
    def op(a: Any, b: Any) -> QuantityValue:
        qa = _want(a, QuantityValue, "add").q
        if isinstance(b, QuantityValue):
            qb = b.q
        elif isinstance(b, int):
            qb = parse_quantity(str(int(b)))
        else:
            raise CELError("no such overload: add")
        return QuantityValue(qa + qb if sign > 0 else qa - qb)

    return op


_NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _cross_numeric(name: str, op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """cel-go's cross-type numeric comparison (Kubernetes enables it): int, uint and double
    compare by value; everything else keeps celpy's overloads."""
    base = evaluation.base_functions[name]

    def compare(a: Any, b: Any) -> Any:
        if (
            isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS)
            and not isinstance(a, celtypes.BoolType) and not isinstance(b, celtypes.BoolType)
            and type(a) is not type(b)
        ):
            x = float(a) if isinstance(a, celtypes.DoubleType) else int(a)
            y = float(b) if isinstance(b, celtypes.DoubleType) else int(b)
            return celtypes.BoolType(op(x, y))
        return base(a, b)

    return compare


def _str_fn(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A function of the strings extension on a string receiver."""

    def call(s: Any, *args: Any) -> Any:
        _want(s, str, name)
        return fn(str(s), *args)

    return call


def _str_split(s: str, sep: Any, n: Any = None) -> celtypes.ListType:
    parts = s.split(str(sep)) if n is None or int(n) < 0 else (
        [] if int(n) == 0 else s.split(str(sep), int(n) - 1)
    )
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(lst: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(str(sep).join(str(x) for x in lst))


# ------------------------------------------------------------------ optional types


class OptionalValue:
    """cel-go's optional type (``optional.of(x)``, ``m.?key``, ``orValue``...)."""

    __slots__ = ("value",)
    _EMPTY = object()

    def __init__(self, value: Any = _EMPTY) -> None:
        self.value = value

    @property
    def present(self) -> bool:
        return self.value is not OptionalValue._EMPTY

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OptionalValue) and (
            self.value is other.value or bool(self.value == other.value)
        )

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


def _opt_field(recv: Any, name: Any) -> OptionalValue:
    """``recv.?name``: the field if present, else optional.none(); chains through optionals."""
    if isinstance(recv, OptionalValue):
        if not recv.present:
            return recv
        recv = recv.value
    if isinstance(recv, celtypes.MapType):
        key = celtypes.StringType(str(name))
        return OptionalValue(recv[key]) if key in recv else OptionalValue()
    raise CELError("no such overload")


def _opt_index(recv: Any, key: Any) -> OptionalValue:
    """``recv[?key]`` on maps and lists."""
    if isinstance(recv, OptionalValue):
        if not recv.present:
            return recv
        recv = recv.value
    if isinstance(recv, celtypes.MapType):
        return OptionalValue(recv[key]) if key in recv else OptionalValue()
    if isinstance(recv, celtypes.ListType) and isinstance(key, int):
        return OptionalValue(recv[int(key)]) if 0 <= int(key) < len(recv) else OptionalValue()
    raise CELError("no such overload")


def _opt_want(o: Any, fn: str) -> OptionalValue:
    if not isinstance(o, OptionalValue):
        raise CELError(f"no such overload: {fn}")
    return o


def _opt_value(o: Any) -> Any:
    opt = _opt_want(o, "value")
    if not opt.present:
        raise CELError("optional.none() dereference")
    return opt.value


def _opt_of_non_zero(v: Any) -> OptionalValue:
    zero = v is None or (not isinstance(v, (SemverValue, QuantityValue)) and not v)
    return OptionalValue() if zero else OptionalValue(v)


_OPTIONAL_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "_optField": _opt_field,
    "_optIndex": _opt_index,
    "_optOf": OptionalValue,
    "_optNone": lambda: OptionalValue(),
    "_optOfNonZero": _opt_of_non_zero,
    "hasValue": lambda o: celtypes.BoolType(_opt_want(o, "hasValue").present),
    "value": _opt_value,
    "orValue": lambda o, d: _opt_want(o, "orValue").value if _opt_want(o, "orValue").present
    else d,
}

_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPTIONAL_CALLS = {"of": "_optOf", "none": "_optNone", "ofNonZeroValue": "_optOfNonZero"}


def _string_end(src: str, i: int) -> int:
    """Index after the string literal starting at ``i`` (prefixes r/b handled by caller)."""
    raw = i > 0 and src[i - 1] in "rR"
    q = src[i]
    if src.startswith(q * 3, i):
        end = src.find(q * 3, i + 3)
        return len(src) if end < 0 else end + 3
    j = i + 1
    while j < len(src) and src[j] != q:
        j += 2 if src[j] == "\\" and not raw else 1
    return j + 1


def rewrite_optionals(src: str) -> str:
    """cel-go's optional syntax (``a.?b``, ``m[?k]``, ``optional.of(x)``...) in terms of
    functions celpy can call; string literals are left alone."""
    if "?" not in src and "optional." not in src:
        return src
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = _string_end(src, i)
            out.append(src[i:j])
            i = j
            continue
        if c == "." and src.startswith(".?", i):
            m = _IDENT.match(src, i + 2)
            if m:
                out.append(f'._optField("{m.group(0)}")')
                i = m.end()
                continue
        if c == "[" and src.startswith("[?", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src[j] in "\"'":
                    j = _string_end(src, j)
                    continue
                depth += {"[": 1, "]": -1}.get(src[j], 0)
                j += 1
            out.append(f"._optIndex({rewrite_optionals(src[i + 2:j - 1])})")
            i = j
            continue
        if c == "o" and src.startswith("optional.", i) and (
            i == 0 or not (src[i - 1].isalnum() or src[i - 1] in "_.")
        ):
            m = _IDENT.match(src, i + len("optional."))
            if m and m.group(0) in _OPTIONAL_CALLS:
                out.append(_OPTIONAL_CALLS[m.group(0)])
                i = m.end()
                continue
        if _IDENT_START.match(c) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = _IDENT.match(src, i)
            assert m is not None
            out.append(m.group(0))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _SetsNamespace:
    """The receiver of ``sets.contains(a, b)`` & co. (cel-go's sets extension)."""

    __slots__ = ()


SETS = _SetsNamespace()


def _sets_fn(name: str, fn: Callable[[Any, Any], bool]) -> Callable[..., Any]:
    base = evaluation.base_functions.get(name)

    def call(recv: Any, *args: Any) -> Any:
        if isinstance(recv, _SetsNamespace):
            if len(args) != 2 or not all(isinstance(a, celtypes.ListType) for a in args):
                raise CELError(f"no such overload: sets.{name}")
            return celtypes.BoolType(fn(args[0], args[1]))
        if base is None:
            raise CELError(f"undeclared reference to '{name}'")
        return base(recv, *args)

    return call


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_OPTIONAL_FUNCTIONS,
    "contains": _sets_fn("contains", lambda a, b: all(x in a for x in b)),
    "equivalent": _sets_fn(
        "equivalent", lambda a, b: all(x in b for x in a) and all(x in a for x in b)),
    "intersects": _sets_fn("intersects", lambda a, b: any(x in b for x in a)),
    "_<_": _cross_numeric("_<_", operator.lt),
    "_<=_": _cross_numeric("_<=_", operator.le),
    "_>_": _cross_numeric("_>_", operator.gt),
    "_>=_": _cross_numeric("_>=_", operator.ge),
    "_==_": _cross_numeric("_==_", operator.eq),
    "_!=_": _cross_numeric("_!=_", operator.ne),
    "lowerAscii": _str_fn("lowerAscii", lambda s: celtypes.StringType(
        "".join(c.lower() if c.isascii() else c for c in s))),
    "upperAscii": _str_fn("upperAscii", lambda s: celtypes.StringType(
        "".join(c.upper() if c.isascii() else c for c in s))),
    "trim": _str_fn("trim", lambda s: celtypes.StringType(s.strip())),
    "replace": _str_fn("replace", lambda s, a, b, n=None: celtypes.StringType(
        s.replace(str(a), str(b)) if n is None or int(n) < 0 else s.replace(str(a), str(b), int(n)))),
    "indexOf": _str_fn("indexOf", lambda s, sub, start=0: celtypes.IntType(
        s.find(str(sub), int(start)))),
    "lastIndexOf": _str_fn("lastIndexOf", lambda s, sub: celtypes.IntType(s.rfind(str(sub)))),
    "substring": _str_fn("substring", lambda s, a, b=None: celtypes.StringType(
        s[int(a):] if b is None else s[int(a):int(b)])),
    "charAt": _str_fn("charAt", lambda s, i: celtypes.StringType(s[int(i):int(i) + 1])),
    "split": _str_fn("split", _str_split),
    "join": _join,
    "semver": _semver,
    "isSemver": _is_semver,
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "major": _major,
    "minor": _minor,
    "patch": _patch,
    "sign": _sign,
    "isInteger": _is_integer,
    "asInteger": _as_integer,
    "asApproximateFloat": _as_float,
    "add": _qty_arith(1),
    "sub": _qty_arith(-1),
}


# ------------------------------------------------------------------ device activation


class _DomainMap(celtypes.MapType):
    """device.attributes / device.capacity: a missing domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType()


def _attr_value(a: Any) -> Any:
    if a.string is not None:
        return celtypes.StringType(a.string)
    if a.bool is not None:
        return celtypes.BoolType(a.bool)
    if a.int is not None:
        return celtypes.IntType(a.int)
    if a.version is not None:
        try:
            return SemverValue(a.version)
        except CELError:
            return celtypes.StringType(a.version)
    return None


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_activation(driver: str, device: Device) -> dict[str, Any]:
    """The ``device`` variable for one device of a slice of ``driver``."""
    attrs: dict[Any, Any] = {}
    for name, a in device.attributes.items():
        domain, ident = _split(name, driver)
        v = _attr_value(a)
        if v is not None:
            attrs.setdefault(celtypes.StringType(domain), celtypes.MapType())[
                celtypes.StringType(ident)
            ] = v
    caps: dict[Any, Any] = {}
    for name, c in device.capacity.items():
        if c.value is None:
            continue
        domain, ident = _split(name, driver)
        caps.setdefault(celtypes.StringType(domain), celtypes.MapType())[
            celtypes.StringType(ident)
        ] = QuantityValue(c.value)
    return {
        "sets": SETS,
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(driver),
                celtypes.StringType("attributes"): _DomainMap(attrs),
                celtypes.StringType("capacity"): _DomainMap(caps),
            }
        )
    }


# ------------------------------------------------------------------ compile and evaluate

class _CostExceeded(Exception):  # noqa: N818 - cel-go's condition, not a bug
    """The evaluation went over CEL_SELECTOR_EXPRESSION_MAX_COST."""


class _CostEvaluator(evaluation.Evaluator):
    """celpy's evaluator with a runtime cost budget: one unit per evaluated expression node
    (including every step of a comprehension), an approximation of cel-go's actual cost."""

    def __init__(self, ast: Any, activation: Any, spent: list[int] | None = None) -> None:
        super().__init__(ast, activation)
        self.spent = spent if spent is not None else [0]

    def sub_evaluator(self, ast: Any) -> evaluation.Evaluator:
        return _CostEvaluator(ast, self.activation, self.spent)

    def member_dot_arg(self, tree: Any) -> Any:
        """The ``cel.bind(name, init, expr)`` macro of cel-go's bindings extension, which
        celpy lacks; every other member call is celpy's."""
        member, method = tree.children[0], tree.children[1]
        if (
            getattr(method, "value", None) == "bind"
            and len(tree.children) == 3
            and [str(t) for t in member.scan_values(lambda v: isinstance(v, lark.Token))]
            == ["cel"]
            and len(tree.children[2].children) == 3
        ):
            var_tree, init_tree, body_tree = tree.children[2].children
            idents = [str(t) for t in var_tree.scan_values(lambda v: isinstance(v, lark.Token))]
            if len(idents) != 1:
                return CELEvalError("cel.bind() variable name must be a simple identifier")
            value = self.visit(init_tree)
            if isinstance(value, CELEvalError):
                return value
            try:
                return self.sub_evaluator(body_tree).evaluate({idents[0]: value})
            except CELEvalError as exc:
                return exc
        return super().member_dot_arg(tree)

    def visit_children(self, tree: Any) -> Any:
        spent = self.spent
        spent[0] += 1
        if spent[0] > CEL_SELECTOR_EXPRESSION_MAX_COST:
            raise _CostExceeded
        return super().visit_children(tree)


class _CostRunner(celpy.InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        return _CostEvaluator(self.ast, self.new_activation()).evaluate(context)


_ENV = celpy.Environment(runner_class=_CostRunner)
_COMPILED: dict[str, CompiledExpression] = {}
_NO_SUCH_MEMBER = re.compile(r"^no such member in mapping: '(.*)'$")


def _runtime_message(err: CELEvalError) -> str:
    """cel-go's wording for celpy's runtime errors."""
    msg = str(err.args[0]) if err.args else str(err)
    m = _NO_SUCH_MEMBER.match(msg)
    if m:
        return f"no such key: {m.group(1)}"
    if msg == "no such key":
        key = err.args[2][0] if len(err.args) > 2 and err.args[2] else ""
        return f"no such key: {key}"
    if msg.startswith("found no matching overload") or msg.startswith("no such overload"):
        return "no such overload"
    if "divide by zero" in msg:
        return "division by zero"
    return msg


class CompiledExpression:
    """One selector expression, compiled once."""

    __slots__ = ("error", "expression", "_program")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.error: str | None = None
        self._program: Any = None
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            self.error = (
                f"expression too long ({len(expression)} characters, maximum is "
                f"{CEL_SELECTOR_EXPRESSION_MAX_LENGTH})"
            )
            return
        try:
            ast = _ENV.compile(rewrite_optionals(expression))
            self._program = _ENV.program(ast, functions=FUNCTIONS)
        except Exception as exc:  # celpy raises its syntax errors and lark's
            self.error = f"compilation failed: {exc}"

    def device_matches(self, activation: dict[str, Any]) -> bool:
        """Evaluate for one device; CELError on a runtime error or a non-bool result."""
        if self._program is None:
            raise CELError(self.error or "not compiled")
        try:
            result = self._program.evaluate(activation)
        except _CostExceeded:
            raise CELError("operation cancelled: actual cost limit exceeded") from None
        except CELEvalError as exc:
            raise CELError(_runtime_message(exc)) from None
        except CELError:
            raise
        except (TypeError, ValueError, KeyError, ArithmeticError) as exc:
            raise CELError(str(exc)) from None
        if isinstance(result, CELEvalError):
            raise CELError(_runtime_message(result))
        if not isinstance(result, celtypes.BoolType):
            raise CELError(
                f"CEL result of type {_cel_type_name(result)} could not be converted to bool"
            )
        return bool(result)


_CEL_TYPE_NAMES = {
    celtypes.StringType: "string", celtypes.IntType: "int", celtypes.UintType: "uint",
    celtypes.DoubleType: "double", celtypes.ListType: "list", celtypes.MapType: "map",
    celtypes.BytesType: "bytes", SemverValue: "kubernetes.Semver",
    QuantityValue: "kubernetes.Quantity", OptionalValue: "optional_type",
}


def _cel_type_name(value: Any) -> str:
    for cls in type(value).__mro__:
        name = _CEL_TYPE_NAMES.get(cls)
        if name is not None:
            return name
    return "null_type" if value is None else type(value).__name__


def compile_expression(expression: str) -> CompiledExpression:
    """The compiled expression from the module-wide cache."""
    c = _COMPILED.get(expression)
    if c is None:
        c = CompiledExpression(expression)
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        _COMPILED[expression] = c
    return c
