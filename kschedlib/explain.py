"""Explanations of scheduling attempts and of pending pods (the Scheduler's explain room)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, eq, gt

from kschedlib.api.pod import Pod
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.runtime import Framework
from kschedlib.plugins.gangscheduling import MSG_WAITING_AT_PERMIT
from kschedlib.results import (
    Explanation,
    LazyScores,
    NodeScoreDetail,
    NodeVerdict,
    PluginScoreDetail,
)
from kschedlib.schedule_one import ScheduleResult
from kschedlib.scheduler_base import SchedulerBase

_NAME = attrgetter("name")


def _top_score_indices(
    names: Sequence[str], totals: Sequence[int], top: int, selected: str | None
) -> list[int]:
    """Indices of the ``top`` best-scored nodes (ties by name), ``selected`` always kept."""
    keep: list[int] = []
    n = len(names)
    if top > 0 and n:
        threshold = sorted(totals, reverse=True)[min(top, n) - 1]
        above = list(compress(range(n), map(gt, totals, repeat(threshold))))
        at = list(compress(range(n), map(eq, totals, repeat(threshold))))
        above.sort(key=lambda i: (-totals[i], names[i]))
        at.sort(key=names.__getitem__)
        keep = above + at[: top - len(above)]
    if selected and all(names[i] != selected for i in keep):
        pick = [names.index(selected)] if selected in names else []
        keep = [*keep[: max(top - 1, 0)], *pick]
    return keep


def _score_details(
    result: ScheduleResult, top: int | None, selected: str | None
) -> dict[str, NodeScoreDetail]:
    """The per-node score breakdown of a cycle's result (the ``top`` best nodes, or all)."""
    if result.totals is not None:
        names = list(map(_NAME, result.feasible))
        totals = result.totals
        extenders: list[dict[str, int]] | None = None
    else:
        names = [nps.name for nps in result.scores]
        totals = [nps.total_score for nps in result.scores]
        extenders = [{s.name: s.score for s in nps.scores} for nps in result.scores]
    b = result.breakdown
    indices: Iterable[int] = range(len(names))
    if top is not None:
        indices = _top_score_indices(names, totals, top, selected)
    scores: dict[str, NodeScoreDetail] = {}
    for i in indices:
        plugins: dict[str, PluginScoreDetail] = {}
        if b is not None:
            for p in b.plugins:
                plugins[p] = PluginScoreDetail(
                    b.raw_score(p, i), b.normalized_score(p, i), b.weights[p]
                )
        ext = {} if extenders is None else {
            k: v for k, v in extenders[i].items() if k not in plugins
        }
        scores[names[i]] = NodeScoreDetail(plugins, ext, totals[i])
    return scores


class Explanations(SchedulerBase):
    """Per-node explanations of attempts, and why a pod is still pending."""

    def why_pending(self, pod: Pod | str) -> str | None:
        """Why a pending or waiting pod is not bound yet: the gating PreEnqueue plugin's
        message, the Permit wait (with the gang's progress), the last FailedScheduling
        message, ``no profile for schedulerName "x"`` for a pod no profile schedules, or why
        a held pod does not exist yet; None for an unknown or bound pod."""
        found = self._find_pod(pod)
        if found is None:
            key = pod.key if isinstance(pod, Pod) else pod
            for after, held in self._held.items():
                if held.key == key or held.uid == key:
                    return f"not created yet: created once {after} is bound (OrderedReady)"
            return None
        pb = self._waiting.get(found.uid)
        if pb is not None:
            return self._waiting_message(pb.fwk, pb.assumed)
        foreign = self._foreign.get(found.uid)
        if foreign is not None:
            return f'no profile for schedulerName "{foreign.spec.scheduler_name}"'
        current = self._pending.get(found.uid)
        if current is None:
            return None
        fwk = self.framework_for(current)
        if fwk is not None:
            st = fwk.run_pre_enqueue_plugins(current)
            if st is not None:
                return f"{st.plugin}: {st.message()}" + self._gang_detail(fwk, current)
        failed = self.events.last_failure.get(current.key)
        return failed if failed is not None else "waiting in the scheduling queue"

    def _gang_detail(self, fwk: Framework, pod: Pod) -> str:
        pl = fwk.plugins.get("GangScheduling")
        describe = getattr(pl, "describe", None)
        if describe is None or pod.spec.workload_ref is None:
            return ""
        text = describe(pod)
        return f" ({text})" if text else ""

    def _waiting_message(self, fwk: Framework, pod: Pod) -> str:
        wp = fwk.get_waiting_pod(pod.uid)
        plugins = wp.get_pending_plugins() if wp is not None else []
        parts = []
        for name in plugins:
            pl = fwk.plugins.get(name)
            msg = MSG_WAITING_AT_PERMIT if name == "GangScheduling" else "waiting at Permit"
            parts.append(f"{name}: {msg}")
            if pl is not None and name == "GangScheduling":
                parts[-1] += self._gang_detail(fwk, pod)
        return "; ".join(parts) or "waiting at Permit"

    # ------------------------------------------------------------------ explanations

    def _explain(
        self, fwk: Framework, pod: Pod, d: Diagnosis, result: ScheduleResult | None
    ) -> Explanation:
        pre = None
        rejected: dict[str, NodeVerdict] = {}
        if d.pre_filter_msg:
            a = d.node_to_status.absent_nodes_status
            pre = NodeVerdict(a.plugin or None, a.code.name, a.reasons)
        else:
            for name, st in d.node_to_status.items():
                rejected[name] = NodeVerdict(st.plugin or None, st.code.name, st.reasons)
            absent = d.node_to_status.absent_nodes_status
            if absent.reasons:
                feasible = {ni.name for ni in (result.feasible if result else [])}
                for ni in self.snapshot.list():
                    if ni.name not in rejected and ni.name not in feasible:
                        rejected[ni.name] = NodeVerdict(None, absent.code.name, absent.reasons)
        scores: Mapping[str, NodeScoreDetail] = {}
        feasible_names: tuple[str, ...] = ()
        selected = None
        fast = False
        if result is not None:
            feasible_names = tuple(sorted(map(_NAME, result.feasible)))
            selected = result.suggested_host or None
            fast = result.nominated_fast_path
            top = self._explain_top_nodes
            if top is not None:  # a few nodes: built now, the cycle's columns let go
                scores = _score_details(result, top, selected)
            elif result.scores or result.totals is not None:
                scores = LazyScores(partial(_score_details, result, None, selected))
        batch = self._batch
        exp = Explanation(
            pod.key, fwk.profile_name, pre, rejected, feasible_names, scores, selected, fast,
            d.post_filter_msg,
            batch.outcome if batch else None,
            (batch.hint or None) if batch else None,
        )
        self.explanations[pod.key] = exp
        if self._explain_keys is not None and pod.key in self._explain_keys:
            self.explanation_history.setdefault(pod.key, []).append(exp)
        return exp

    def explain(self, pod: Pod | str) -> Explanation | None:
        """The breakdown of the last attempt for a pod (by object or namespace/name)."""
        key = pod.key if isinstance(pod, Pod) else pod
        return self.explanations.get(key)

    def explain_attempts(self, pod: Pod | str) -> list[Explanation]:
        """Every recorded attempt of a pod named in ``explain=`` (else the last one, if any)."""
        key = pod.key if isinstance(pod, Pod) else pod
        history = self.explanation_history.get(key)
        if history is not None:
            return list(history)
        last = self.explanations.get(key)
        return [] if last is None else [last]
