"""DefaultNormalizeScore: scale raw scores to [0, max_priority], optionally reversed."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Status


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` on int64."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(
    max_priority: int, reverse: bool, scores: Sequence[NodeScore]
) -> Status | None:
    """Scale scores from [0, max(scores)] to [0, max_priority] in place; ``reverse`` flips them.

    With every score at most 0, scores stay as they are, or all become max_priority if reversed.
    """
    max_count = 0
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
    if max_count == 0:
        if reverse:
            for ns in scores:
                ns.score = max_priority
        return None
    for ns in scores:
        s = _go_div(max_priority * ns.score, max_count)
        ns.score = max_priority - s if reverse else s
    return None


def default_normalize_values(max_priority: int, reverse: bool, values: list[int]) -> None:
    """default_normalize_score over a plain list of scores (node order), in place."""
    max_count = max(values, default=0)
    if max_count <= 0:
        if reverse:
            values[:] = [max_priority] * len(values)
        return
    if min(values) >= 0:
        if reverse:
            values[:] = [max_priority - max_priority * v // max_count for v in values]
        else:
            values[:] = [max_priority * v // max_count for v in values]
        return
    scaled = [_go_div(max_priority * v, max_count) for v in values]
    values[:] = [max_priority - v for v in scaled] if reverse else scaled
