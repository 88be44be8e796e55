"""Taint-based eviction (pkg/controller/tainteviction) and the taints the node lifecycle
controller derives from node conditions (pkg/controller/nodelifecycle)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from kschedlib.api.node import Node, NodeCondition, Taint
from kschedlib.api.pod import Pod, Toleration
from kschedlib.api.taints import tolerates

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
DEFAULT_NOT_READY_TOLERATION_SECONDS = 300
DEFAULT_UNREACHABLE_TOLERATION_SECONDS = 300

#: nodeConditionToTaintKeyStatusMap: (condition, status) -> NoSchedule taint key.
CONDITION_TAINTS: dict[tuple[str, str], str] = {
    ("Ready", "False"): TAINT_NODE_NOT_READY,
    ("Ready", "Unknown"): TAINT_NODE_UNREACHABLE,
    ("MemoryPressure", "True"): TAINT_NODE_MEMORY_PRESSURE,
    ("DiskPressure", "True"): TAINT_NODE_DISK_PRESSURE,
    ("NetworkUnavailable", "True"): TAINT_NODE_NETWORK_UNAVAILABLE,
    ("PIDPressure", "True"): TAINT_NODE_PID_PRESSURE,
}
_CONDITION_TAINT_KEYS = frozenset(CONDITION_TAINTS.values())

#: The kubelet's condition reasons and messages for the pressure conditions.
PRESSURE_CONDITION_TEXT: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "MemoryPressure": (
        ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
        ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ),
    "DiskPressure": (
        ("KubeletHasDiskPressure", "kubelet has disk pressure"),
        ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ),
    "PIDPressure": (
        ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
        ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ),
}


def with_pressure_conditions(node: Node, pressures: Iterable[str]) -> Node:
    """The node with its MemoryPressure/DiskPressure/PIDPressure conditions set as the kubelet
    reports them (True for the given pressures, False for the others)."""
    active = set(pressures)
    conds = [c for c in node.status.conditions if c.type not in PRESSURE_CONDITION_TEXT]
    for ctype, (on, off) in PRESSURE_CONDITION_TEXT.items():
        reason, msg = on if ctype in active else off
        conds.append(NodeCondition(type=ctype, status="True" if ctype in active else "False",
                                   reason=reason, message=msg))
    return attrs.evolve(node, status=attrs.evolve(node.status, conditions=tuple(conds)))


def condition_no_schedule_taints(node: Node) -> list[Taint]:
    """The NoSchedule taints TaintNodesByCondition maintains for the node's conditions."""
    out = []
    for c in node.status.conditions:
        key = CONDITION_TAINTS.get((c.type, c.status))
        if key is not None:
            out.append(Taint(key=key, effect="NoSchedule"))
    return out


def no_execute_taint_for_ready(node: Node) -> Taint | None:
    """doNoExecuteTaintingPass: not-ready (Ready=False) or unreachable (Ready=Unknown)."""
    for c in node.status.conditions:
        if c.type == "Ready":
            if c.status == "False":
                return Taint(key=TAINT_NODE_NOT_READY, effect="NoExecute")
            if c.status == "Unknown":
                return Taint(key=TAINT_NODE_UNREACHABLE, effect="NoExecute")
    return None


def with_lifecycle_taints(node: Node, no_execute: bool = True) -> Node:
    """The node with the control plane's condition taints: the NoSchedule ones for every
    condition and (``no_execute``) the not-ready/unreachable NoExecute taint."""
    def managed(t: Taint) -> bool:
        if t.key not in _CONDITION_TAINT_KEYS:
            return False
        if t.effect == "NoSchedule":
            return True
        return no_execute and t.effect == "NoExecute" and t.key in (
            TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE)

    desired = condition_no_schedule_taints(node)
    if no_execute:
        ne = no_execute_taint_for_ready(node)
        if ne is not None:
            desired.append(ne)
    keep = [t for t in node.spec.taints if not managed(t) or t in desired]
    keep.extend(t for t in desired if t not in keep)
    if tuple(keep) == node.spec.taints:
        return node
    return attrs.evolve(node, spec=attrs.evolve(node.spec, taints=tuple(keep)))


def with_default_tolerations(pod: Pod) -> Pod:
    """DefaultTolerationSeconds admission: 300 s not-ready/unreachable NoExecute tolerations
    unless the pod already tolerates those taints."""
    not_ready = unreachable = False
    for t in pod.spec.tolerations:
        if t.key in (TAINT_NODE_NOT_READY, "") and t.effect in ("NoExecute", ""):
            not_ready = True
        if t.key in (TAINT_NODE_UNREACHABLE, "") and t.effect in ("NoExecute", ""):
            unreachable = True
    extra: list[Toleration] = []
    if not not_ready:
        extra.append(Toleration(key=TAINT_NODE_NOT_READY, operator="Exists", effect="NoExecute",
                                toleration_seconds=DEFAULT_NOT_READY_TOLERATION_SECONDS))
    if not unreachable:
        extra.append(Toleration(key=TAINT_NODE_UNREACHABLE, operator="Exists", effect="NoExecute",
                                toleration_seconds=DEFAULT_UNREACHABLE_TOLERATION_SECONDS))
    if not extra:
        return pod
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, tolerations=pod.spec.tolerations + tuple(extra)))


