"""The unschedulable pods (kube-scheduler's unschedulablePods map): pods that failed an attempt
and wait for an event that may make them schedulable, as kept by the PriorityQueue."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kschedlib.api.pod import Pod
from kschedlib.backend.queue.metrics import UNSCHEDULABLE, QueueMetrics
from kschedlib.framework.queued_pod_info import QueuedPodInfo

POD_TOPOLOGY_SPREAD = "PodTopologySpread"

NamespaceLabels = Callable[[str], "Mapping[str, str] | None"]


class UnschedulablePods:
    """The PriorityQueue's unschedulable pods map (mixed into PriorityQueue)."""

    # Set by PriorityQueue.__init__.
    _unschedulable: dict[str, QueuedPodInfo]
    _cross_topology_keys: set[str]
    """Keys of unschedulable pods that an assigned pod's event may move (rejected by
    PodTopologySpread, or with a required affinity term), or did when last noted: a superset
    of those in the map, so an empty set answers the cross-topology scan without a scan."""
    _namespace_labels: NamespaceLabels | None
    metrics: QueueMetrics

    def _nominated_touch(self, key: str) -> None:
        raise NotImplementedError  # PriorityQueue's

    def _unschedulable_add_or_update(self, p: QueuedPodInfo, event: str) -> None:
        key = p.key
        if key not in self._unschedulable:
            self.metrics.incoming(UNSCHEDULABLE, event)
        self._unschedulable[key] = p
        self._nominated_touch(key)
        if p.pod_info.required_affinity_terms or POD_TOPOLOGY_SPREAD in p.unschedulable_plugins:
            self._cross_topology_keys.add(key)
        else:
            self._cross_topology_keys.discard(key)

    def _note_cross_topology(self, p: QueuedPodInfo) -> None:
        """``p`` (maybe with the unschedulable pods) changed in place: keep the superset."""
        if p.pod_info.required_affinity_terms or POD_TOPOLOGY_SPREAD in p.unschedulable_plugins:
            self._cross_topology_keys.add(p.key)

    def _unschedulable_delete(self, pod: Pod) -> None:
        key = pod.key
        self._unschedulable.pop(key, None)
        self._nominated_touch(key)
        self._cross_topology_keys.discard(key)

    def _unschedulable_pods_with_cross_topology_term(self, pod: Pod) -> list[QueuedPodInfo]:
        """Unschedulable pods rejected by PodTopologySpread in ``pod``'s namespace, or with a
        required affinity term matching ``pod``."""
        if not self._cross_topology_keys:
            return []  # none of them can be one (the set is a superset of those that are)
        ns_labels: Mapping[str, str] = {}
        if self._namespace_labels is not None:
            ns_labels = self._namespace_labels(pod.metadata.namespace) or {}
        out: list[QueuedPodInfo] = []
        for p in self._unschedulable.values():
            if (
                POD_TOPOLOGY_SPREAD in p.unschedulable_plugins
                and pod.metadata.namespace == p.pod.metadata.namespace
            ):
                out.append(p)
                continue
            for term in p.pod_info.required_affinity_terms:
                if term.matches(pod, ns_labels):
                    out.append(p)
                    break
        return out
