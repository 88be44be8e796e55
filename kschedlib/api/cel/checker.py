"""The type checker: checks a parse tree against the declarations, with cel-go's compile
errors, and builds each node's closure as it checks it (one pass)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    FUNCTIONS,
    INT,
    LIST_CREATE_BASE_COST,
    MAP_CREATE_BASE_COST,
    NULL,
    STRING,
    UINT,
    CelType,
    OptionalValue,
    TypeValue,
    UInt,
    cel_type_name,
    go_type_name,
    is_dyn,
    list_of,
    map_lookup,
    map_of,
    optional_of,
    substitute,
    type_of,
    unify,
)
from kschedlib.api.cel.runtime import (
    _LOOPS,
    _UNSET,
    DomainMap,
    Eval,
    _call_runtime,
    _CostExceeded,
    _Frame,
    _index,
    _restore,
)
from kschedlib.api.cel.tree import At, Issue, literal, namespace, simple_ident, unwrap

# cel-go's parser refuses deeper nesting ("max recursion depth exceeded").
MAX_NESTING = 250


_TYPE_IDENTS = {"bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING,
                "bytes": BYTES, "null_type": NULL, "list": list_of(DYN),
                "map": map_of(DYN, DYN), "type": type_of(DYN), "dyn": DYN}


_OP_TEXT = {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_==_": "==", "_!=_": "!=",
            "@in": "in", "_+_": "+", "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%"}


class _Compiler:
    """Type-checks a parse tree and builds its closures in one pass."""

    def __init__(self, variables: dict[str, CelType], src: str = "") -> None:
        self.scopes: list[dict[str, CelType]] = [variables]
        self.src = src
        self.types: dict[int, CelType] = {}

    def after(self, end_pos: int | None) -> At:
        """The position of the first character after ``end_pos`` that is not blank (where
        cel-go reports an operator or a call's parenthesis)."""
        i = end_pos or 0
        while i < len(self.src) and self.src[i] in " \t\r\n":
            i += 1
        line = self.src.count("\n", 0, i) + 1
        column = i - (self.src.rfind("\n", 0, i) + 1) + 1
        return At(line, column)

    # --- helpers ------------------------------------------------------------------

    def lookup(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            t = scope.get(name)
            if t is not None:
                return t
        return None

    def resolve(self, name: str, node: Any, args: Sequence[CelType], member: bool) -> CelType:
        """The result type of a call, or a compile error naming the argument types."""
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise Issue(f"undeclared reference to '{name}' (in container '')", node)
        results: list[CelType] = []
        for ov in fn.overloads:
            if ov.member != member or len(ov.params) != len(args):
                continue
            binding: dict[str, CelType] = {}
            if all(unify(p, a, binding) for p, a in zip(ov.params, args, strict=True)):
                results.append(substitute(ov.result, binding))
        if not results:
            if member:
                shown = f"{args[0]}.({', '.join(str(a) for a in args[1:])})"
            else:
                shown = f"({', '.join(str(a) for a in args)})"
            raise Issue(f"found no matching overload for '{_display(name)}' applied to "
                         f"'{shown}'", node)
        first = results[0]
        return first if all(r == first for r in results) else DYN

    def call(self, name: str, node: Any, args: list[tuple[CelType, Eval]],
             member: bool) -> tuple[CelType, Eval]:
        result = self.resolve(name, node, [t for t, _ in args], member)
        fn = FUNCTIONS[name]
        fns = [f for _, f in args]
        if len(fns) == 1:
            (f0,) = fns

            def ev1(fr: _Frame) -> Any:
                return _call_runtime(fn, [f0(fr)], fr)

            return result, ev1
        if len(fns) == 2:
            f0, f1 = fns

            def ev2(fr: _Frame) -> Any:
                return _call_runtime(fn, [f0(fr), f1(fr)], fr)

            return result, ev2

        def evn(fr: _Frame) -> Any:
            return _call_runtime(fn, [f(fr) for f in fns], fr)

        return result, evn

    # --- dispatch -----------------------------------------------------------------

    def compile(self, node: Any, depth: int = 0) -> tuple[CelType, Eval]:
        if depth > MAX_NESTING * 12:  # a dozen grammar levels per nesting level
            raise Issue("Syntax error: max recursion depth exceeded", node)
        method = getattr(self, "c_" + node.data)
        result: tuple[CelType, Eval] = method(node, depth + 1)
        self.types[id(node)] = result[0]
        return result

    def c_expr(self, node: Any, d: int) -> tuple[CelType, Eval]:
        if len(node.children) == 1:
            return self.compile(node.children[0], d)
        ct, cf = self.compile(node.children[0], d)
        tt, tf = self.compile(node.children[1], d)
        ft, ff = self.compile(node.children[2], d)
        if not (is_dyn(ct) or ct == BOOL) or not (is_dyn(tt) or is_dyn(ft) or tt == ft
                                                   or unify(tt, ft, {})):
            raise Issue(f"found no matching overload for '_?_:_' applied to "
                         f"'({ct}, {tt}, {ft})'", node)
        rt = tt if tt == ft or is_dyn(ft) else (ft if is_dyn(tt) else tt)

        def ternary(fr: _Frame) -> Any:
            c = cf(fr)
            if c is True:
                return tf(fr)
            if c is False:
                return ff(fr)
            raise CELError(f"no such overload: _?_:_({cel_type_name(c)}, ...)")

        return rt, ternary

    def _logical(self, node: Any, d: int, is_and: bool) -> tuple[CelType, Eval]:
        """A chain of && (or ||) terms, flattened as cel-go balances it: a false (true)
        term decides, else the first error, else true (false)."""
        if len(node.children) == 1:
            return self.compile(node.children[0], d)
        terms = []
        n = node
        while len(n.children) == 2:
            terms.append(n.children[1])
            n = n.children[0]
        terms.append(n.children[0])
        terms.reverse()
        compiled = [self.compile(t, d) for t in terms]
        op = "_&&_" if is_and else "_||_"
        for i, (t, _) in enumerate(compiled):
            if not (is_dyn(t) or t == BOOL):
                left = compiled[i - 1][0] if i else t
                right = t if i else compiled[1][0]
                raise Issue(f"found no matching overload for '{op}' applied to "
                             f"'({left}, {right})'", terms[i])
        fns = [f for _, f in compiled]
        decisive = not is_and  # false decides &&, true decides ||

        def logical(fr: _Frame) -> Any:
            err: CELError | None = None
            for f in fns:
                try:
                    v = f(fr)
                except CELError as exc:
                    err = err or exc
                    continue
                if v is decisive:
                    return v
                if type(v) is not bool:
                    err = err or CELError(f"no such overload: {op}(bool, {cel_type_name(v)})")
            if err is not None:
                raise err
            return not decisive

        return BOOL, logical

    def c_conditionalor(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self._logical(node, d, is_and=False)

    def c_conditionaland(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self._logical(node, d, is_and=True)

    _BINARY = {
        "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_",
        "relation_ge": "_>=_", "relation_eq": "_==_", "relation_ne": "_!=_",
        "relation_in": "@in", "addition_add": "_+_", "addition_sub": "_-_",
        "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
    }

    def _binary(self, node: Any, d: int) -> tuple[CelType, Eval]:
        if len(node.children) == 1:
            return self.compile(node.children[0], d)
        op_node, right = node.children
        left = self.compile(op_node.children[0], d)
        name = self._BINARY[op_node.data]
        end = getattr(op_node.meta, "end_pos", None)
        at = self.after(None if end is None else end - len(_OP_TEXT[name]))
        return self.call(name, at, [left, self.compile(right, d)],
                         member=False)

    c_relation = c_addition = c_multiplication = _binary

    def c_unary(self, node: Any, d: int) -> tuple[CelType, Eval]:
        if len(node.children) == 1:
            return self.compile(node.children[0], d)
        op, operand = node.children
        name = "!_" if op.data == "unary_not" else "-_"
        return self.call(name, op, [self.compile(operand, d)], member=False)

    def c_member(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self.compile(node.children[0], d)

    def c_primary(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self.compile(node.children[0], d)

    def c_paren_expr(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self.compile(node.children[0], d)

    def c_literal(self, node: Any, d: int) -> tuple[CelType, Eval]:
        t, v = literal(node.children[0])
        return t, lambda fr: v

    # --- identifiers and selection ---------------------------------------------------

    def _ident(self, name: str, node: Any) -> tuple[CelType, Eval]:
        t = self.lookup(name)
        if t is None:
            tt = _TYPE_IDENTS.get(name)
            if tt is not None:
                tv = TypeValue(name)
                return type_of(tt), lambda fr: tv
            raise Issue(f"undeclared reference to '{name}' (in container '')", node)

        def ident(fr: _Frame) -> Any:
            fr.cost += 1
            if fr.cost > fr.limit:
                raise _CostExceeded
            return fr.vars[name]

        return t, ident

    def c_ident(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self._ident(str(node.children[0]), node)

    def c_dot_ident(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self._ident(str(node.children[0]), node)

    def _select_type(self, t: CelType, field: str, node: Any) -> CelType:
        if t.fields is not None:
            ft = t.fields.get(field)
            if ft is None:
                raise Issue(f"undefined field '{field}'", node)
            return ft
        if t.name == "map":
            if not (is_dyn(t.params[0]) or t.params[0] == STRING):
                raise Issue(f"found no matching overload for '_[_]' applied to "
                             f"'({t}, string)'", node)
            return t.params[1]
        if is_dyn(t):
            return DYN
        raise Issue(f"type '{t}' does not support field selection", node)

    def c_member_dot(self, node: Any, d: int) -> tuple[CelType, Eval]:
        target, field_tok = node.children
        field = str(field_tok)
        tt, tf = self.compile(target, d)
        rt = self._select_type(tt, field, field_tok)

        def select(fr: _Frame) -> Any:
            v = tf(fr)
            fr.cost += 1
            if fr.cost > fr.limit:
                raise _CostExceeded
            if isinstance(v, dict):
                try:
                    return v[field]
                except KeyError:
                    found, w = map_lookup(v, field)
                    if found:
                        return w
                    raise CELError(f"no such key: {field}") from None
            raise CELError(f"type '{cel_type_name(v)}' does not support field selection")

        return rt, select

    def c_member_index(self, node: Any, d: int) -> tuple[CelType, Eval]:
        target, key = node.children
        tt, tf = self.compile(target, d)
        kt, kf = self.compile(key, d)
        rt: CelType = DYN
        if tt.name == "list":
            if not (is_dyn(kt) or kt in (INT, UINT, DOUBLE)):
                raise Issue(f"found no matching overload for '_[_]' applied to "
                             f"'({tt}, {kt})'", node)
            rt = tt.params[0]
        elif tt.name == "map":
            if not unify(tt.params[0], kt, {}):
                raise Issue(f"found no matching overload for '_[_]' applied to "
                             f"'({tt}, {kt})'", node)
            rt = tt.params[1]
        elif not is_dyn(tt):
            raise Issue(f"found no matching overload for '_[_]' applied to "
                         f"'({tt}, {kt})'", node)

        def index(fr: _Frame) -> Any:
            v = tf(fr)
            k = kf(fr)
            fr.cost += 1
            if fr.cost > fr.limit:
                raise _CostExceeded
            return _index(v, k)

        return rt, index

    # --- calls and macros ------------------------------------------------------------

    def _args(self, node: Any, d: int) -> list[Any]:
        return list(node.children) if node is not None else []

    def c_ident_arg(self, node: Any, d: int) -> tuple[CelType, Eval]:
        name = str(node.children[0])
        args = self._args(node.children[1] if len(node.children) > 1 else None, d)
        if name == "has":
            return self._has(node, args, d)
        return self.call(name, node.children[0], [self.compile(a, d) for a in args],
                         member=False)

    def c_dot_ident_arg(self, node: Any, d: int) -> tuple[CelType, Eval]:
        return self.c_ident_arg(node, d)

    def c_member_dot_arg(self, node: Any, d: int) -> tuple[CelType, Eval]:
        target, method_tok = node.children[0], node.children[1]
        method = str(method_tok)
        args = self._args(node.children[2] if len(node.children) > 2 else None, d)
        ns = namespace(target)
        if ns is not None and self.lookup(ns) is None:
            qualified = f"{ns}.{method}"
            if qualified == "cel.bind":
                return self._bind(node, args, d)
            if qualified in FUNCTIONS:
                return self.call(qualified, method_tok, [self.compile(a, d) for a in args],
                                 member=False)
        if method in _MACROS and args and simple_ident(args[0]) is not None:
            return _MACROS[method](self, node, target, args, d)
        if method == "_optField" or method == "_optIndex":
            return self._opt_select(node, target, args, d, method == "_optIndex")
        recv = self.compile(target, d)
        return self.call(method, self.after(method_tok.end_pos),
                         [recv, *(self.compile(a, d) for a in args)], member=True)

    def c_member_object(self, node: Any, d: int) -> tuple[CelType, Eval]:
        raise Issue("message construction is not supported: no message types are declared",
                     node)

    def c_list_lit(self, node: Any, d: int) -> tuple[CelType, Eval]:
        elems = [self.compile(e, d) for e in self._args(node.children[0] if node.children
                                                          else None, d)]
        et = self._homogeneous([(t, e) for (t, _), e in zip(
            elems, node.children[0].children if node.children else [], strict=True)])
        fns = [f for _, f in elems]

        def make_list(fr: _Frame) -> Any:
            out = [f(fr) for f in fns]
            fr.cost += LIST_CREATE_BASE_COST
            if fr.cost > fr.limit:
                raise _CostExceeded
            return out

        return list_of(et), make_list

    def c_map_lit(self, node: Any, d: int) -> tuple[CelType, Eval]:
        items = list(node.children[0].children) if node.children else []
        keys = [self.compile(k, d) for k in items[0::2]]
        vals = [self.compile(v, d) for v in items[1::2]]
        for (kt, _), knode in zip(keys, items[0::2], strict=True):
            if not (is_dyn(kt) or kt in (INT, UINT, BOOL, STRING)):
                raise Issue(f"unsupported map key type: {kt}", knode)
        kt = self._homogeneous([(t, n) for (t, _), n in zip(keys, items[0::2], strict=True)])
        vt = self._homogeneous([(t, n) for (t, _), n in zip(vals, items[1::2], strict=True)])
        pairs = [(kf, vf) for (_, kf), (_, vf) in zip(keys, vals, strict=True)]

        def make_map(fr: _Frame) -> Any:
            out: dict[Any, Any] = {}
            for kf, vf in pairs:
                k = kf(fr)
                if type(k) not in (int, UInt, bool, str):
                    raise CELError(f"unsupported key type: {cel_type_name(k)}")
                if map_lookup(out, k)[0]:
                    raise CELError(f"Failed with repeated key: {k}")
                out[k] = vf(fr)
            fr.cost += MAP_CREATE_BASE_COST
            if fr.cost > fr.limit:
                raise _CostExceeded
            return out

        return map_of(kt, vt), make_map

    def _homogeneous(self, typed: list[tuple[CelType, Any]]) -> CelType:
        """cel-go's homogeneous aggregate literals, which Kubernetes enables."""
        first: CelType | None = None
        for t, n in typed:
            if is_dyn(t):
                continue
            if first is None:
                first = t
            elif not unify(first, t, {}):
                raise Issue(f"expected type '{first}' but found '{t}'", n)
        if first is None or any(is_dyn(t) for t, _ in typed):
            return first if first is not None and all(
                not is_dyn(t) or t.name == "dyn" for t, _ in typed) and not any(
                is_dyn(t) for t, _ in typed) else DYN
        return first

    def _has(self, node: Any, args: list[Any], d: int) -> tuple[CelType, Eval]:
        sel = unwrap(args[0]) if len(args) == 1 else None
        if sel is None or sel.data != "member_dot":
            raise Issue("invalid argument to has() macro", node)
        target, field_tok = sel.children
        field = str(field_tok)
        tt, tf = self.compile(target, d)
        self._select_type(tt, field, field_tok)

        def has(fr: _Frame) -> Any:
            v = tf(fr)
            fr.cost += 1
            if fr.cost > fr.limit:
                raise _CostExceeded
            if isinstance(v, DomainMap):
                return True  # a missing domain is an empty map, so every domain is present
            if isinstance(v, dict):
                return map_lookup(v, field)[0]
            raise CELError(f"invalid type for field selection: {cel_type_name(v)}")

        return BOOL, has

    def _bind(self, node: Any, args: list[Any], d: int) -> tuple[CelType, Eval]:
        name = simple_ident(args[0]) if len(args) == 3 else None
        if name is None:
            raise Issue("cel.bind() variable name must be a simple identifier", node)
        it, init = self.compile(args[1], d)
        self.scopes.append({name: it})
        try:
            bt, body = self.compile(args[2], d)
        finally:
            self.scopes.pop()

        def bind(fr: _Frame) -> Any:
            value = init(fr)
            saved = fr.vars.get(name, _UNSET)
            fr.vars[name] = value
            try:
                return body(fr)
            finally:
                _restore(fr.vars, name, saved)

        return bt, bind

    def _range(self, t: CelType, node: Any, two: bool) -> tuple[CelType, CelType]:
        """The types of the iteration variable(s) over a range of type ``t``."""
        if t.name == "list":
            return (INT, t.params[0]) if two else (t.params[0], DYN)
        if t.name == "map":
            return (t.params[0], t.params[1]) if two else (t.params[0], DYN)
        if is_dyn(t):
            return DYN, DYN
        raise Issue(f"expression of type '{t}' cannot be range of a comprehension "
                     "(must be list, map, or dynamic)", node)

    def _comprehension(self, node: Any, target: Any, args: list[Any], d: int,
                       kind: str) -> tuple[CelType, Eval]:
        two = kind in ("all", "exists", "exists_one", "existsOne") and len(args) == 3 or \
            kind in ("transformList", "transformMap")
        names = [simple_ident(a) for a in args[:2 if two else 1]]
        if any(n is None for n in names):
            raise Issue("argument must be a simple name", node)
        rt_, rf = self.compile(target, d)
        t1, t2 = self._range(rt_, target, two)
        scope = {names[0]: t1} if not two else {names[0]: t1, names[1]: t2}
        self.scopes.append(scope)  # type: ignore[arg-type]
        try:
            rest = [self.compile(a, d) for a in args[2 if two else 1:]]
        finally:
            self.scopes.pop()
        v1: str = names[0] or ""
        v2: str | None = names[1] if two else None
        if kind in ("all", "exists", "exists_one", "existsOne", "filter") or (
                kind in ("map", "transformList", "transformMap") and len(rest) == 2):
            pt = rest[0][0]
            if not (is_dyn(pt) or pt == BOOL):
                raise Issue(f"found no matching overload for '_&&_' applied to "
                             f"'(bool, {pt})'", args[-1])
        pred = rest[0][1]
        step = rest[-1][1]
        result_t: CelType = BOOL
        if kind == "filter":
            result_t = list_of(t1)
        elif kind in ("map", "transformList"):
            result_t = list_of(rest[-1][0])
        elif kind == "transformMap":
            result_t = map_of(t1, rest[-1][0])

        def items(fr: _Frame) -> list[tuple[Any, Any]]:
            r = rf(fr)
            if type(r) is list:
                return list(enumerate(r)) if two else [(x, None) for x in r]
            if isinstance(r, dict):
                return list(r.items()) if two else [(k, None) for k in r]
            raise CELError(f"got '{go_type_name(r)}', expected iterable type")

        def run(fr: _Frame) -> Any:
            pairs = items(fr)
            saved1 = fr.vars.get(v1, _UNSET)
            saved2 = fr.vars.get(v2, _UNSET) if v2 else _UNSET
            vs = fr.vars
            try:
                return _LOOPS[kind](fr, pairs, v1, v2, vs, pred, step, len(rest) == 2)
            finally:
                _restore(vs, v1, saved1)
                if v2:
                    _restore(vs, v2, saved2)

        return result_t, run

    def _opt_select(self, node: Any, target: Any, args: list[Any], d: int,
                    by_index: bool) -> tuple[CelType, Eval]:
        tt, tf = self.compile(target, d)
        base = tt.params[0] if tt.name == "optional_type" else tt
        if by_index:
            kt, kf = self.compile(args[0], d)
            vt = base.params[-1] if base.name in ("map", "list") else DYN
        else:
            field = literal(unwrap(args[0]).children[0])[1]
            vt = self._select_type(base, field, node) if not is_dyn(base) else DYN
            kf = (lambda fr: field)  # noqa: E731

        def opt(fr: _Frame) -> Any:
            v = tf(fr)
            k = kf(fr)
            fr.cost += 1
            if fr.cost > fr.limit:
                raise _CostExceeded
            if type(v) is OptionalValue:
                if not v.present:
                    return v
                v = v.value
            if isinstance(v, dict):
                found, w = map_lookup(v, k)
                return OptionalValue(w) if found else OptionalValue()
            if type(v) is list and by_index and type(k) in (int, UInt):
                return OptionalValue(v[k]) if 0 <= k < len(v) else OptionalValue()
            raise CELError(f"no such overload: optional select on {cel_type_name(v)}")

        return optional_of(vt), opt


def _display(name: str) -> str:
    return name


def _macro(kind: str) -> Callable[..., tuple[CelType, Eval]]:
    def expand(c: _Compiler, node: Any, target: Any, args: list[Any],
               d: int) -> tuple[CelType, Eval]:
        n = len(args)
        if kind in ("all", "exists", "exists_one", "existsOne", "filter") and n not in (2, 3):
            raise Issue(f"{kind}() macro expects 2 or 3 arguments", node)
        if kind == "filter" and n != 2:
            raise Issue("filter() macro expects 2 arguments", node)
        if kind == "map" and n not in (2, 3):
            raise Issue("map() macro expects 2 or 3 arguments", node)
        if kind in ("transformList", "transformMap") and n not in (3, 4):
            raise Issue(f"{kind}() macro expects 3 or 4 arguments", node)
        return c._comprehension(node, target, args, d, kind)

    return expand


_MACROS = {k: _macro(k) for k in _LOOPS}
