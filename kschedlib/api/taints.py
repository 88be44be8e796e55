"""Toleration/taint matching with kube-scheduler's rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kschedlib.api.node import Taint
from kschedlib.api.pod import Toleration


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint: empty effect/key match any; "" means Equal."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    include: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """The first taint (among those ``include`` keeps) that no toleration tolerates."""
    for taint in taints:
        if include is not None and not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
