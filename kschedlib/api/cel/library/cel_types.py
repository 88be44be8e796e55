"""CEL's checker types: named and parameterized types, and the unification that matches
arguments to a function's declared overloads."""

from __future__ import annotations


class CelType:
    """A CEL type as the checker sees it; ``name`` and ``params`` as cel-go prints them."""

    __slots__ = ("fields", "name", "params")

    def __init__(self, name: str, params: tuple[CelType, ...] = (),
                 fields: dict[str, CelType] | None = None) -> None:
        self.name = name
        self.params = params
        self.fields = fields

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and self.name == other.name and self.params == other.params

    def __hash__(self) -> int:
        return hash((self.name, self.params))

    def __str__(self) -> str:
        if self.name in ("list", "map", "optional_type", "type") and self.params:
            return f"{self.name}({', '.join(str(p) for p in self.params)})"
        return self.name

    __repr__ = __str__

    @property
    def is_param(self) -> bool:
        return len(self.name) == 1 and self.name.isupper()


DYN = CelType("dyn")
BOOL, INT, UINT, DOUBLE = CelType("bool"), CelType("int"), CelType("uint"), CelType("double")
STRING, BYTES, NULL = CelType("string"), CelType("bytes"), CelType("null_type")
ERROR = CelType("*error*")
QUANTITY = CelType("kubernetes.Quantity")
SEMVER = CelType("kubernetes.Semver")
IP = CelType("net.IP")
CIDR = CelType("net.CIDR")
URL = CelType("kubernetes.URL")
TIMESTAMP = CelType("google.protobuf.Timestamp")
DURATION = CelType("google.protobuf.Duration")
_A, _B, _K, _V = CelType("A"), CelType("B"), CelType("K"), CelType("V")


def list_of(t: CelType) -> CelType:
    return CelType("list", (t,))


def map_of(k: CelType, v: CelType) -> CelType:
    return CelType("map", (k, v))


def optional_of(t: CelType) -> CelType:
    return CelType("optional_type", (t,))


def type_of(t: CelType) -> CelType:
    return CelType("type", (t,))


def is_dyn(t: CelType) -> bool:
    return t.name == "dyn" or t.is_param or t is ERROR


def unify(param: CelType, arg: CelType, binding: dict[str, CelType]) -> bool:
    """Whether ``arg`` can be passed where ``param`` is declared (type parameters bind)."""
    if param.is_param:
        bound = binding.get(param.name)
        if bound is None or is_dyn(bound):
            binding[param.name] = arg
            return True
        return is_dyn(arg) or unify(bound, arg, {})
    if is_dyn(param) or is_dyn(arg):
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(unify(p, a, binding) for p, a in zip(param.params, arg.params, strict=True))


def substitute(t: CelType, binding: dict[str, CelType]) -> CelType:
    if t.is_param:
        b = binding.get(t.name)
        return DYN if b is None or b.is_param else b
    if not t.params:
        return t
    return CelType(t.name, tuple(substitute(p, binding) for p in t.params))
