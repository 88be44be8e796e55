"""The runtime's binding-cycle extension points (Reserve, Permit, PreBind, Bind, PostBind),
a part of the Framework (runtime.py) kept apart as kube-scheduler's framework.go groups them."""

from __future__ import annotations

import contextlib
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import SKIP, Code, Status, from_exception
from kschedlib.framework.status import is_success as _ok
from kschedlib.framework.waiting_pods import WaitingPod, WaitingPodsMap

MAX_PERMIT_TIMEOUT = 15 * 60.0
PRE_BIND_WAIT_KEY = "kschedlib/pre-bind-wait"
"""CycleState key: the index of the PreBind plugin a parked binding cycle waits at."""


def _pre_bind_failure(name: str, st: Status | None) -> Status:
    assert st is not None
    if st.is_rejected():
        return st.with_plugin(name)
    return Status.error(f'running PreBind plugin "{name}": {st.message()}', name)


class BindingPoints:
    """Reserve, Permit, PreBind, Bind and PostBind of the Framework (mixed into
    runtime.Framework)."""

    # Set by Framework.__init__.
    clock: Any
    pod_activator: Any
    waiting_pods: WaitingPodsMap
    reserve_plugins: list[Any]
    permit_plugins: list[Any]
    pre_bind_plugins: list[Any]
    bind_plugins: list[Any]
    post_bind_plugins: list[Any]

    # --- Reserve / Permit ---------------------------------------------------------------

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        for pl in self.reserve_plugins:
            st: Status | None
            try:
                st = pl.reserve(state, pod, node_name)
            except Exception as exc:
                st = from_exception(exc, pl.name)
            if not _ok(st):
                assert st is not None
                if st.is_rejected():
                    return st.with_plugin(pl.name)
                return Status.error(f'running Reserve plugin "{pl.name}": {st.message()}', pl.name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Unreserve reports nothing, as in Go: a raising plugin must not stop the others.
        for pl in reversed(self.reserve_plugins):
            with contextlib.suppress(Exception):
                pl.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Permit: a rejection or error stops at once; waits register a WaitingPod."""
        waits: dict[str, float] = {}
        for pl in self.permit_plugins:
            st: Status | None
            try:
                st, timeout = pl.permit(state, pod, node_name)
            except Exception as exc:
                st, timeout = from_exception(exc, pl.name), 0.0
            if _ok(st):
                continue
            assert st is not None
            if st.is_rejected():
                return st.with_plugin(pl.name)
            if st.code == Code.Wait:
                waits[pl.name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return Status.error(f'running Permit plugin "{pl.name}": {st.message()}', pl.name)
        if waits:
            self.waiting_pods.add(WaitingPod(pod, waits, self.clock.now()))
            return Status(
                Code.Wait, ("one or more plugins asked to wait and no plugin rejected pod",)
            )
        return None

    def wait_on_permit(self, pod: Pod) -> Status | None:
        """The permit verdict of a waiting pod: None (allowed or never waited), a rejection,
        or WAIT while some plugin has neither allowed nor timed out."""
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        wp.check_timeouts(self.clock.now())
        verdict = wp.verdict
        if verdict is None:
            return Status(Code.Wait)
        self.waiting_pods.remove(pod.uid)
        if verdict.code == Code.Success:
            return None
        return verdict

    # --- Binding ------------------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """RunPreBindPreFlights: None when some PreBind plugin has work to do, SKIP when none
        has, an error status when a pre-flight fails; skipping plugins are remembered."""
        result: Status | None = SKIP
        for pl in self.pre_bind_plugins:
            flight = getattr(pl, "pre_bind_pre_flight", None)
            if flight is None:
                result = None
                continue
            st: Status | None = flight(state, pod, node_name)
            if st is not None and st.code == Code.Skip:
                state.skip_pre_bind_plugins.add(pl.name)
                continue
            if _ok(st):
                result = None
                continue
            assert st is not None
            return Status.error(
                f'running PreBindPreFlight "{pl.name}": {st.message()}', pl.name
            )
        return result

    def activate(self, pods: Any) -> None:
        """Handle.Activate: move the given pods to activeQ (no-op without a queue)."""
        if self.pod_activator is not None:
            self.pod_activator(pods)

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """RunPreBindPlugins. A plugin may answer Wait (DynamicResources waiting for binding
        conditions): the cycle parks the pod and calls :meth:`resume_pre_bind` later."""
        return self._pre_bind_from(0, state, pod, node_name)

    def _pre_bind_from(
        self, first: int, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        for index in range(first, len(self.pre_bind_plugins)):
            pl = self.pre_bind_plugins[index]
            if pl.name in state.skip_pre_bind_plugins:
                continue
            st: Status | None
            try:
                st = pl.pre_bind(state, pod, node_name)
            except Exception as exc:
                st = from_exception(exc, pl.name)
            if (
                st is not None and st.code == Code.Wait
                and callable(getattr(pl, "pre_bind_wait", None))
            ):
                state[PRE_BIND_WAIT_KEY] = index
                return st.with_plugin(pl.name)
            if not _ok(st):
                return _pre_bind_failure(pl.name, st)
        return None

    def pre_bind_waiting_plugin(self, state: CycleState) -> str | None:
        """The PreBind plugin this cycle is parked at, or None."""
        index = state.get(PRE_BIND_WAIT_KEY)
        return self.pre_bind_plugins[index].name if isinstance(index, int) else None

    def resume_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Poll the PreBind plugin the pod waits at (its ``pre_bind_wait``); Wait while it
        still waits, else its failure or the rest of the PreBind plugins' verdict."""
        index = state.get(PRE_BIND_WAIT_KEY)
        if not isinstance(index, int):
            return None
        pl = self.pre_bind_plugins[index]
        st: Status | None
        try:
            st = pl.pre_bind_wait(state, pod, node_name)
        except Exception as exc:
            st = from_exception(exc, pl.name)
        if st is not None and st.code == Code.Wait:
            return st.with_plugin(pl.name)
        del state[PRE_BIND_WAIT_KEY]
        if not _ok(st):
            return _pre_bind_failure(pl.name, st)
        return self._pre_bind_from(index + 1, state, pod, node_name)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.bind_plugins:
            return SKIP
        st: Status | None = SKIP
        for pl in self.bind_plugins:
            try:
                st = pl.bind(state, pod, node_name)
            except Exception as exc:  # a raising plugin or host binder: the bind failed
                st = from_exception(exc, pl.name)
            if st is not None and st.code == Code.Skip:
                continue
            if not _ok(st):
                assert st is not None
                if st.is_rejected():
                    return st.with_plugin(pl.name)
                return Status.error(f'running Bind plugin "{pl.name}": {st.message()}', pl.name)
            return st
        return st

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # PostBind is informational: a raising plugin does not undo the binding.
        for pl in self.post_bind_plugins:
            with contextlib.suppress(Exception):
                pl.post_bind(state, pod, node_name)
