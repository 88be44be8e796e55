"""The base cluster a sweep varies: its configuration, nodes, running pods, other objects and
the pods waiting to be scheduled, split once so every variant starts from the same state."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod, is_terminal

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def node_zone(node: Node) -> str:
    """The node's zone label, or "" when it has none."""
    labels = node.metadata.labels
    for key in ZONE_LABELS:
        zone = labels.get(key)
        if zone:
            return zone
    return ""


@attrs.define(slots=True, frozen=True, kw_only=True)
class BaseCluster:
    """An immutable cluster: what is scheduled already and what waits (``pending``)."""

    config: Mapping[str, Any] | None = None
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pending: tuple[Pod, ...] = ()
    objects: tuple[Any, ...] = ()
    held: tuple[tuple[str, Pod], ...] = ()
    """OrderedReady StatefulSet pods, each created once the pod whose key it is paired with
    is bound (as `kschedlib simulate` runs them)."""

    @classmethod
    def from_objects(
        cls, objects: Iterable[Any], config: Mapping[str, Any] | None = None
    ) -> BaseCluster:
        """Split decoded objects: nodes, bound pods, pending pods (in input order), the rest.
        Terminal pods are dropped, as kube-scheduler's informers drop them."""
        nodes: list[Node] = []
        pods: list[Pod] = []
        pending: list[Pod] = []
        other: list[Any] = []
        for obj in objects:
            if isinstance(obj, Node):
                nodes.append(obj)
            elif isinstance(obj, Pod):
                if is_terminal(obj):
                    continue
                (pods if obj.spec.node_name else pending).append(obj)
            elif isinstance(obj, dict):
                continue
            else:
                other.append(obj)
        return cls(
            config=config, nodes=tuple(nodes), pods=tuple(pods), pending=tuple(pending),
            objects=tuple(other),
        )

    @classmethod
    def load(cls, *sources: Any) -> BaseCluster:
        """Whatever `kschedlib simulate` reads (kubectl dumps, manifests, folders, scenario
        files, several at once), manifests expanded as the controllers would."""
        from kschedlib.api.cluster import load_cluster

        cluster = load_cluster(*sources)
        base = cls.from_objects(cluster.initial_objects(), cluster.config)
        return attrs.evolve(base, held=tuple(cluster.held_pods().items()))

    def zones(self) -> list[str]:
        """The zones of the nodes, sorted; nodes without a zone label are not counted."""
        return sorted({z for z in map(node_zone, self.nodes) if z})

    def node(self, name: str) -> Node | None:
        for n in self.nodes:
            if n.metadata.name == name:
                return n
        return None
