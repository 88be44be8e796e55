"""TaintToleration with the TaintTolerationComparisonOperators gate on: tolerations with
``Gt``/``Lt`` compare integer taint values. A subclass, so the default plugin's hot path stays
as it is; ``new`` picks it from the handle's features when the plugin is constructed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kschedlib.api.node import Node, Taint
from kschedlib.api.pod import Pod, Toleration
from kschedlib.api.taints import find_untolerated_taint, tolerates
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.status import Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.tainttoleration.taint_toleration import (
    _DO_NOT_SCHEDULE,
    _UNTOLERATED,
    NAME,
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    TaintToleration,
    do_not_schedule_taints_filter,
    is_schedulable_after_pod_toleration_change,
)


def _count_intolerable(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    n = 0
    for taint in taints:
        if taint.effect != "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint, True) for t in tolerations):
            n += 1
    return n


class ComparisonTaintToleration(TaintToleration):
    """TaintToleration whose tolerations may use the ``Gt``/``Lt`` operators."""

    __slots__ = ()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        tolerations = pod.spec.tolerations
        for taint in node.spec.taints:
            if taint.effect in _DO_NOT_SCHEDULE and not any(
                tolerates(t, taint, True) for t in tolerations
            ):
                return _UNTOLERATED
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        if node is None:
            return 0, Status.error("node not found", NAME)
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found', NAME
            )
        return _count_intolerable(node.spec.taints, s.tolerations_prefer_no_schedule), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        out: list[int] = []
        for ni in nodes:
            v, st = self.score(state, pod, ni)
            if st is not None:
                return [], st
            out.append(v)
        return out, None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                is_schedulable_after_pod_toleration_change,
            ),
        ]


def _untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> bool:
    return (
        find_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter, True)
        is not None
    )


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """As the default hint, with comparison operators honoured."""
    if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
        raise TypeError("expected Node objects")
    tolerations = pod.spec.tolerations
    was = old_obj is None or _untolerated(old_obj.spec.taints, tolerations)
    if was and not _untolerated(new_obj.spec.taints, tolerations):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip
