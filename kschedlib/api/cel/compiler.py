"""The CEL compiler for DRA device selectors: type-checked, costed, as Kubernetes does.

Kubernetes' DRA environment (k8s.io/dynamic-resource-allocation/cel): one variable
``device`` of type ``kubernetes.DRADevice`` with ``driver``, ``attributes``, ``capacity``
and ``allowMultipleAllocations``; attributes and capacities are keyed by domain (an
attribute without a domain belongs to the driver's domain) and a missing domain is an
empty map. The apiserver's base environment adds the strings, lists, sets, regex, URL,
IP/CIDR, quantity and semver libraries, optionals and ``cel.bind`` (:mod:`.library`).

An expression is parsed with cel-python's grammar, then type-checked and compiled into
Python closures in one pass: a compile error (syntax, undeclared reference, no matching
overload, a result that is not bool) is found without evaluating any device, with
cel-go's wording. Evaluation charges cel-go's runtime cost and stops with ``operation
cancelled: actual cost limit exceeded`` once CEL_SELECTOR_EXPRESSION_MAX_COST is spent;
costs are charged before work that allocates, so time and memory stay bounded. Every
error is one line of text.

The pieces: :mod:`.syntax` parses (cel-python's grammar, cel-go's syntax errors),
:mod:`.checker` type-checks and builds the closures, :mod:`.runtime` is what they run on
(cost charging, indexing, comprehension loops) and :mod:`.estimate` is the cost estimator;
this module compiles an expression with them and evaluates it."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.checker import _Compiler
from kschedlib.api.cel.errors import CELCompileError, CELError
from kschedlib.api.cel.library import (
    BOOL,
    DYN,
    QUANTITY,
    STRING,
    CelType,
    OptionalValue,
    QuantityValue,
    SemverValue,
    cel_type_name,
    map_of,
)
from kschedlib.api.cel.runtime import _LOOPS as _LOOPS  # the macros' loops, by macro name
from kschedlib.api.cel.runtime import DomainMap, Eval, _CostExceeded, _Frame
from kschedlib.api.cel.syntax import _parse, rewrite_optionals
from kschedlib.api.cel.tree import Issue, escape_newlines

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST", "CEL_SELECTOR_EXPRESSION_MAX_LENGTH", "DEVICE_TYPE",
    "CELCompileError", "CELError", "CompiledExpression", "DomainMap", "OptionalValue",
    "QuantityValue", "SemverValue", "compile_expression",
]

# resourceapi.CELSelectorExpressionMaxLength (10 Ki characters).
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
# resourceapi.CELSelectorExpressionMaxCost: the runtime cost limit of one evaluation.
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000


DEVICE_TYPE = CelType("kubernetes.DRADevice", fields={
    "driver": STRING,
    "attributes": map_of(STRING, map_of(STRING, DYN)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
    "allowMultipleAllocations": BOOL,
})


class CompiledExpression:
    """One selector expression, compiled (and type-checked) once."""

    __slots__ = ("_eval", "error", "expression", "max_cost", "output_type")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.error: str | None = None
        self.output_type: CelType | None = None
        self.max_cost: int | None = None
        """cel-go's worst-case cost estimate (None when the expression does not compile)."""
        self._eval: Eval | None = None
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            self.error = (
                f"expression too long ({len(expression)} characters, maximum is "
                f"{CEL_SELECTOR_EXPRESSION_MAX_LENGTH})"
            )
            return
        try:
            tree = _parse(rewrite_optionals(expression))
        except SyntaxError as exc:
            self.error = "compilation failed: " + str(exc)
            return
        except RecursionError:
            self.error = ("compilation failed: ERROR: <input>:1:1: Syntax error: "
                          "max recursion depth exceeded")
            return
        compiler = _Compiler({"device": DEVICE_TYPE}, expression)
        try:
            t, fn = compiler.compile(tree)
        except Issue as issue:
            self.error = "compilation failed: " + escape_newlines(issue.text())
            return
        except RecursionError:
            self.error = ("compilation failed: ERROR: <input>:1:1: Syntax error: "
                          "max recursion depth exceeded")
            return
        if not (t == BOOL or t.name == "dyn"):
            self.error = f"must evaluate to bool or the unknown type, not {t}"
            return
        self.output_type = t
        self._eval = fn
        from kschedlib.api.cel.estimate import INF, Estimator

        try:
            self.max_cost = Estimator(compiler.types).estimate(tree)
        except RecursionError:
            self.max_cost = INF

    def evaluate(self, activation: dict[str, Any], cost_limit: int | None = None) -> tuple[Any, int]:
        """The raw result and the actual cost; CELError on a runtime error."""
        if self._eval is None:
            raise CELCompileError(self.error or "not compiled")
        fr = _Frame(dict(activation), CEL_SELECTOR_EXPRESSION_MAX_COST
                    if cost_limit is None else cost_limit)
        try:
            return self._eval(fr), fr.cost
        except CELError as exc:
            text = str(exc)
            if "\n" in text or "\r" in text:
                raise CELError(escape_newlines(text)) from None
            raise
        except _CostExceeded:
            raise CELError("operation cancelled: actual cost limit exceeded") from None
        except RecursionError:
            raise CELError("operation cancelled: max recursion depth exceeded") from None
        except MemoryError:
            raise CELError("operation cancelled: out of memory") from None

    def device_matches(self, activation: dict[str, Any]) -> bool:
        """Evaluate for one device; CELError on a runtime error or a non-bool result."""
        result, _ = self.evaluate(activation)
        if type(result) is not bool:
            raise CELError(
                f"CEL result of type {cel_type_name(result)} could not be converted to bool"
            )
        return result


_COMPILED: dict[str, CompiledExpression] = {}


def compile_expression(expression: str) -> CompiledExpression:
    """The compiled expression from the module-wide cache."""
    c = _COMPILED.get(expression)
    if c is None:
        c = CompiledExpression(expression)
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        _COMPILED[expression] = c
    return c


def compile_error(expression: str) -> str | None:
    """The compile error of a selector expression (one line), or None if it compiles."""
    return compile_expression(expression).error
