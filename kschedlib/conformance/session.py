"""Drive a scenario through the Scheduler facade, recording each decision in the shape of
the conformance expectations."""

from __future__ import annotations

from typing import Any

from kschedlib.api.codec import encode
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import EXTENDED_RESOURCE_CLAIM_ANNOTATION, ResourceClaim
from kschedlib.api.scenario import Scenario
from kschedlib.features import FeatureGates
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.status import Code
from kschedlib.plugins.dynamicresources import extended_resource_claim, pod_claims
from kschedlib.results import Explanation, NodeVerdict, Outcome, SchedulingResult
from kschedlib.scheduler import Scheduler


def verdict_json(v: NodeVerdict) -> dict[str, Any]:
    return {"code": v.code, "plugin": v.plugin, "reasons": list(v.reasons)}


def scheduler_config(scenario: Scenario) -> dict[str, Any]:
    """The scenario's configuration as the corpus used it: profiles[0] only, and
    percentageOfNodesToScore 100 unless the scenario sets it."""
    cfg = dict(scenario.config) if scenario.config else {}
    profiles = cfg.get("profiles") or []
    if profiles:
        cfg["profiles"] = [profiles[0]]
    cfg.setdefault("percentageOfNodesToScore", 100)
    return cfg


def _gates(given: Any, scenario: Scenario) -> Any:
    """The gates to run with: the caller's (``--feature-gates``), with the scenario's own
    ``featureGates`` (the ones it was recorded with) on top."""
    if not scenario.feature_gates:
        return given
    return FeatureGates.of(given).with_overrides(dict(scenario.feature_gates))


