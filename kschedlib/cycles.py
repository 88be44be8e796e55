"""The scheduling and binding cycles of one pod (kube-scheduler's ScheduleOne in schedule_one.go);
the algorithm they run (filter, score, select) is in :mod:`kschedlib.schedule_one`."""

from __future__ import annotations

import contextlib
import time

from kschedlib.api.pod import Pod
from kschedlib.backend.queue.nominator import CLEAR_NOMINATED_NODE, NominatingInfo, NominatingMode
from kschedlib.backend.queue.queue_events import (
    EVENT_ASSIGNED_POD_DELETE,
)
from kschedlib.errors import CacheError, KSchedError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code, Status, from_exception
from kschedlib.results import (
    Event,
    Explanation,
    Outcome,
    SchedulingResult,
)
from kschedlib.schedule_one import SchedulingError
from kschedlib.scheduler_base import SchedulerBase, _PendingBinding


class SchedulingCycles(SchedulerBase):
    """ScheduleOne: pop a pod, run its scheduling cycle, then its binding cycle."""

    # ------------------------------------------------------------------ the loop

    def run(self, until_idle: bool = True, max_cycles: int | None = None) -> list[SchedulingResult]:
        """Schedule until no pod is ready (and none waits at Permit with a verdict), or for
        ``max_cycles`` attempts."""
        results: list[SchedulingResult] = []
        cycles = 0
        while max_cycles is None or cycles < max_cycles:
            self.tick()
            resumed = self.resume_waiting()
            results.extend(resumed)
            r = self.schedule_one()
            if r is None:
                if not resumed:
                    break
                continue
            results.append(r)
            cycles += 1
            if not until_idle and cycles >= 1 and max_cycles is None:
                break
        return results

    def schedule_one(self) -> SchedulingResult | None:
        """Pop one pod and run its scheduling cycle (and binding cycle unless it waits at
        Permit). Returns None when no pod is ready."""
        while True:
            qpi = self.queue.pop()
            if qpi is None:
                return None
            pod = self._pending.get(qpi.pod.uid, qpi.pod)
            fwk = self.framework_for(pod)
            if fwk is None or pod.metadata.deletion_timestamp is not None or pod.uid not in self._pending:
                self.queue.done(pod.uid)
                continue
            if qpi.pod is not pod:
                qpi.pod_info.update(pod)
            return self._schedule(fwk, qpi)

    def schedule_pod(self, pod: Pod | str) -> SchedulingResult | None:
        """Run a scheduling cycle for one given pending pod now, whatever its place in the
        queue (what-if checks, harnesses). None when the pod is not pending or is gated."""
        found = self._find_pod(pod)
        if found is None or found.uid not in self._pending:
            return None
        current = self._pending[found.uid]
        fwk = self.framework_for(current)
        if fwk is None:
            return None
        qpi = self.queue.pop_pod(current)
        if qpi is None:
            return None
        if qpi.pod is not current:
            qpi.pod_info.update(current)
        return self._schedule(fwk, qpi)

    def _schedule(self, fwk: Framework, qpi: QueuedPodInfo) -> SchedulingResult:
        """One scheduling cycle; whatever goes wrong inside it (an error in kschedlib itself
        included) ends as an Error attempt with the pod requeued, never a lost pod."""
        start = time.perf_counter()
        self._in_cycle = None
        batch = self._batch = (
            None if self.batching is None else self.batching.for_profile(fwk.profile_name)
        )
        if batch is not None:
            batch.begin(self.queue.scheduling_cycle())
        try:
            r = self._scheduling_cycle(fwk, qpi, start)
        except Exception as exc:
            r = self._internal_error(fwk, qpi, exc, start)
        finally:
            self._in_cycle = None
            self._batch = None
        if batch is not None:
            # The result was built in this cycle and is not seen yet: set the field in place
            # (what attrs' own __init__ does for frozen classes) rather than copy it.
            object.__setattr__(r, "batch", batch.outcome)
        return r

    def _internal_error(
        self, fwk: Framework, qpi: QueuedPodInfo, exc: Exception, start: float
    ) -> SchedulingResult:
        """An unexpected exception in a cycle: undo the assumption (Unreserve, forget the
        assumed pod) and handle it as an Error status (requeue with backoff, FailedScheduling)."""
        st = from_exception(exc)
        msg = f"internal error: {st.message()}"
        cycle = self._in_cycle
        self._in_cycle = None
        if cycle is not None:
            state, assumed, host = cycle
            self._waiting.pop(assumed.uid, None)
            with contextlib.suppress(Exception):
                fwk.waiting_pods.remove(assumed.uid)
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(Exception):
                self.cache.forget_pod(assumed)
        uid = qpi.pod.uid
        if uid not in self._pending and self._cached(qpi.pod) is None:
            # The error struck between leaving the queue and joining the cache: pending again.
            pod = qpi.pod.with_node_name("") if qpi.pod.spec.node_name else qpi.pod
            self._pending[uid] = pod
            self._pending_keys[pod.key] = uid
        try:
            return self._fail(fwk, qpi, Status(Code.Error, (msg,), "", exc),
                              CLEAR_NOMINATED_NODE, None, start, msg)
        except Exception:
            self._ensure_queued(qpi)
            self.events.append(
                Event("Warning", "FailedScheduling", qpi.pod.key, msg, self.clock.now())
            )
            return SchedulingResult(qpi.pod, Outcome.Error, None, msg, None, (), None)

    def _ensure_queued(self, qpi: QueuedPodInfo) -> None:
        """Last resort after a failed failure handling: the pod is pending again somewhere."""
        with contextlib.suppress(Exception):
            self.queue.done(qpi.pod.uid)
        pod = self._pending.get(qpi.pod.uid)
        if pod is None or pod.spec.node_name:
            return
        with contextlib.suppress(Exception):
            if not self.queue.where_is(pod):
                self.queue.add(pod)

    def _scheduling_cycle(
        self, fwk: Framework, qpi: QueuedPodInfo, start: float
    ) -> SchedulingResult:
        pod = qpi.pod
        state = CycleState()
        self._victims = []
        keys = self._explain_keys
        explain = self.explain_enabled or (keys is not None and pod.key in keys)
        try:
            self.cache.update_snapshot(self.snapshot)
        except KSchedError as exc:
            err = Status.error(exc)
            return self._fail(fwk, qpi, err, None, None, start, str(exc))
        try:
            result = self.algorithm.schedule_pod(
                fwk, state, pod, self.snapshot, explain=explain, batch=self._batch
            )
        except NoNodesAvailableError as exc:
            none = Status(Code.UnschedulableAndUnresolvable, (str(exc),))
            return self._fail(fwk, qpi, none, CLEAR_NOMINATED_NODE, None, start, str(exc))
        except FitError as fit:
            return self._fit_error(fwk, state, qpi, fit, start, explain)
        except SchedulingError as exc:
            part = exc.partial
            exp = (
                self._explain(fwk, pod, part.diagnosis, part)
                if part is not None and self.explain_enabled
                else None
            )
            return self._fail(
                fwk, qpi, Status.error(exc), CLEAR_NOMINATED_NODE, exp, start, str(exc)
            )
        explanation = self._explain(fwk, pod, result.diagnosis, result) if explain else None
        host = result.suggested_host
        assumed = pod.with_node_name(host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as exc:
            return self._fail(fwk, qpi, Status.error(exc), CLEAR_NOMINATED_NODE, explanation, start, str(exc))
        self._in_cycle = (state, assumed, host)
        self.queue.delete_nominated_pod_if_exists(assumed)
        st: Status | None = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if self._in_cycle is not None:  # a Reserve plugin may have amended the pod
            assumed = self._in_cycle[1]
        if st is not None and st.code != Code.Success:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail_single_node(fwk, qpi, st, host, explanation, start)
        st = fwk.run_permit_plugins(state, assumed, host)
        if st is not None and st.code not in (Code.Success, Code.Wait):
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail_single_node(fwk, qpi, st, host, explanation, start)
        pb = _PendingBinding(fwk, state, qpi, assumed, host, explanation)
        if st is not None and st.code == Code.Wait:
            if self._nnn_for_expectation:
                # The pod will wait on Permit: it is expected on ``host`` meanwhile.
                pb.assumed = assumed.with_nominated_node_name(host)
            self._waiting[pod.uid] = pb
            self.metrics.observe_attempt("waiting", time.perf_counter() - start)
            msg = self._waiting_message(fwk, assumed)
            return SchedulingResult(
                pb.assumed, Outcome.Waiting, host, msg, None, (), explanation
            )
        return self._binding_cycle(pb, start)

    def resume_waiting(self) -> list[SchedulingResult]:
        """Continue the binding cycles of pods whose Permit wait ended (allowed, rejected
        or timed out)."""
        out: list[SchedulingResult] = []
        for uid, pb in list(self._waiting.items()):
            verdict = pb.fwk.wait_on_permit(pb.assumed)
            if verdict is not None and verdict.code == Code.Wait:
                continue
            del self._waiting[uid]
            start = time.perf_counter()
            self._in_cycle = (pb.state, pb.assumed, pb.host)
            try:
                out.append(self._binding_cycle(pb, start, verdict))
            except Exception as exc:
                out.append(self._internal_error(pb.fwk, pb.qpi, exc, start))
            finally:
                self._in_cycle = None
        return out

    def _binding_cycle(
        self, pb: _PendingBinding, start: float, permit: Status | None = None
    ) -> SchedulingResult:
        """WaitOnPermit's verdict (``permit``), PreBind, Bind, PostBind; Unreserve and forget
        on failure."""
        fwk, state, assumed, host = pb.fwk, pb.state, pb.assumed, pb.host
        st = permit
        if (
            st is not None
            and st.is_rejected()
            and assumed.uid in self._pending
            and not self._pending[assumed.uid].spec.node_name
        ):
            # A rejection at WaitOnPermit fails as a FitError on the chosen node.
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(CacheError):
                self.cache.forget_pod(assumed)
            result = self._fail_single_node(fwk, pb.qpi, st, host, pb.explanation, start)
            # Deferred, and not for the pod itself: it stays unschedulable until an event.
            uid = assumed.uid
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
            )
            return result
        if (st is None or st.code == Code.Success) and self._nnn_for_expectation:
            flight = fwk.run_pre_bind_pre_flights(state, assumed, host)
            if flight is None:
                # PreBind has work to do: the pod is expected on ``host`` meanwhile.
                assumed = assumed.with_nominated_node_name(host)
                pb.assumed = assumed
            elif flight.code != Code.Skip:
                st = flight
        if st is None or st.code == Code.Success:
            st = fwk.run_pre_bind_plugins(state, assumed, host)
        if st is None or st.code == Code.Success:
            st = self._bind(fwk, state, assumed, host)
        if st is not None and st.code != Code.Success:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            with contextlib.suppress(CacheError):
                self.cache.forget_pod(assumed)
            rejected = st.is_rejected()
            if not rejected:
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, assumed, None
                )
            outcome = Outcome.Unschedulable if rejected else Outcome.BindFailed
            failed = self._fail(fwk, pb.qpi, st, CLEAR_NOMINATED_NODE, pb.explanation, start,
                                st.message(), outcome=outcome)
            if rejected:
                # Deferred, and not for the pod itself (handleBindingCycleError).
                uid = assumed.uid
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
                )
            return failed
        self.cache.finish_binding(assumed)
        # The binding is confirmed at once, as the informer's add of the assigned pod would.
        self._drop_pending(assumed)
        self.queue.done(assumed.uid)
        bound = assumed
        if assumed.status.nominated_node_name and self._clear_nnn_after_binding:
            bound = assumed.with_nominated_node_name("")
        self.cache.add_pod(bound)
        self.queue.assigned_pod_added(bound)
        if self._track_workloads:
            self.workload_manager.add_pod(bound)
        msg = f"Successfully assigned {assumed.key} to {host}"
        self.events.append(Event("Normal", "Scheduled", assumed.key, msg, self.clock.now()))
        fwk.run_post_bind_plugins(state, assumed, host)
        self.metrics.observe_attempt("scheduled", time.perf_counter() - start)
        successor = self._held.pop(assumed.key, None)
        if successor is not None:
            self.add_pod(successor)
        return SchedulingResult(bound, Outcome.Scheduled, host, msg, None, (), pb.explanation)

    def _binding_refused(self, pod: Pod, node: str, exc: Exception) -> None:
        """A binding made inside a transaction that the host's binder refused at commit: a
        bind failure, as outside a transaction: the pod leaves the node, is pending again
        and retried after backoff, and pods that did not fit may fit now. (What Reserve and
        PreBind wrote for it, a claim's allocation say, stays: its cycle ended long ago.)"""
        cached = self._cached(pod)
        fwk = self.framework_for(pod)
        if cached is None or cached.spec.node_name != node or fwk is None:
            return  # deleted or moved meanwhile
        start = time.perf_counter()
        self.workload_manager.delete_pod(cached)
        self.cache.remove_pod(cached)
        pending = cached.with_node_name("")
        if pending.status.nominated_node_name:
            pending = pending.with_nominated_node_name("")
        self._pending[pending.uid] = pending
        self._pending_keys[pending.key] = pending.uid
        if self._track_workloads:
            self.workload_manager.add_pod(pending)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, cached, None)
        qpi = self.queue.new_queued_pod_info(pending)
        qpi.attempts = 1
        msg = f'running Bind plugin "DefaultBinder": {from_exception(exc).message()}'
        self._fail(fwk, qpi, Status.error(msg), CLEAR_NOMINATED_NODE, None, start, msg,
                   outcome=Outcome.BindFailed)

    def _bind(self, fwk: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        for ext in self.extenders:
            if ext.is_binder() and ext.is_interested(pod):
                try:
                    ext.bind(pod, host)
                except Exception as exc:
                    return from_exception(exc, ext.name)
                return None
        return fwk.run_bind_plugins(state, pod, host)

    # ------------------------------------------------------------------ failures

    def _fit_error(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError, start: float,
        explain: bool = True,
    ) -> SchedulingResult:
        pod = qpi.pod
        nominating: NominatingInfo | None = None
        ran = fwk.has_post_filter_plugins()
        if ran:
            self.metrics.preemption_attempts += 1
            result, st = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
            fit.diagnosis.post_filter_msg = st.message() if st is not None else ""
            if result is not None:
                # An empty name clears an earlier nomination (a failed retry).
                nominating = NominatingInfo(result.nominated_node_name, NominatingMode.Override)
        explanation = self._explain(fwk, pod, fit.diagnosis, None) if explain else None
        self.metrics.preemption_victims += len(self._victims)
        message = fit.message()
        return self._fail(
            fwk, qpi, Status(Code.Unschedulable, (message,)), nominating, explanation, start,
            message, diagnosis=fit.diagnosis, post_filter_ran=ran,
        )

    def _fail_single_node(
        self, fwk: Framework, qpi: QueuedPodInfo, st: Status, host: str,
        explanation: Explanation | None, start: float,
    ) -> SchedulingResult:
        if st.is_rejected():
            d = Diagnosis()
            d.node_to_status.set(host, st)
            d.add_plugin_status(st)
            fit = FitError(qpi.pod, 1, d)
            return self._fail(fwk, qpi, st, CLEAR_NOMINATED_NODE, explanation, start,
                              fit.message(), diagnosis=d)
        return self._fail(fwk, qpi, st, CLEAR_NOMINATED_NODE, explanation, start, st.message())

    def _fail(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        st: Status,
        nominating: NominatingInfo | None,
        explanation: Explanation | None,
        start: float,
        message: str,
        *,
        diagnosis: Diagnosis | None = None,
        outcome: Outcome | None = None,
        post_filter_ran: bool = False,
    ) -> SchedulingResult:
        """handleSchedulingFailure: requeue as unschedulable, record the nomination and the
        FailedScheduling event."""
        pod = self._pending.get(qpi.pod.uid)
        victims = tuple(self._victims)
        self._victims = []
        if diagnosis is not None:
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(diagnosis.pending_plugins)
        else:  # an error: no plugin rejected the pod, so any event may help
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        nominated: str | None = None
        if pod is None or pod.spec.node_name:
            self.queue.done(qpi.pod.uid)
        else:
            before = pod
            if nominating is not None and nominating.nominating_mode == NominatingMode.Override:
                new = pod.with_nominated_node_name(nominating.nominated_node_name)
                if new != pod:
                    self._pending[pod.uid] = new
                    pod = new
                nominated = nominating.nominated_node_name or None
            qpi.pod_info.update(pod)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle())
            self.queue.add_nominated_pod(qpi.pod_info, nominating)
            # The status patch comes back as an update of the pod: a nominated node that
            # changed or was cleared requeues lower or equal priority pods (itself included).
            self.nominated_node_name_changed(before, pod)
        rejected = st.is_rejected()
        self.events.append(
            Event("Warning", "FailedScheduling", qpi.pod.key, message, self.clock.now())
        )
        self.metrics.observe_attempt(
            "unschedulable" if rejected else "error", time.perf_counter() - start
        )
        if explanation is not None:
            self.explanations[qpi.pod.key] = explanation
        final = outcome or (Outcome.Unschedulable if rejected else Outcome.Error)
        return SchedulingResult(
            pod or qpi.pod, final, None, message, nominated, victims, explanation, post_filter_ran
        )
