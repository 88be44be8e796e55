"""cel-go's compile-time worst-case cost estimate of a device selector, with Kubernetes'
cost estimator for its library functions and the DRA size estimator (the maximum sizes of
the ``device`` fields). The API server refuses a selector whose estimate exceeds the
runtime cost limit ("too complex, exceeds cost limit").

Works on the parse tree the compiler checked, with the types it recorded per node."""

from __future__ import annotations

import math
from typing import Any

from kschedlib.api.cel.library import (
    LIST_CREATE_BASE_COST,
    MAP_CREATE_BASE_COST,
    REGEX_STRING_LENGTH_COST_FACTOR,
    STRING_TRAVERSAL_COST_FACTOR,
    CelType,
)
from kschedlib.api.cel.tree import MACRO_NAMES, literal, namespace, simple_ident, unwrap

INF = 2**64 - 1
_SCALARS = frozenset({"bool", "int", "uint", "double", "null_type",
                      "google.protobuf.Timestamp", "google.protobuf.Duration"})

# The maximum sizes Kubernetes declares for the device variable (resourceapi limits):
# driver names 63, domains 63, identifiers 32, attribute values 64, 32 entries per map.
_ATTRIBUTE = ("attribute", 64)
_DEVICE_PATHS: dict[tuple[str, ...], tuple[str, int]] = {
    ("device", "driver"): ("string", 63),
    ("device", "attributes"): ("outer", 32),
    ("device", "attributes", "@keys"): ("string", 63),
    ("device", "attributes", "@values"): ("inner-attributes", 32),
    ("device", "attributes", "@values", "@keys"): ("string", 32),
    ("device", "attributes", "@values", "@values"): _ATTRIBUTE,
    ("device", "capacity"): ("outer", 32),
    ("device", "capacity", "@keys"): ("string", 63),
    ("device", "capacity", "@values"): ("inner-capacity", 32),
    ("device", "capacity", "@values", "@keys"): ("string", 32),
    ("device", "capacity", "@values", "@values"): ("quantity", 0),
}


def _size_of_path(path: tuple[str, ...] | None) -> int | None:
    """The DRA size estimator: the declared maximum size at a field path, if known."""
    if not path or path[0] != "device":
        return None
    hit = _DEVICE_PATHS.get(path)
    if hit is not None:
        return hit[1]
    # any named attribute of an inner attributes map has the attribute value's size
    if len(path) == 4 and path[:3] == ("device", "attributes", "@values"):
        return _ATTRIBUTE[1]
    return None


def _mul(a: int, b: int) -> int:
    return INF if a and b and a > INF // b else min(a * b, INF)


def _add(*xs: int) -> int:
    return min(sum(xs), INF)


def _factor(n: int, f: float) -> int:
    return INF if n >= INF else min(math.ceil(n * f), INF)


class _Node:
    """One estimated node: max cost, max size (None: unknown), field path, type."""

    __slots__ = ("cost", "path", "size", "type")

    def __init__(self, cost: int, size: int | None = None, path: tuple[str, ...] | None = None,
                 type_: CelType | None = None) -> None:
        self.cost = cost
        self.size = size
        self.path = path
        self.type = type_


