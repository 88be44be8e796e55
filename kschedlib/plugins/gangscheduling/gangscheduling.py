"""GangScheduling (GangScheduling gate, alpha in v1.35): all-or-nothing scheduling of the pods
of a Workload pod group with a ``gang`` policy.

PreEnqueue keeps a pod out of the queue until its Workload exists and at least ``minCount``
pods of its group (and replica key) are known. Reserve/Unreserve track the group's assumed
pods. Permit holds assigned pods (activating the group's other pending pods) until ``minCount``
are assumed or scheduled, then allows all of them at once; when the group's deadline (5 minutes
after its first pod reached Permit) passes, every waiting pod of the group times out.
"""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.scheduling import Workload
from kschedlib.backend.workloadmanager import PodGroupKey, PodGroupState, WorkloadManager
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Code, Status

NAME = "GangScheduling"
MSG_WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"


def waiting_for_workload(name: str) -> str:
    return f'waiting for pods\'s workload "{name}" to appear in scheduling queue'


def missing_pod_group(group: str, workload: str) -> str:
    return f'pod group "{group}" doesn\'t exist for a workload "{workload}"'


def _same_group(pod: Pod, other: Pod) -> bool:
    a, b = pod.spec.workload_ref, other.spec.workload_ref
    if a is None or b is None:
        return False
    return pod.metadata.namespace == other.metadata.namespace and a == b


def is_schedulable_after_pod_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A pod of the same workload, group and replica key may complete the gang."""
    if not isinstance(new_obj, Pod):
        raise TypeError(f"expected Pod, got {type(new_obj).__name__}")
    return QueueingHint.Queue if _same_group(pod, new_obj) else QueueingHint.QueueSkip


def is_schedulable_after_workload_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """The pod's own Workload appeared."""
    if not isinstance(new_obj, Workload):
        raise TypeError(f"expected Workload, got {type(new_obj).__name__}")
    ref = pod.spec.workload_ref
    if ref is None:
        return QueueingHint.QueueSkip
    if new_obj.metadata.namespace == pod.metadata.namespace and new_obj.metadata.name == ref.name:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


class GangScheduling:
    """PreEnqueue, Reserve, Permit and EnqueueExtensions for gang pod groups."""

    __slots__ = ("handle", "manager")

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        manager = getattr(handle, "workload_manager", None)
        self.manager: WorkloadManager = manager if manager is not None else WorkloadManager()

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # The workloadRef and the Workload's pod groups are immutable: no Update events.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Add), is_schedulable_after_pod_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Workload, ActionType.Add),
                is_schedulable_after_workload_added,
            ),
        ]

    # --- helpers --------------------------------------------------------------------------

    def _workload(self, pod: Pod) -> Workload | None:
        ref = pod.spec.workload_ref
        assert ref is not None
        w = self.handle.objects.get_object("Workload", f"{pod.metadata.namespace}/{ref.name}")
        return w if isinstance(w, Workload) else None

    def _min_count(self, pod: Pod, workload: Workload) -> int | None:
        """The gang's minCount, or None for a basic group; KeyError when the Workload has no
        such group."""
        ref = pod.spec.workload_ref
        assert ref is not None
        group = workload.pod_group(ref.pod_group)
        if group is None:
            raise KeyError(missing_pod_group(ref.pod_group, workload.metadata.name))
        if group.policy.gang is None:
            return None
        return group.policy.gang.min_count

    # --- PreEnqueue ------------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        ref = pod.spec.workload_ref
        if ref is None:
            return None
        workload = self._workload(pod)
        if workload is None:
            return Status(Code.UnschedulableAndUnresolvable, (waiting_for_workload(ref.name),))
        try:
            min_count = self._min_count(pod, workload)
        except KeyError as exc:
            return Status(Code.UnschedulableAndUnresolvable, (str(exc.args[0]),))
        if min_count is None:
            return None
        st = self.manager.state_for(pod)
        if st is None or st.all_pods_count() < min_count:
            return Status(Code.UnschedulableAndUnresolvable, (MSG_WAITING_FOR_QUORUM,))
        return None

    # --- Reserve ---------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.spec.workload_ref is not None:
            self.manager.assume_pod(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if pod.spec.workload_ref is not None:
            self.manager.forget_pod(pod)

    # --- Permit ----------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        ref = pod.spec.workload_ref
        if ref is None:
            return None, 0.0
        workload = self._workload(pod)
        if workload is None:
            return Status.error(
                f"failed to get workload {pod.metadata.namespace}/{ref.name}: not found"
            ), 0.0
        try:
            min_count = self._min_count(pod, workload)
        except KeyError as exc:
            return Status.error(str(exc.args[0])), 0.0
        if min_count is None:
            return None, 0.0
        st = self.manager.state_for(pod)
        if st is None:
            return Status.error(f"pod group of {pod.key} is not known to the scheduler"), 0.0
        if st.scheduled_pods_count() < min_count:
            self.handle.activate(st.unscheduled_pods())
            timeout = st.scheduling_timeout(self.handle.clock.now())
            return Status(Code.Wait, (MSG_WAITING_AT_PERMIT,)), timeout
        for uid in sorted(st.assumed_pods):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0.0

    # --- reporting -------------------------------------------------------------------------

    def describe(self, pod: Pod) -> str:
        """Where the pod's gang stands: known/scheduled pods against minCount, the deadline."""
        key = PodGroupKey.of(pod)
        if key is None:
            return ""
        workload = self._workload(pod)
        if workload is None:
            return f"gang {key}: workload {key.workload_name!r} does not exist yet"
        try:
            min_count = self._min_count(pod, workload)
        except KeyError as exc:
            return f"gang {key}: {exc.args[0]}"
        if min_count is None:
            return f"pod group {key} has the basic policy"
        st: PodGroupState | None = self.manager.get(key)
        known = 0 if st is None else st.all_pods_count()
        done = 0 if st is None else st.scheduled_pods_count()
        if known < min_count:
            return (
                f"gang {key}: quorum not met, {known} of minCount {min_count} pods exist, "
                f"waiting for {min_count - known} more"
            )
        text = (
            f"gang {key}: {done} of minCount {min_count} pods scheduled, "
            f"waiting for {max(min_count - done, 0)} more"
        )
        if st is not None and st.scheduling_deadline is not None and done < min_count:
            left = st.scheduling_deadline - self.handle.clock.now()
            text += f"; the group times out in {max(left, 0.0):g}s"
        return text


def new(args: Any, handle: Any) -> GangScheduling:
    return GangScheduling(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
