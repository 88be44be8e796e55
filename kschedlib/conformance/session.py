"""Run a scenario's pending pods one after another, recording what the scheduler decided,
in the shape of the conformance expectations."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.backend.snapshot import Snapshot
from kschedlib.config.loader import load_config
from kschedlib.conformance.scenario import Scenario
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import FitError, NoNodesAvailableError
from kschedlib.framework.handle import FakeClock, ObjectStore
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.schedule_one import SchedulingAlgorithm, SchedulingError


def status_json(st: Status) -> dict[str, Any]:
    return {"code": st.code.name, "plugin": st.plugin or None, "reasons": list(st.reasons)}


class _Host:
    """Host hooks and binder of the session: deletions and bindings take effect at once."""

    def __init__(self, session: ScenarioSession) -> None:
        self.session = session
        self.deleted: list[Pod] = []

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append(pod)
        self.session.remove_running(pod)

    def clear_nominated_node_name(self, pod: Pod) -> None:
        self.session.nominated.pop(pod.uid, None)

    def bind(self, pod: Pod, node_name: str) -> None:
        self.session.bind(pod, node_name)


class _Nominator:
    def __init__(self, session: ScenarioSession) -> None:
        self.session = session

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [
            PodInfo.of(p)
            for p in self.session.nominated.values()
            if p.status.nominated_node_name == node_name
        ]


class ScenarioSession:
    """Schedules a scenario's pending pods in order, binding each selected pod at once and
    retrying a preemptor once on its nominated node, as the corpus generator did."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        raw_cfg = dict(scenario.config) if scenario.config else {}
        profiles = raw_cfg.get("profiles") or []
        if profiles:
            raw_cfg["profiles"] = [profiles[0]]
        if "percentageOfNodesToScore" not in raw_cfg:
            raw_cfg["percentageOfNodesToScore"] = 100
        self.config = load_config(raw_cfg)
        self.objects = ObjectStore()
        for obj in scenario.other_objects():
            self.objects.upsert(obj)
        self.running: dict[str, Pod] = {p.uid: p for p in scenario.pods if p.spec.node_name}
        self.nominated: dict[str, Pod] = {}
        self.host = _Host(self)
        self.fwk = Framework(
            self.config.profiles[0],
            in_tree_registry(),
            objects=self.objects,
            clock=FakeClock(),
            host=self.host,
            binder=self.host,
            nominator=_Nominator(self),
            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
        )
        self.algorithm = SchedulingAlgorithm(
            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
            deterministic=True,
        )

    def remove_running(self, pod: Pod) -> None:
        self.running.pop(pod.uid, None)

    def bind(self, pod: Pod, node_name: str) -> None:
        self.nominated.pop(pod.uid, None)
        bound = pod.with_node_name(node_name).with_nominated_node_name("")
        self.running[bound.uid] = bound

    def snapshot(self) -> Snapshot:
        return Snapshot.from_objects(self.running.values(), self.scenario.nodes)

    def run(self) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for pod in self.scenario.pending:
            entry, retry_pod = self.schedule(pod, retry=False)
            results.append(entry)
            if retry_pod is not None:
                entry, _ = self.schedule(retry_pod, retry=True)
                results.append(entry)
        return results

    def schedule(self, pod: Pod, *, retry: bool) -> tuple[dict[str, Any], Pod | None]:
        entry: dict[str, Any] = {"pod": pod.key}
        if retry:
            entry["retry"] = True
        entry.update(
            preFilter=None, feasibleNodes=[], filterStatuses={}, scores={}, totals={},
            selected=None, error=None, postFilter=None,
        )
        snap = self.snapshot()
        self.fwk.set_snapshot(snap)
        state = CycleState()
        try:
            result = self.algorithm.schedule_pod(self.fwk, state, pod, snap, explain=True)
        except FitError as fit:
            return self._failed(entry, pod, state, fit, snap)
        except (NoNodesAvailableError, SchedulingError) as exc:
            entry["error"] = str(exc)
            return entry, None
        entry["feasibleNodes"] = sorted(ni.name for ni in result.feasible)
        if not result.nominated_fast_path:
            entry["filterStatuses"] = self._filter_statuses(result.diagnosis, result.feasible, snap)
        if len(result.feasible) > 1:
            entry["scores"] = {
                s.name: {p.name: p.score for p in s.scores} for s in result.scores
            }
            entry["totals"] = {s.name: s.total_score for s in result.scores}
        entry["selected"] = result.suggested_host
        self._binding_cycle(state, pod, result.suggested_host)
        return entry, None

    def _filter_statuses(self, diagnosis: Any, feasible: Any, snap: Snapshot) -> dict[str, Any]:
        if diagnosis.pre_filter_msg:
            return {}
        out = {name: status_json(st) for name, st in diagnosis.node_to_status.items()}
        absent = diagnosis.node_to_status.absent_nodes_status
        if absent.reasons:
            feasible_names = {ni.name for ni in feasible}
            for ni in snap.list():
                if ni.name not in out and ni.name not in feasible_names:
                    out[ni.name] = status_json(absent)
        return dict(sorted(out.items()))

    def _failed(
        self, entry: dict[str, Any], pod: Pod, state: CycleState, fit: FitError, snap: Snapshot
    ) -> tuple[dict[str, Any], Pod | None]:
        d = fit.diagnosis
        if d.pre_filter_msg:
            st = d.node_to_status.absent_nodes_status
            entry["preFilter"] = status_json(st)
        entry["filterStatuses"] = self._filter_statuses(d, [], snap)
        retry_pod: Pod | None = None
        if self.fwk.has_post_filter_plugins():
            self.host.deleted = []
            result, pst = self.fwk.run_post_filter_plugins(state, pod, d.node_to_status)
            d.post_filter_msg = pst.message() if pst is not None else ""
            nominated = result.nominated_node_name if result is not None else ""
            entry["postFilter"] = {
                "nominatedNodeName": nominated or None,
                "victims": sorted(p.key for p in self.host.deleted),
            }
            if nominated and (pst is None or pst.code == Code.Success):
                retry_pod = pod.with_nominated_node_name(nominated)
                self._nominate(retry_pod)
        entry["error"] = fit.message()
        return entry, retry_pod

    def _nominate(self, pod: Pod) -> None:
        node = pod.status.nominated_node_name
        prio = pod_priority(pod)
        for uid, other in list(self.nominated.items()):
            if other.status.nominated_node_name == node and pod_priority(other) < prio:
                del self.nominated[uid]
        self.nominated[pod.uid] = pod

    def _binding_cycle(self, state: CycleState, pod: Pod, host: str) -> None:
        fwk = self.fwk
        st = fwk.run_reserve_plugins_reserve(state, pod, host)
        if st is not None and st.code != Code.Success:
            fwk.run_reserve_plugins_unreserve(state, pod, host)
            return
        st = fwk.run_permit_plugins(state, pod, host)
        if st is not None and st.code not in (Code.Success, Code.Wait):
            fwk.run_reserve_plugins_unreserve(state, pod, host)
            return
        st = fwk.run_pre_bind_plugins(state, pod, host)
        if st is None or st.code == Code.Success:
            st = fwk.run_bind_plugins(state, pod, host)
        if st is not None and st.code not in (Code.Success,):
            fwk.run_reserve_plugins_unreserve(state, pod, host)
            return
        if pod.uid not in self.running:
            self.bind(pod, host)
        fwk.run_post_bind_plugins(state, pod, host)
