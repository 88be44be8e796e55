"""NodeName Filter: spec.nodeName, when set, must name the node."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON,), NAME)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod names no node or names this one."""
    want = pod.spec.node_name
    return not want or want == node_info.name


class NodeName:
    """Filters out every node but the one the pod names in ``spec.nodeName``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        return (pod.spec.node_name,)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        want = pod.spec.node_name
        if not want or want == node_info.name:
            return None
        return _MISMATCH

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can change the verdict; retried with backoff, no hint needed.
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]


def new(args: Any, handle: Any) -> NodeName:
    return NodeName()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
