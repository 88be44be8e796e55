"""CEL values, types and the function library Kubernetes gives DRA device selectors.

Values are plain Python objects (bool, int, :class:`UInt`, float, str, bytes, None, list,
dict) plus the Kubernetes types (:class:`QuantityValue`, :class:`SemverValue`,
:class:`IPValue`, :class:`CIDRValue`, :class:`URLValue`) and :class:`OptionalValue`.
Every function has its declarations (for the type checker) and a runtime cost (cel-go's
cost model: one unit per call, string/list traversals by size), charged before the work
is done so that neither time nor memory can run away.

One module per library, as cel-go and Kubernetes split them; each registers its functions
in :data:`FUNCTIONS` when imported, and this package imports them all."""

from __future__ import annotations

from types import ModuleType

from kschedlib.api.cel.library import (
    formatting,
    ip,
    lists,
    optionals,
    quantity,
    regex,
    semver,
    standard,
    strings,
    timestamps,
    urls,
)
from kschedlib.api.cel.library.cel_types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    INT,
    NULL,
    QUANTITY,
    STRING,
    UINT,
    CelType,
    is_dyn,
    list_of,
    map_of,
    optional_of,
    substitute,
    type_of,
    unify,
)
from kschedlib.api.cel.library.functions import FUNCTIONS, Function
from kschedlib.api.cel.library.values import (
    LIST_CREATE_BASE_COST,
    MAP_CREATE_BASE_COST,
    REGEX_STRING_LENGTH_COST_FACTOR,
    STRING_TRAVERSAL_COST_FACTOR,
    CIDRValue,
    IPValue,
    OptionalValue,
    QuantityValue,
    SemverValue,
    TypeValue,
    UInt,
    URLValue,
    cel_type_name,
    go_type_name,
    map_lookup,
)

LIBRARIES: tuple[ModuleType, ...] = (
    standard, strings, formatting, regex, lists, quantity, semver, ip, urls, optionals, timestamps,
)
"""The function libraries, each registered in :data:`FUNCTIONS` on import."""

__all__ = [
    "BOOL", "BYTES", "DOUBLE", "DYN", "FUNCTIONS", "INT", "LIBRARIES", "LIST_CREATE_BASE_COST",
    "MAP_CREATE_BASE_COST", "NULL", "QUANTITY", "REGEX_STRING_LENGTH_COST_FACTOR", "STRING",
    "STRING_TRAVERSAL_COST_FACTOR", "UINT", "CIDRValue", "CelType", "Function", "IPValue",
    "OptionalValue", "QuantityValue", "SemverValue", "TypeValue", "UInt", "URLValue",
    "cel_type_name", "go_type_name", "is_dyn", "list_of", "map_lookup", "map_of", "optional_of",
    "substitute", "type_of", "unify",
]