def get_matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], comparison_operators: bool = False
) -> tuple[bool, list[Toleration]]:
    """v1helper.GetMatchingTolerations: whether every taint is tolerated, and the first
    toleration matching each."""
    if not taints:
        return True, []
    if not tolerations:
        return False, []
    used = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates(t, taint, comparison_operators)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_time(tolerations: Sequence[Toleration]) -> float:
    """getMinTolerationTime: 0 without tolerations, -1 (forever) when none is time-bound."""
    if not tolerations:
        return 0.0
    best: int | None = None
    for t in tolerations:
        if t.toleration_seconds is not None:
            if t.toleration_seconds <= 0:
                return 0.0
            if best is None or t.toleration_seconds < best:
                best = t.toleration_seconds
    return -1.0 if best is None else float(best)


@attrs.define(slots=True, frozen=True)
class TaintEviction:
    """A pod the taint-eviction controller deletes (or has scheduled), and why."""

    pod: Pod
    node_name: str
    taints: tuple[Taint, ...]
    created_at: float
    fire_at: float
    reason: str


@attrs.define(slots=True)
class _Work:
    pod: Pod
    node_name: str
    taints: tuple[Taint, ...]
    created_at: float
    fire_at: float
    reason: str


class TaintEvictionController:
    """The taint-eviction controller's timed work queue, by the host's clock.

    ``sync`` sees the current nodes and pods (as its informers would) and schedules or
    cancels deletions; ``due`` pops the deletions whose time has come. With
    ``comparison_operators`` (the TaintTolerationComparisonOperators gate, read as the
    controller reads it) ``Gt``/``Lt`` tolerations compare integer taint values, as in the
    scheduler's TaintToleration plugin.
    """

    def __init__(self, comparison_operators: bool = False) -> None:
        self.comparison_operators = comparison_operators
        self._work: dict[str, _Work] = {}
        self.events: list[tuple[str, str]] = []

    def scheduled(self) -> list[TaintEviction]:
        return [TaintEviction(w.pod, w.node_name, w.taints, w.created_at, w.fire_at, w.reason)
                for w in self._work.values()]

    def _cancel(self, uid: str) -> None:
        w = self._work.pop(uid, None)
        if w is not None:
            self.events.append(("TaintManagerEviction", f"Cancelling deletion of Pod {w.pod.key}"))

    def process_pod(self, pod: Pod, node: Node | None, now: float) -> None:
        """processPodOnNode for one pod (``node`` None when the node is gone)."""
        uid = pod.uid
        taints = tuple(t for t in (node.spec.taints if node else ()) if t.effect == "NoExecute")
        if not taints or node is None:
            self._cancel(uid)
            return
        cmp = self.comparison_operators
        all_tolerated, used = get_matching_tolerations(taints, pod.spec.tolerations, cmp)
        if not all_tolerated:
            self._cancel(uid)
            bad = next(t for t in taints
                       if not any(tolerates(tl, t, cmp) for tl in pod.spec.tolerations))
            self._work[uid] = _Work(pod, node.metadata.name, taints, now, now,
                                    f"the pod does not tolerate the NoExecute taint {bad}")
            return
        wait = min_toleration_time(used)
        if wait < 0:
            self._cancel(uid)
            return
        trigger = now + wait
        existing = self._work.get(uid)
        start = now
        if existing is not None:
            start = existing.created_at
            if start + wait < trigger:
                return
            self._cancel(uid)
        names = ", ".join(str(t) for t in taints)
        self._work[uid] = _Work(pod, node.metadata.name, taints, start, start + wait,
                                f"tolerationSeconds {int(wait)} for {names} ran out")

    def sync(
        self,
        nodes: dict[str, Node],
        pods_by_node: dict[str, list[Pod]],
        now: float,
        exists: Callable[[Pod], bool] | None = None,
    ) -> None:
        """Reconcile the pods of the given nodes against their NoExecute taints; scheduled
        work for any other pod is cancelled (silently when ``exists`` says it is gone)."""
        seen: set[str] = set()
        for name, pods in pods_by_node.items():
            node = nodes.get(name)
            for p in pods:
                if p.metadata.deletion_timestamp is not None:
                    continue
                seen.add(p.uid)
                self.process_pod(p, node, now)
        for uid in [u for u in self._work if u not in seen]:
            w = self._work[uid]
            if exists is not None and exists(w.pod):
                self._cancel(uid)
            else:
                self._work.pop(uid, None)

    def due(self, now: float) -> list[TaintEviction]:
        """Pop the deletions whose time has come, earliest first."""
        ready = sorted((w for w in self._work.values() if w.fire_at <= now),
                       key=lambda w: (w.fire_at, w.pod.key))
        out = []
        for w in ready:
            del self._work[w.pod.uid]
            self.events.append(("TaintManagerEviction", f"Marking for deletion Pod {w.pod.key}"))
            out.append(TaintEviction(w.pod, w.node_name, w.taints, w.created_at, w.fire_at, w.reason))
        return out
