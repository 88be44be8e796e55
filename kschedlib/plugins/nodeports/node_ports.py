"""NodePorts PreFilter/Filter: the pod's host ports must not conflict with ports in use."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.pod import ContainerPort, Pod, host_ports
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import HostPortInfo, NodeInfo

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_CONFLICT = Status(Code.Unschedulable, (ERR_REASON,), NAME)


def get_host_ports(pod: Pod) -> list[ContainerPort]:
    """The pod's host ports, sidecars included (util.GetHostPorts)."""
    return host_ports(pod)


def fits_ports(want: Sequence[tuple[str, str, int]], in_use: HostPortInfo) -> bool:
    """Whether none of the (hostIP, protocol, hostPort) triples conflicts with ``in_use``."""
    if not in_use:
        return True
    return all(not in_use.check_conflict(ip, protocol, port) for ip, protocol, port in want)


def _triples(ports: Sequence[ContainerPort]) -> tuple[tuple[str, str, int], ...]:
    return tuple((p.host_ip, p.protocol, p.host_port) for p in ports)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's host ports are all free on the node."""
    return fits_ports(_triples(get_host_ports(pod)), node_info.used_ports)


@attrs.define(slots=True, frozen=True)
class PreFilterState:
    """The pod's wanted host ports; unaffected by other pods, so clone shares it."""

    ports: tuple[tuple[str, str, int], ...]

    def clone(self) -> PreFilterState:
        return self


class NodePorts:
    """Rejects nodes where one of the pod's host ports is already taken."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        return _triples(get_host_ports(pod))

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        ports = get_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(_triples(ports)))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Status.error(
                f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found', NAME
            )
        if fits_ports(s.ports, node_info.used_ports):
            return None
        return _CONFLICT

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Container ports are immutable: pod updates never free a port.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]


def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Queue only when the deleted pod was (or was about to be) on a node and held a host
    port the rejected pod wants."""
    if not isinstance(old_obj, Pod):
        raise TypeError(f"expected Pod, got {type(old_obj).__name__}")
    if not old_obj.spec.node_name and not old_obj.status.nominated_node_name:
        return QueueingHint.QueueSkip
    ports = get_host_ports(old_obj)
    if not ports:
        return QueueingHint.QueueSkip
    in_use = HostPortInfo()
    for p in ports:
        in_use.add(p.host_ip, p.protocol, p.host_port)
    if fits_ports(_triples(get_host_ports(pod)), in_use):
        return QueueingHint.QueueSkip
    return QueueingHint.Queue


def new(args: Any, handle: Any) -> NodePorts:
    return NodePorts()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