class Estimator:
    """Walks a checked parse tree (``types``: node id -> CelType) to cel-go's max cost."""

    def __init__(self, types: dict[int, CelType]) -> None:
        self.types = types
        self.ranges: list[dict[str, tuple[str, ...] | None]] = []

    def size(self, n: _Node) -> int:
        """cel-go's sizeOrUnknown: computed size, then the size estimator, then 1 for
        scalars, else unknown."""
        if n.size is not None:
            return n.size
        s = _size_of_path(n.path)
        if s is not None:
            return s
        if n.type is not None and n.type.name in _SCALARS:
            return 1
        return INF

    def estimate(self, node: Any) -> int:
        return self.est(node).cost

    def est(self, node: Any) -> _Node:
        node = unwrap(node)
        n: _Node = getattr(self, "e_" + node.data)(node)
        if n.type is None:
            n.type = self.types.get(id(node))
        return n

    # --- leaves ---------------------------------------------------------------------

    def e_literal(self, node: Any) -> _Node:
        t, v = literal(node.children[0])
        size = len(v) if isinstance(v, (str, bytes)) else 1
        return _Node(0, size, None, t)

    def _ident(self, name: str) -> _Node:
        for scope in reversed(self.ranges):
            if name in scope:
                return _Node(1, None, scope[name])
        return _Node(1, None, (name,))

    def e_ident(self, node: Any) -> _Node:
        return self._ident(str(node.children[0]))

    e_dot_ident = e_ident

    def e_paren_expr(self, node: Any) -> _Node:
        return self.est(node.children[0])

    # --- operators ------------------------------------------------------------------

    def e_expr(self, node: Any) -> _Node:
        c, t, f = (self.est(x) for x in node.children)
        size = max(self.size(t), self.size(f))
        return _Node(_add(c.cost, max(t.cost, f.cost)), size)

    def _logical(self, node: Any) -> _Node:
        left, right = (self.est(x) for x in node.children)
        return _Node(_add(left.cost, right.cost))

    e_conditionalor = e_conditionaland = _logical

    def e_unary(self, node: Any) -> _Node:
        return _Node(_add(1, self.est(node.children[1]).cost))

    _STRING_ORDER = frozenset({"relation_lt", "relation_le", "relation_gt", "relation_ge"})

    def _binary(self, node: Any) -> _Node:
        op_node, right_node = node.children
        left, right = self.est(op_node.children[0]), self.est(right_node)
        args = _add(left.cost, right.cost)
        op = op_node.data
        lt, rt = left.type, right.type
        if op in ("relation_eq", "relation_ne") or (
                op in self._STRING_ORDER and lt is not None and lt.name in ("string", "bytes")):
            smallest = min(self.size(left), self.size(right))
            return _Node(_add(_factor(smallest, STRING_TRAVERSAL_COST_FACTOR), args))
        if op == "relation_in":
            if rt is not None and rt.name == "list":
                return _Node(_add(self.size(right), args))
            return _Node(_add(1, args))
        if op == "addition_add" and lt is not None and lt.name in ("string", "bytes", "list"):
            total = _add(self.size(left), self.size(right))
            if lt.name == "list":
                return _Node(_add(1, args), total)
            return _Node(_add(_factor(total, STRING_TRAVERSAL_COST_FACTOR), args), total)
        return _Node(_add(1, args))

    e_relation = e_addition = e_multiplication = _binary

    # --- selection and index --------------------------------------------------------

    def e_member_dot(self, node: Any) -> _Node:
        target = self.est(node.children[0])
        field = str(node.children[1])
        cost = target.cost
        if target.type is None or target.type.name in ("map", "dyn") or target.type.fields:
            cost = _add(cost, 1)
        path = None if target.path is None else (*target.path, field)
        return _Node(cost, None, path)

    def e_member_index(self, node: Any) -> _Node:
        target = self.est(node.children[0])
        key = self.est(node.children[1])
        path = None
        if target.path is not None and target.type is not None:
            if target.type.name == "map":
                path = (*target.path, "@values")
            elif target.type.name == "list":
                path = (*target.path, "@items")
        return _Node(_add(1, target.cost, key.cost), None, path)

    # --- literals of lists and maps ---------------------------------------------------

    def e_list_lit(self, node: Any) -> _Node:
        items = list(node.children[0].children) if node.children else []
        return _Node(_add(LIST_CREATE_BASE_COST, *(self.est(i).cost for i in items)), len(items))

    def e_map_lit(self, node: Any) -> _Node:
        items = list(node.children[0].children) if node.children else []
        return _Node(_add(MAP_CREATE_BASE_COST, *(self.est(i).cost for i in items)),
                     len(items) // 2)

    # --- calls and macros -----------------------------------------------------------

    def _args(self, node: Any) -> list[Any]:
        return list(node.children) if node is not None else []

    def e_ident_arg(self, node: Any) -> _Node:
        name = str(node.children[0])
        args = self._args(node.children[1] if len(node.children) > 1 else None)
        if name == "has":
            sel = unwrap(args[0])
            return _Node(_add(1, self.est(sel.children[0]).cost))
        return self._call(name, None, [self.est(a) for a in args], args)

    e_dot_ident_arg = e_ident_arg

    def e_member_dot_arg(self, node: Any) -> _Node:
        target_node, method = node.children[0], str(node.children[1])
        args = self._args(node.children[2] if len(node.children) > 2 else None)
        ns = namespace(target_node)
        if ns is not None and not any(ns in s for s in self.ranges) and ns != "device":
            if f"{ns}.{method}" == "cel.bind":
                return self._bind(args)
            if ns in ("optional", "sets", "strings", "ip"):
                return self._call(f"{ns}.{method}", None, [self.est(a) for a in args], args)
        if method in MACRO_NAMES and args and simple_ident(args[0]) is not None:
            return self._comprehension(method, target_node, args)
        target = self.est(target_node)
        if method in ("_optField", "_optIndex"):
            return _Node(_add(1, target.cost, *(self.est(a).cost for a in args)))
        return self._call(method, target, [self.est(a) for a in args], args)

    def _bind(self, args: list[Any]) -> _Node:
        name = simple_ident(args[0]) or ""
        init = self.est(args[1])
        path = None
        if init.path is not None and init.type is not None:
            if init.type.name == "list":
                path = (*init.path, "@items")
            elif init.type.name == "map":
                path = (*init.path, "@keys")
        self.ranges.append({name: path})
        try:
            body = self.est(args[2])
        finally:
            self.ranges.pop()
        # cel-go keeps the cost of the empty iteration range of the bind comprehension
        return _Node(_add(LIST_CREATE_BASE_COST, init.cost, body.cost), body.size)

    def _comprehension(self, kind: str, target_node: Any, args: list[Any]) -> _Node:
        rng = self.est(target_node)
        two = (kind in ("all", "exists", "exists_one", "existsOne") and len(args) == 3) or (
            kind in ("transformList", "transformMap"))
        names = [simple_ident(a) or "" for a in args[:2 if two else 1]]
        kind_of_range = rng.type.name if rng.type is not None else "dyn"
        scope: dict[str, tuple[str, ...] | None] = {}
        if rng.path is not None and kind_of_range in ("list", "map"):
            first = "@items" if kind_of_range == "list" else "@keys"
            scope[names[0]] = (*rng.path, first)
            if two:
                scope[names[0]] = None
                scope[names[1]] = (*rng.path, "@items" if kind_of_range == "list"
                                   else "@values")
        else:
            for n in names:
                scope[n] = None
        self.ranges.append(scope)
        try:
            rest = [self.est(a) for a in args[2 if two else 1:]]
        finally:
            self.ranges.pop()
        pred = rest[0].cost
        count = self.size(rng)
        if kind == "all":
            accu_init, result, loop = 0, 1, _add(2, 1, pred)
        elif kind == "exists":
            accu_init, result, loop = 0, 1, _add(3, 1, pred)
        elif kind in ("exists_one", "existsOne"):
            accu_init, result, loop = 0, 2, _add(pred, 2)
        elif kind == "filter":
            accu_init, result, loop = LIST_CREATE_BASE_COST, 1, _add(pred, 13)
        elif kind in ("map", "transformList"):
            step = rest[-1].cost
            body = _add(step, 12)
            if len(rest) == 2:
                body = _add(pred, max(body, 1))
            accu_init, result, loop = LIST_CREATE_BASE_COST, 1, body
        else:  # transformMap
            step = rest[-1].cost
            body = _add(step, 3)
            if len(rest) == 2:
                body = _add(pred, max(body, 1))
            accu_init, result, loop = MAP_CREATE_BASE_COST, 1, body
        total = _add(rng.cost, accu_init, result, _mul(count, loop))
        return _Node(total, count)

    def _call(self, name: str, target: _Node | None, args: list[_Node], arg_nodes: list[Any]
              ) -> _Node:
        arg_cost = _add(*(a.cost for a in args))
        base = target.cost if target is not None else 0
        fn_cost, size = self._function(name, target, args, arg_nodes)
        return _Node(_add(base, fn_cost, arg_cost), size)

    def _function(self, name: str, target: _Node | None, args: list[_Node],
                  arg_nodes: list[Any]) -> tuple[int, int | None]:
        """The cost of the call itself (Kubernetes' estimator, then cel-go's) and the size
        of its result when known."""
        t = self.size(target) if target is not None else 0
        if target is not None:
            if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
                tt = target.type
                if tt is not None and tt.name == "list":
                    el = tt.params[0].name if tt.params else "dyn"
                    per = 1
                    if el in ("string", "bytes"):
                        per = _add(1, _factor(INF, STRING_TRAVERSAL_COST_FACTOR))
                    return _mul(t, per), None
                return _factor(t, STRING_TRAVERSAL_COST_FACTOR), None
            if name in ("lowerAscii", "upperAscii", "substring", "trim"):
                return _factor(t, STRING_TRAVERSAL_COST_FACTOR), t
            if name == "replace" and len(args) >= 2:
                return _factor(t, 2 * STRING_TRAVERSAL_COST_FACTOR), None
            if name == "split":
                return _factor(t, 2 * STRING_TRAVERSAL_COST_FACTOR), t
            if name == "join":
                return INF if t else 0, None
            if name in ("find", "findAll") and args:
                str_cost = _factor(_add(t, 1), STRING_TRAVERSAL_COST_FACTOR)
                return _mul(str_cost, _factor(self.size(args[0]),
                                              REGEX_STRING_LENGTH_COST_FACTOR)), t
            if name == "matches" and args:
                str_cost = _factor(_add(t, 1), STRING_TRAVERSAL_COST_FACTOR)
                return _mul(str_cost, _factor(self.size(args[0]),
                                              REGEX_STRING_LENGTH_COST_FACTOR)), None
            if name in ("startsWith", "endsWith") and args:
                return _factor(self.size(args[0]), STRING_TRAVERSAL_COST_FACTOR), None
            if name == "contains" and args:
                return _mul(_factor(t, STRING_TRAVERSAL_COST_FACTOR),
                            _factor(self.size(args[0]), STRING_TRAVERSAL_COST_FACTOR)), None
            if name == "ip" and not args:
                return 1, None
            if name in ("containsIP", "containsCIDR") and args:
                cost = _factor(32, STRING_TRAVERSAL_COST_FACTOR)
                if name == "containsCIDR":
                    cost = _add(cost, _factor(16, STRING_TRAVERSAL_COST_FACTOR), 1)
                if args[0].type is not None and args[0].type.name == "string":
                    cost = _add(cost, _factor(self.size(args[0]), STRING_TRAVERSAL_COST_FACTOR))
                return cost, None
        if name in ("url",) and args:
            return _factor(self.size(args[0]), STRING_TRAVERSAL_COST_FACTOR), None
        if name in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                    "isLinkLocalMulticast", "isLinkLocalUnicast", "sign", "asInteger",
                    "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                    "compareTo", "add", "sub"):
            return 1, None
        if name == "matches" and len(args) == 2:
            str_cost = _factor(_add(self.size(args[0]), 1), STRING_TRAVERSAL_COST_FACTOR)
            return _mul(str_cost, _factor(self.size(args[1]),
                                          REGEX_STRING_LENGTH_COST_FACTOR)), None
        if name in ("strings.quote", "bytes") and args:
            return _factor(self.size(args[0]), STRING_TRAVERSAL_COST_FACTOR), None
        return 1, None
