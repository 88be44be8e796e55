"""Synthetic workloads on a scenario's nodes, for what the shared workloads do not cover."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.conformance.scenario import Scenario


def anti_affinity_spread_pods(apps: int, replicas: int) -> list[Pod]:
    """``apps`` deployments of ``replicas`` pods, each with required hostname anti-affinity to
    its own app and a zone topology spread constraint (maxSkew 1, DoNotSchedule)."""
    pods: list[Pod] = []
    for a in range(apps):
        app = f"app-{a:04d}"
        selector = {"matchLabels": {"app": app}}
        for r in range(replicas):
            spec: dict[str, Any] = {
                "containers": [{"name": "c", "image": "registry.example.com/app:1",
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}},
                "topologySpreadConstraints": [{
                    "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}],
            }
            pods.append(Pod.from_dict({
                "metadata": {"name": f"{app}-{r}", "namespace": "default",
                             "uid": f"uid-{app}-{r}", "labels": {"app": app}},
                "spec": spec,
            }))
    return pods


def with_pending(scenario: Scenario, pods: list[Pod]) -> Scenario:
    """The scenario's cluster with these pods to schedule instead of its own."""
    from attrs import evolve

    return evolve(scenario, name=f"{scenario.name}+spread", pending=tuple(pods))
