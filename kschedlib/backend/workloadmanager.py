"""The workload manager: which pods of each pod group (and replica key) the scheduler knows,
which are assumed at Reserve and which are scheduled, and each gang's Permit deadline.

Kept per Scheduler and fed by its event handlers (pods with ``spec.workloadRef``); read by the
GangScheduling plugin through the framework handle. Time comes from the injected clock.
"""

from __future__ import annotations

import attrs

from kschedlib.api.pod import Pod

DEFAULT_SCHEDULING_TIMEOUT_SECONDS = 300.0
"""How long a gang's pods wait at Permit for the quorum before all are rejected (v1.35)."""


@attrs.define(frozen=True, slots=True)
class PodGroupKey:
    """One instance of a pod group: namespace, workload, group name and replica key."""

    namespace: str
    workload_name: str
    pod_group: str
    replica_key: str = ""

    @classmethod
    def of(cls, pod: Pod) -> PodGroupKey | None:
        ref = pod.spec.workload_ref
        if ref is None:
            return None
        return cls(pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key)

    def __str__(self) -> str:
        base = f"{self.namespace}/{self.workload_name}/{self.pod_group}"
        return f"{base}[{self.replica_key}]" if self.replica_key else base


@attrs.define(slots=True, eq=False)
class PodGroupState:
    """Runtime state of one pod group instance (podGroupInfo)."""

    all_pods: dict[str, Pod] = attrs.field(factory=dict)
    assumed_pods: set[str] = attrs.field(factory=set)
    scheduled_pods: set[str] = attrs.field(factory=set)
    scheduling_deadline: float | None = None

    def all_pods_count(self) -> int:
        return len(self.all_pods)

    def scheduled_pods_count(self) -> int:
        """Pods assumed (past Reserve) or already assigned to a node."""
        return len(self.assumed_pods | self.scheduled_pods)

    def unscheduled_pods(self) -> dict[str, Pod]:
        done = self.assumed_pods | self.scheduled_pods
        return {uid: p for uid, p in self.all_pods.items() if uid not in done}

    def scheduling_timeout(self, now: float) -> float:
        """Seconds left before the gang times out; a new deadline starts when none is set or
        the previous one has passed (a new attempt to form the gang)."""
        if self.scheduling_deadline is None or self.scheduling_deadline <= now:
            self.scheduling_deadline = now + DEFAULT_SCHEDULING_TIMEOUT_SECONDS
        return self.scheduling_deadline - now


class WorkloadManager:
    """Pod group states by key (workloadmanager.Manager)."""

    __slots__ = ("_groups", "_key_of_uid")

    def __init__(self) -> None:
        self._groups: dict[PodGroupKey, PodGroupState] = {}
        self._key_of_uid: dict[str, PodGroupKey] = {}

    def copy_from(self, other: WorkloadManager) -> None:
        """Take a copy of ``other``'s pod groups (scheduler forks)."""
        self._groups = {
            k: attrs.evolve(
                g,
                all_pods=dict(g.all_pods),
                assumed_pods=set(g.assumed_pods),
                scheduled_pods=set(g.scheduled_pods),
            )
            for k, g in other._groups.items()
        }
        self._key_of_uid = dict(other._key_of_uid)

    def add_pod(self, pod: Pod) -> None:
        """A pod with a workloadRef appeared or changed (assigned pods count as scheduled)."""
        key = PodGroupKey.of(pod)
        if key is None:
            return
        st = self._groups.setdefault(key, PodGroupState())
        st.all_pods[pod.uid] = pod
        self._key_of_uid[pod.uid] = key
        if pod.spec.node_name:
            st.scheduled_pods.add(pod.uid)
            st.assumed_pods.discard(pod.uid)

    update_pod = add_pod

    def delete_pod(self, pod: Pod) -> None:
        key = self._key_of_uid.pop(pod.uid, None)
        if key is None:
            return
        st = self._groups.get(key)
        if st is None:
            return
        st.all_pods.pop(pod.uid, None)
        st.assumed_pods.discard(pod.uid)
        st.scheduled_pods.discard(pod.uid)
        if not st.all_pods:
            del self._groups[key]

    def assume_pod(self, pod: Pod) -> None:
        st = self.state_for(pod)
        if st is not None:
            st.assumed_pods.add(pod.uid)

    def forget_pod(self, pod: Pod) -> None:
        st = self.state_for(pod)
        if st is not None:
            st.assumed_pods.discard(pod.uid)

    def state_for(self, pod: Pod) -> PodGroupState | None:
        key = PodGroupKey.of(pod)
        return None if key is None else self._groups.get(key)

    def get(self, key: PodGroupKey) -> PodGroupState | None:
        return self._groups.get(key)

    def keys(self) -> list[PodGroupKey]:
        return sorted(self._groups, key=str)
