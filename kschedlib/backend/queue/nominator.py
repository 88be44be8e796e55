"""The nominator: which pending pods are nominated (by preemption) to which nodes."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Protocol

import attrs

from kschedlib.api.meta import ObjectMeta
from kschedlib.api.pod import Pod

PodLister = Callable[[str, str], "Pod | None"]
"""(namespace, name) -> the informer's current version of the pod, or None when it is gone."""


class NominatingMode(enum.IntEnum):
    """fwk.NominatingMode: keep the pod's own status.nominatedNodeName, or override it."""

    Noop = 0
    Override = 1


@attrs.define(slots=True, frozen=True)
class NominatingInfo:
    """fwk.NominatingInfo: a nomination decided in a scheduling cycle ("" clears it)."""

    nominated_node_name: str = ""
    nominating_mode: NominatingMode = NominatingMode.Noop

    def mode(self) -> NominatingMode:
        return self.nominating_mode


def mode_of(info: NominatingInfo | None) -> NominatingMode:
    """NominatingInfo.Mode() on a possibly-nil info: nil means Noop."""
    return NominatingMode.Noop if info is None else info.nominating_mode


CLEAR_NOMINATED_NODE = NominatingInfo("", NominatingMode.Override)


class _HasPod(Protocol):
    @property
    def pod(self) -> Pod: ...


@attrs.define(slots=True, frozen=True)
class PodRef:
    """What the nominator keeps of a pod: its identity, never a possibly-stale object."""

    name: str
    namespace: str
    uid: str
    key: str = attrs.field(
        init=False, eq=False, repr=False,
        default=attrs.Factory(lambda self: f"{self.namespace}/{self.name}", takes_self=True),
    )
    """namespace/name, kept (queue lookups use it often)."""

    @classmethod
    def of(cls, pod: Pod) -> PodRef:
        return cls(pod.metadata.name, pod.metadata.namespace, pod.uid)


    def to_pod(self) -> Pod:
        """A pod carrying only the identity (as podRef.toPod)."""
        return Pod(metadata=ObjectMeta(name=self.name, namespace=self.namespace, uid=self.uid))


class Nominator:
    """nominatedPods (node -> pods, in nomination order) and nominatedPodToNode (uid -> node)."""

    __slots__ = ("_pod_lister", "nominated_pods", "nominated_pod_to_node", "on_change")

    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._pod_lister = pod_lister
        self.nominated_pods: dict[str, list[PodRef]] = {}
        self.nominated_pod_to_node: dict[str, str] = {}
        self.on_change: Callable[[str], None] | None = None
        """Called with a node name whose nominated pods change (the queue's memo)."""

    def copy_from(self, other: Nominator) -> None:
        """Take a copy of ``other``'s nominations (forks); the pod lister stays."""
        self.nominated_pods = {node: list(refs) for node, refs in other.nominated_pods.items()}
        self.nominated_pod_to_node = dict(other.nominated_pod_to_node)

    def add_nominated_pod(self, pod_info: _HasPod, nominating_info: NominatingInfo | None) -> None:
        """Nominate the pod to the node ``nominating_info`` names (Override) or to its own
        status.nominatedNodeName (Noop); any earlier nomination is dropped first."""
        pod = pod_info.pod
        self._delete(pod)
        mode = mode_of(nominating_info)
        node_name = ""
        if mode == NominatingMode.Override:
            assert nominating_info is not None
            node_name = nominating_info.nominated_node_name
        elif mode == NominatingMode.Noop:
            node_name = pod.status.nominated_node_name
        if node_name == "":
            return
        if self._pod_lister is not None:
            current = self._pod_lister(pod.metadata.namespace, pod.metadata.name)
            if current is None or current.spec.node_name != "":
                # The pod is gone, or already bound: don't nominate it.
                return
        self.nominated_pod_to_node[pod.uid] = node_name
        if self.on_change is not None:
            self.on_change(node_name)
        refs = self.nominated_pods.setdefault(node_name, [])
        if any(r.uid == pod.uid for r in refs):
            return
        refs.append(PodRef.of(pod))

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: _HasPod) -> None:
        """Re-point the nomination at the new version; a nomination made in memory survives an
        update in which neither version carries a nominatedNodeName."""
        new_pod = new_pod_info.pod
        old = old_pod if old_pod is not None else new_pod
        info: NominatingInfo | None = None
        if old.status.nominated_node_name == "" and new_pod.status.nominated_node_name == "":
            nnn = self.nominated_pod_to_node.get(old.uid)
            if nnn is not None:
                info = NominatingInfo(nnn, NominatingMode.Override)
        self._delete(old)
        self.add_nominated_pod(new_pod_info, info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._delete(pod)

    def _delete(self, pod: Pod) -> None:
        uid = pod.uid
        nnn = self.nominated_pod_to_node.pop(uid, None)
        if nnn is None:
            return
        if self.on_change is not None:
            self.on_change(nnn)
        refs = self.nominated_pods.get(nnn, [])
        for i, r in enumerate(refs):
            if r.uid == uid:
                del refs[i]
                if not refs:
                    del self.nominated_pods[nnn]
                break

    def nominated_pods_for_node(self, node_name: str) -> list[PodRef]:
        return list(self.nominated_pods.get(node_name, ()))

    def nominated_node_of(self, uid: str) -> str | None:
        return self.nominated_pod_to_node.get(uid)
