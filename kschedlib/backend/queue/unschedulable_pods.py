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
    _namespace_labels: NamespaceLabels | None
    metrics: QueueMetrics

    def _unschedulable_add_or_update(self, p: QueuedPodInfo, event: str) -> None:
        key = p.key
        if key not in self._unschedulable:
            self.metrics.incoming(UNSCHEDULABLE, event)
        self._unschedulable[key] = p

    def _unschedulable_delete(self, pod: Pod) -> None:
        self._unschedulable.pop(pod.key, None)

    def _unschedulable_pods_with_cross_topology_term(self, pod: Pod) -> list[QueuedPodInfo]:
        """Unschedulable pods rejected by PodTopologySpread in ``pod``'s namespace, or with a
        required affinity term matching ``pod``."""
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
