"""Toleration/taint matching with kube-scheduler's rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kschedlib.api.node import Taint
from kschedlib.api.pod import Toleration

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_int64(text: str) -> int | None:
    """A decimal integer in canonical form (content.IsDecimalInteger: "0", or an optional "-"
    and no leading zero) within int64 (strconv.ParseInt); None otherwise."""
    body = text[1:] if text[:1] == "-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    if body[0] == "0" and text != "0":
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def tolerates(toleration: Toleration, taint: Taint, comparison_operators: bool = False) -> bool:
    """Toleration.ToleratesTaint: empty effect/key match any; "" means Equal. ``Gt``/``Lt``
    compare integer values (taint > or < toleration) only with the
    TaintTolerationComparisonOperators gate (``comparison_operators``)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value
    if op == "Exists":
        return True
    if comparison_operators and op in ("Gt", "Lt"):
        want = parse_int64(toleration.value or "")
        have = parse_int64(taint.value or "")
        if want is None or have is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration], taint: Taint, comparison_operators: bool = False
) -> bool:
    return any(tolerates(t, taint, comparison_operators) for t in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    include: Callable[[Taint], bool] | None = None,
    comparison_operators: bool = False,
) -> Taint | None:
    """The first taint (among those ``include`` keeps) that no toleration tolerates."""
    for taint in taints:
        if include is not None and not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_operators):
            return taint
    return None
