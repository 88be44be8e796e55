"""QoS classes, critical pods and the OOM killer's oom_score_adj (pkg/apis/core/v1/helper/qos,
pkg/kubelet/types, pkg/kubelet/qos/policy.go)."""

from __future__ import annotations

from fractions import Fraction

from kschedlib.api.pod import Container, Pod, ResourceRequirements
from kschedlib.api.quantity import Quantity
from kschedlib.api.resource import aggregate_container_requests

QOS_GUARANTEED = "Guaranteed"
QOS_BURSTABLE = "Burstable"
QOS_BEST_EFFORT = "BestEffort"

KUBELET_OOM_SCORE_ADJ = -999
KUBE_PROXY_OOM_SCORE_ADJ = -999
GUARANTEED_OOM_SCORE_ADJ = -997
BESTEFFORT_OOM_SCORE_ADJ = 1000

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_QOS_RESOURCES = ("cpu", "memory")


def _defaulted(rr: ResourceRequirements) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """Requests as the API server defaults them: a limit stands in for a missing request."""
    requests = dict(rr.requests)
    for k, v in rr.limits.items():
        requests.setdefault(k, v)
    return requests, dict(rr.limits)


def compute_pod_qos(pod: Pod) -> str:
    """ComputePodQOS: pod-level resources when set, else every app and init container."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True

    def add(acc: dict[str, Fraction], rl: dict[str, Quantity]) -> set[str]:
        found: set[str] = set()
        for name, q in rl.items():
            if name in _QOS_RESOURCES and q.sign() > 0:
                found.add(name)
                acc[name] = acc.get(name, Fraction(0)) + q.as_fraction()
        return found

    if pod.spec.resources is not None:
        reqs, lims = _defaulted(pod.spec.resources)
        if reqs:
            add(requests, reqs)
        if lims:
            add(limits, lims)
            if not all(k in lims for k in _QOS_RESOURCES):
                guaranteed = False
        else:
            guaranteed = False
    else:
        for c in (*pod.spec.containers, *pod.spec.init_containers):
            reqs, lims = _defaulted(c.resources)
            add(requests, reqs)
            found = add(limits, lims)
            if not all(k in found for k in _QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if guaranteed:
        for name, req in requests.items():
            if limits.get(name) != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


def get_pod_qos(pod: Pod) -> str:
    """GetPodQOS: status.qosClass when the kubelet has set it, else computed."""
    return pod.status.qos_class or compute_pod_qos(pod)


def is_static_pod(pod: Pod) -> bool:
    src = pod.metadata.annotations.get(CONFIG_SOURCE_ANNOTATION)
    return src is not None and src != "api"


def is_mirror_pod(pod: Pod) -> bool:
    return CONFIG_MIRROR_ANNOTATION in pod.metadata.annotations


def is_critical_pod(pod: Pod) -> bool:
    """kubelettypes.IsCriticalPod: static, mirror, or priority >= system-critical (2e9)."""
    if is_static_pod(pod) or is_mirror_pod(pod):
        return True
    return pod.spec.priority is not None and pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY


def is_node_critical_pod(pod: Pod) -> bool:
    return is_critical_pod(pod) and pod.spec.priority_class_name == "system-node-critical"


def _mem_request(c: Container) -> int:
    q = c.resources.requests.get("memory")
    if q is None:
        q = c.resources.limits.get("memory")  # API defaulting
    return 0 if q is None else q.value()


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _remaining_pod_mem_request_per_container(pod: Pod) -> int:
    res = pod.spec.resources
    if res is None:
        return 0
    q = res.requests.get("memory") or res.limits.get("memory")
    if q is None or q.is_zero():
        return 0
    n = len(pod.spec.containers) + len(pod.spec.init_containers)
    agg = aggregate_container_requests(pod.spec.containers, pod.spec.init_containers)
    agg_mem = agg.get("memory")
    remaining = q.value() - (agg_mem.value() if agg_mem is not None else 0)
    return _go_div(remaining, n) if n else 0


def container_oom_score_adjust(pod: Pod, container: Container, memory_capacity: int) -> int:
    """GetContainerOOMScoreAdjust (tie-break gate off, the v1.35 default)."""
    if is_node_critical_pod(pod):
        return GUARANTEED_OOM_SCORE_ADJ
    qos = get_pod_qos(pod)
    if qos == QOS_GUARANTEED:
        return GUARANTEED_OOM_SCORE_ADJ
    if qos == QOS_BEST_EFFORT:
        return BESTEFFORT_OOM_SCORE_ADJ
    if memory_capacity <= 0:
        raise ValueError("memory capacity must be positive")
    mem_req = _mem_request(container)
    pod_level = pod.spec.resources is not None and "memory" in pod.spec.resources.requests
    remaining = _remaining_pod_mem_request_per_container(pod) if pod_level else 0
    adj = 1000 - _go_div(1000 * (mem_req + remaining), memory_capacity)
    sidecar = container.restart_policy == "Always" and any(
        ic.name == container.name for ic in pod.spec.init_containers
    )
    if sidecar and pod.spec.containers:
        min_req = min(_mem_request(c) for c in pod.spec.containers) + remaining
        min_adj = 1000 - _go_div(1000 * min_req, memory_capacity)
        adj = min(adj, min_adj)
    if adj < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adj == BESTEFFORT_OOM_SCORE_ADJ:
        return adj - 1
    return adj


def pod_oom_score_adjust(pod: Pod, memory_capacity: int) -> dict[str, int]:
    """oom_score_adj of every app and init container of a pod, by container name."""
    return {
        c.name: container_oom_score_adjust(pod, c, memory_capacity)
        for c in (*pod.spec.init_containers, *pod.spec.containers)
    }
