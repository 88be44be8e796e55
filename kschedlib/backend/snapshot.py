"""Snapshot: the consistent, read-only view of NodeInfos that one scheduling cycle uses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.types import NodeInfo, PodInfo


class Snapshot:
    """Implements the shared listers plugins read (node_infos(), storage_infos())."""

    __slots__ = (
        "node_info_map",
        "node_info_list",
        "have_pods_with_affinity_node_info_list",
        "have_pods_with_required_anti_affinity_node_info_list",
        "used_pvc_set",
        "generation",
    )

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: list[NodeInfo] = []
        self.used_pvc_set: set[str] = set()
        self.generation = 0

    @classmethod
    def from_objects(cls, pods: Iterable[Pod], nodes: Iterable[Node]) -> Snapshot:
        """Build a snapshot directly (for tests and one-shot use); pods must be assigned."""
        snap = cls()
        by_node: dict[str, list[Pod]] = {}
        for p in pods:
            if p.spec.node_name:
                by_node.setdefault(p.spec.node_name, []).append(p)
        for n in nodes:
            ni = NodeInfo(n)
            for p in by_node.get(n.metadata.name, ()):
                ni.add_pod(PodInfo.of(p))
            snap.node_info_map[n.metadata.name] = ni
            snap.node_info_list.append(ni)
        snap.rebuild_lists()
        return snap

    def rebuild_lists(self) -> None:
        """Recompute the affinity lists and the used-PVC set from node_info_list."""
        self.have_pods_with_affinity_node_info_list = [
            n for n in self.node_info_list if n.pods_with_affinity
        ]
        self.have_pods_with_required_anti_affinity_node_info_list = [
            n for n in self.node_info_list if n.pods_with_required_anti_affinity
        ]
        self.used_pvc_set = {k for n in self.node_info_list for k in n.pvc_ref_counts}

    # SharedLister
    def node_infos(self) -> Snapshot:
        return self

    def storage_infos(self) -> Snapshot:
        return self

    # NodeInfoLister
    def list(self) -> Sequence[NodeInfo]:
        return self.node_info_list

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def get(self, node_name: str) -> NodeInfo:
        ni = self.node_info_map.get(node_name)
        if ni is None or ni.node is None:
            raise KeyError(f'nodeinfo not found for node name "{node_name}"')
        return ni

    # StorageInfoLister
    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    def num_nodes(self) -> int:
        return len(self.node_info_list)
