"""QoS classes and oom_score_adj (pkg/kubelet/qos/policy.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.pod import Pod
from kschedlib.eviction import compute_pod_qos, container_oom_score_adjust, pod_oom_score_adjust
from tests.eviction.util import Gi, pod

CAP = 10 * Gi


def _pod(containers: list[dict[str, Any]], **spec: Any) -> Pod:
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "d"},
                          "spec": {"containers": containers, **spec}})


def _c(name: str = "c", req: dict[str, str] | None = None, lim: dict[str, str] | None = None,
       **extra: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": req or {}, "limits": lim or {}}, **extra}


def test_qos_classes() -> None:
    assert compute_pod_qos(_pod([_c()])) == "BestEffort"
    assert compute_pod_qos(_pod([_c(req={"memory": "1Gi"})])) == "Burstable"
    full = {"cpu": "1", "memory": "1Gi"}
    assert compute_pod_qos(_pod([_c(req=full, lim=full)])) == "Guaranteed"
    # limits alone default the requests (API defaulting): Guaranteed
    assert compute_pod_qos(_pod([_c(lim=full)])) == "Guaranteed"
    # every container must have cpu and memory limits equal to requests
    assert compute_pod_qos(_pod([_c(req=full, lim=full), _c("d", req={"cpu": "1"})])) == "Burstable"
    # extended resources do not count
    assert compute_pod_qos(_pod([_c(req={"example.com/gpu": "1"})])) == "BestEffort"
    # pod-level resources decide when set
    assert compute_pod_qos(_pod([_c()], resources={"requests": full, "limits": full})) == "Guaranteed"


def test_guaranteed_and_best_effort() -> None:
    full = {"cpu": "1", "memory": "1Gi"}
    g = _pod([_c(req=full, lim=full)])
    assert container_oom_score_adjust(g, g.spec.containers[0], CAP) == -997
    be = _pod([_c()])
    assert container_oom_score_adjust(be, be.spec.containers[0], CAP) == 1000


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ("1Gi", 900),        # 1000 - 1000*1Gi/10Gi
        ("5Gi", 500),
        ("10Gi", 3),         # would be 0: clamped to 1000 + (-997)
        ("1", 999),          # would be 1000: burstable stays below best-effort
        ("3Gi", 700),
    ],
)
def test_burstable_formula(request_: str, expected: int) -> None:
    p = _pod([_c(req={"memory": request_})])
    assert container_oom_score_adjust(p, p.spec.containers[0], CAP) == expected


def test_node_critical_pods_get_the_guaranteed_score() -> None:
    p = _pod([_c()], priority=2_000_001_000, priorityClassName="system-node-critical")
    assert container_oom_score_adjust(p, p.spec.containers[0], CAP) == -997
    p2 = _pod([_c()], priority=2_000_000_000, priorityClassName="system-cluster-critical")
    assert container_oom_score_adjust(p2, p2.spec.containers[0], CAP) == 1000


def test_sidecars_score_no_higher_than_the_smallest_app_container() -> None:
    p = _pod([_c("app", req={"memory": "4Gi"}), _c("app2", req={"memory": "2Gi"})],
             initContainers=[_c("side", req={"memory": "1Gi"}, restartPolicy="Always"),
                             _c("init", req={"memory": "1Gi"})])
    scores = pod_oom_score_adjust(p, CAP)
    assert scores["app"] == 600 and scores["app2"] == 800
    assert scores["side"] == 800   # min(900, score of the smallest app request)
    assert scores["init"] == 900   # ordinary init containers keep their own


def test_status_qos_class_wins() -> None:
    p = pod("x", mem="1Gi")
    assert compute_pod_qos(p) == "Burstable"
    reported = Pod.from_dict({**p.to_dict(), "status": {"qosClass": "BestEffort"}})
    assert container_oom_score_adjust(reported, reported.spec.containers[0], CAP) == 1000