class ScenarioSession:
    """Schedules a scenario's pending pods one after another: a selected pod is bound at
    once; a preemptor is retried once on its nominated node; a pod that stays unschedulable
    without a nomination leaves the cluster before the next pod, as in the corpus."""

    def __init__(self, scenario: Scenario, config: Any = None, feature_gates: Any = None) -> None:
        self.scenario = scenario
        self.scheduler = Scheduler(
            config if config is not None else scheduler_config(scenario),
            clock=FakeClock(),
            deterministic=True,
            feature_gates=_gates(feature_gates, scenario),
        )
        s = self.scheduler
        for node in scenario.nodes:
            s.add_node(node)
        for obj in scenario.other_objects():
            s.add_object(obj)
        for pod in scenario.pods:
            if pod.spec.node_name:
                s.add_pod(pod)
        # Pending pods already nominated exist in the cluster (queued, known to the
        # nominator) before their turn comes.
        self._added: set[str] = set()
        for pod in scenario.pending:
            if pod.status.nominated_node_name:
                s.add_pod(pod)
                self._added.add(pod.uid)

    def run(self) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for pod in self.scenario.pending:
            held = self.held_back(pod)
            if held is not None:
                results.append(held)
                continue
            allocated = self.allocated_claims(pod)
            r = self.attempt(pod, add=True)
            e = self.entry(r, retry=False)
            self.add_claims(e, r, allocated)
            results.append(e)
            if r.nominated_node and r.outcome != Outcome.Scheduled:
                allocated = self.allocated_claims(r.pod)
                r2 = self.attempt(r.pod, add=False)
                e2 = self.entry(r2, retry=True)
                self.add_claims(e2, r2, allocated)
                results.append(e2)
                r = r2
            if r.outcome != Outcome.Scheduled and not r.pod.status.nominated_node_name:
                self.scheduler.delete_pod(r.pod)
        return results

    def held_back(self, pod: Pod) -> dict[str, Any] | None:
        """Add the pod; if a PreEnqueue plugin holds it back, its entry (the pod gets no
        cycle and is not retried: it leaves the cluster)."""
        if pod.uid not in self._added:
            self.scheduler.add_pod(pod)
            self._added.add(pod.uid)
        held = self.pre_enqueue(pod)
        if held is not None:
            self.scheduler.delete_pod(pod)
        return held

    def pre_enqueue(self, pod: Pod) -> dict[str, Any] | None:
        """The entry of a pod that a PreEnqueue plugin (in profile order) holds back."""
        fwk = self.scheduler.framework_for(pod)
        if fwk is None:
            return None
        for pl in fwk.pre_enqueue_plugins:
            st = pl.pre_enqueue(pod)
            if st is None or st.code == Code.Success:
                continue
            e = self.empty_entry(pod.key)
            e["preEnqueue"] = {
                "code": st.code.name, "plugin": st.plugin or pl.name, "reasons": list(st.reasons),
            }
            return e
        return None

    def allocated_claims(self, pod: Pod) -> set[str]:
        """Keys of the pod's claims that are allocated before its attempt."""
        if not pod.spec.resource_claims:
            return set()
        claims, _ = pod_claims(pod, self.scheduler.objects)
        return {c.metadata.key for c in claims if c.status.allocation is not None}

    def add_claims(self, e: dict[str, Any], r: SchedulingResult, allocated: set[str]) -> None:
        """For a selected pod with claims: each claim's allocation after PreBind."""
        if r.outcome != Outcome.Scheduled:
            return
        objects = self.scheduler.objects
        claims: list[ResourceClaim] = []
        if r.pod.spec.resource_claims:
            claims, _ = pod_claims(r.pod, objects)
        ext = extended_resource_claim(r.pod, objects)
        if ext is not None:
            claims.append(ext)
        elif not r.pod.spec.resource_claims:
            return
        out: dict[str, Any] = {}
        for c in claims:
            alloc = c.status.allocation
            if alloc is None:
                continue
            devices = []
            for d in alloc.devices.results:
                dev: dict[str, Any] = {
                    "request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device,
                }
                if d.admin_access:
                    dev["adminAccess"] = True
                if d.share_id is not None:
                    dev["shared"] = True
                if d.consumed_capacity:
                    dev["consumedCapacity"] = {k: str(q) for k, q in d.consumed_capacity.items()}
                devices.append(dev)
            entry: dict[str, Any] = {"devices": devices}
            if alloc.node_selector is not None:
                entry["nodeSelector"] = encode(alloc.node_selector)
            entry["new"] = c.metadata.key not in allocated
            if c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
                entry["extendedResources"] = True
                entry["requests"] = [
                    {
                        "name": r.name,
                        "deviceClassName": r.exactly.device_class_name,
                        "count": r.exactly.count,
                    }
                    for r in c.spec.devices.requests
                    if r.exactly is not None
                ]
            out[c.metadata.key] = entry
        e["claims"] = out

    @staticmethod
    def empty_entry(key: str) -> dict[str, Any]:
        return {
            "pod": key, "preFilter": None, "feasibleNodes": [], "filterStatuses": {},
            "scores": {}, "totals": {}, "selected": None, "error": None, "postFilter": None,
        }

    def attempt(self, pod: Pod, *, add: bool) -> SchedulingResult:
        s = self.scheduler
        if add and pod.uid not in self._added:
            s.add_pod(pod)
        r = s.schedule_pod(pod)
        if r is None:
            raise RuntimeError(f"pod {pod.key} could not be scheduled: it is not pending")
        return r

    @staticmethod
    def entry(r: SchedulingResult, *, retry: bool) -> dict[str, Any]:
        e: dict[str, Any] = {"pod": r.pod.key}
        if retry:
            e["retry"] = True
        exp: Explanation | None = r.explanation
        e.update(
            preFilter=None, feasibleNodes=[], filterStatuses={}, scores={}, totals={},
            selected=None, error=None, postFilter=None,
        )
        if exp is not None:
            if exp.pre_filter is not None:
                e["preFilter"] = verdict_json(exp.pre_filter)
            e["feasibleNodes"] = list(exp.feasible)
            if not exp.nominated_fast_path:
                e["filterStatuses"] = {n: verdict_json(v) for n, v in sorted(exp.rejected.items())}
            if exp.batch_hint is not None:
                e["batchHint"] = exp.batch_hint
            if len(exp.feasible) > 1:
                e["scores"] = {
                    n: {
                        **{p: d.weighted for p, d in s.plugins.items()},
                        **s.extenders,
                    }
                    for n, s in exp.scores.items()
                }
                e["totals"] = {n: s.total for n, s in exp.scores.items()}
        if r.outcome == Outcome.Scheduled:
            e["selected"] = r.node
        else:
            e["error"] = r.message
            if r.post_filter_ran:
                e["postFilter"] = {
                    "nominatedNodeName": r.nominated_node,
                    "victims": sorted(v.key for v in r.victims),
                }
        return e
