"""TaintToleration: Filter on untolerated NoSchedule/NoExecute taints; Score by the number
of untolerated PreferNoSchedule taints (fewer is better)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

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
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.helper import default_normalize_score, default_normalize_values

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_UNTOLERATED = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNTOLERATED,), NAME)
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: the taints that keep pods off a node."""
    return taint.effect in _DO_NOT_SCHEDULE


def _has_untolerated_do_not_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> bool:
    return find_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter) is not None


@attrs.define(slots=True, frozen=True)
class PreScoreState:
    """The pod's tolerations that can tolerate PreferNoSchedule taints."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> PreScoreState:
        return self


def _count_intolerable_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> int:
    n = 0
    for taint in taints:
        if taint.effect != "PreferNoSchedule":
            continue
        for t in tolerations:
            if tolerates(t, taint):
                break
        else:
            n += 1
    return n


class TaintToleration:
    """Checks that the pod tolerates the node's taints, and prefers fewer untolerated
    PreferNoSchedule taints."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True
    # NormalizeScore (DefaultNormalizeScore) maps equal raw scores to equal scores whatever
    # their number: the runtime may normalize one of them for all.
    uniform_normalize = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        return (pod.spec.tolerations,)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        taints = node.spec.taints
        if not taints:
            return None
        tolerations = pod.spec.tolerations
        for taint in taints:
            if taint.effect not in _DO_NOT_SCHEDULE:
                continue
            for t in tolerations:
                if tolerates(t, taint):
                    break
            else:
                return _UNTOLERATED
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        prefer = tuple(
            t for t in pod.spec.tolerations if not t.effect or t.effect == "PreferNoSchedule"
        )
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(prefer))
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
        taints = node.spec.taints
        if not taints:
            return 0, None
        return _count_intolerable_prefer_no_schedule(taints, s.tolerations_prefer_no_schedule), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (same result as ``score`` per node)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return [], Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found', NAME
            )
        prefer = s.tolerations_prefer_no_schedule
        out: list[int] = []
        for ni in nodes:
            node = ni.node
            if node is None:
                return [], Status.error("node not found", NAME)
            taints = node.spec.taints
            out.append(_count_intolerable_prefer_no_schedule(taints, prefer) if taints else 0)
        return out, None

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score_values(
        self, state: CycleState, pod: Pod, values: list[int]
    ) -> Status | None:
        """normalize_score over plain scores in node order (in place)."""
        default_normalize_values(MAX_NODE_SCORE, True, values)
        return None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

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


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Queue when the node goes from having an untolerated NoSchedule/NoExecute taint (or
    not existing) to having none."""
    if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
        raise TypeError("expected Node objects")
    tolerations = pod.spec.tolerations
    was_untolerated = old_obj is None or _has_untolerated_do_not_schedule(
        old_obj.spec.taints, tolerations
    )
    is_untolerated = _has_untolerated_do_not_schedule(new_obj.spec.taints, tolerations)
    if was_untolerated and not is_untolerated:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """Queue when the rejected pod's own tolerations changed."""
    if not isinstance(new_obj, Pod):
        raise TypeError(f"expected Pod, got {type(new_obj).__name__}")
    return QueueingHint.Queue if new_obj.uid == pod.uid else QueueingHint.QueueSkip

