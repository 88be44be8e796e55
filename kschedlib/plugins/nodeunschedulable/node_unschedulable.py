"""NodeUnschedulable Filter: ``spec.unschedulable`` nodes, unless the pod tolerates
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kschedlib.api.node import Node, Taint
from kschedlib.api.pod import Pod, Toleration
from kschedlib.api.taints import tolerations_tolerate_taint
from kschedlib.errors import QueueingHintError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.helper.typed import as_objects

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
_REJECT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNSCHEDULABLE,), NAME)


def tolerates_unschedulable(tolerations: tuple[Toleration, ...]) -> bool:
    """Whether the tolerations tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""
    return bool(tolerations) and tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Filters out cordoned nodes for pods that don't tolerate the unschedulable taint."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        return (pod.spec.tolerations,)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        if not node.spec.unschedulable or tolerates_unschedulable(pod.spec.tolerations):
            return None
        return _REJECT

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
    """Queue when a schedulable node is added or a node is uncordoned."""
    old_obj, new_obj = as_objects(Node, old_obj, new_obj)
    if new_obj is None:
        raise QueueingHintError("expected a Node, got None")
    if new_obj.spec.unschedulable:
        return QueueingHint.QueueSkip
    if old_obj is None or old_obj.spec.unschedulable:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """Queue when the rejected pod itself now tolerates the unschedulable taint."""
    old_obj, new_obj = as_objects(Pod, old_obj, new_obj)
    if new_obj is None:
        raise QueueingHintError("expected a Pod, got None")
    if new_obj.uid == pod.uid and tolerates_unschedulable(new_obj.spec.tolerations):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def new(args: Any, handle: Any) -> NodeUnschedulable:
    return NodeUnschedulable()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
