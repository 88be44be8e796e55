"""QueuedPodInfo: a pod in the scheduling queue with its attempt and backoff bookkeeping."""

from __future__ import annotations

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.events import ClusterEvent
from kschedlib.framework.types import PodInfo


@attrs.define(slots=True, eq=False)
class QueuedPodInfo:
    """framework.QueuedPodInfo: a queued pod and its attempt bookkeeping (times in clock seconds),
    owned by the queue, or by the scheduling cycle while in flight."""

    pod_info: PodInfo
    timestamp: float
    """When the pod was (re-)added to the queue; QueueSort and backoff start from it."""
    attempts: int = 0
    """Scheduling attempts so far (incremented at every pop)."""
    backoff_expiration: float | None = None
    """Cached end of backoff, aligned to the backoff ordering window; None = not computed."""
    unschedulable_count: int = 0
    """Attempts that ended with a rejection by some plugin: drives the backoff."""
    consecutive_errors_count: int = 0
    """Attempts in a row that ended with an error (no rejecting plugin): drives the backoff
    instead of ``unschedulable_count`` while non-zero."""
    initial_attempt_timestamp: float | None = None
    """When the pod first entered activeQ; never changed afterwards."""
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    """Plugins that rejected the pod (Unschedulable / UnschedulableAndUnresolvable) or gated it."""
    pending_plugins: set[str] = attrs.field(factory=set)
    """Plugins that returned Pending: a Queue hint from them skips backoff."""
    gating_plugin: str = ""
    """The PreEnqueue plugin currently gating the pod ("" = not gated)."""
    gating_plugin_events: tuple[ClusterEvent, ...] = ()
    """Events the gating plugin registered: only those can ungate the pod."""
    seq: int = 0
    """Arrival order of the pod's current ``timestamp`` in its queue: breaks QueueSort ties
    (equal priority and timestamp) so such pods pop in the order they were added."""
    epoch: int = attrs.field(default=0, eq=False, repr=False)
    """The queue epoch that owns this object; a queue copies a QueuedPodInfo of another epoch
    (shared with a fork) before changing it."""

    @classmethod
    def of(cls, pod: Pod, timestamp: float, *plugins: str) -> QueuedPodInfo:
        return cls(PodInfo.of(pod), timestamp, unschedulable_plugins=set(plugins))

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def uid(self) -> str:
        return self.pod_info.pod.uid

    @property
    def key(self) -> str:
        """``namespace/name``: the identity the queues index by."""
        return self.pod_info.pod.key

    def gated(self) -> bool:
        return self.gating_plugin != ""

    def rejector_plugins(self) -> set[str]:
        """unschedulable_plugins ∪ pending_plugins."""
        return self.unschedulable_plugins | self.pending_plugins

    def update(self, pod: Pod) -> None:
        """Point at a newer version of the same pod."""
        self.pod_info.update(pod)

    def deep_copy(self) -> QueuedPodInfo:
        """A copy whose sets and PodInfo can be changed without touching this one."""
        pi = self.pod_info
        new_pi = PodInfo(
            pi.pod,
            pi.required_affinity_terms,
            pi.required_anti_affinity_terms,
            pi.preferred_affinity_terms,
            pi.preferred_anti_affinity_terms,
        )
        return QueuedPodInfo(
            new_pi,
            self.timestamp,
            attempts=self.attempts,
            backoff_expiration=self.backoff_expiration,
            unschedulable_count=self.unschedulable_count,
            consecutive_errors_count=self.consecutive_errors_count,
            initial_attempt_timestamp=self.initial_attempt_timestamp,
            unschedulable_plugins=set(self.unschedulable_plugins),
            pending_plugins=set(self.pending_plugins),
            gating_plugin=self.gating_plugin,
            gating_plugin_events=self.gating_plugin_events,
            seq=self.seq,
        )

    def fork_copy(self) -> QueuedPodInfo:
        """Like ``deep_copy`` but keeping the PodInfo's computed resources (scheduler forks)."""
        pi = self.pod_info
        npi = _new_pod_info(PodInfo)
        for name in POD_INFO_FIELDS:  # every field, whatever PodInfo gains later
            object.__setattr__(npi, name, getattr(pi, name))
        new = _new_qpi(QueuedPodInfo)
        new.pod_info = npi
        new.timestamp = self.timestamp
        new.attempts = self.attempts
        new.backoff_expiration = self.backoff_expiration
        new.unschedulable_count = self.unschedulable_count
        new.consecutive_errors_count = self.consecutive_errors_count
        new.initial_attempt_timestamp = self.initial_attempt_timestamp
        new.unschedulable_plugins = set(self.unschedulable_plugins)
        new.pending_plugins = set(self.pending_plugins)
        new.gating_plugin = self.gating_plugin
        new.gating_plugin_events = self.gating_plugin_events
        new.seq = self.seq
        new.epoch = self.epoch
        return new

    def __repr__(self) -> str:
        return (
            f"QueuedPodInfo({self.key!r}, attempts={self.attempts}, "
            f"unschedulable={sorted(self.unschedulable_plugins)}, gating={self.gating_plugin!r})"
        )


_new_pod_info = PodInfo.__new__
POD_INFO_FIELDS = tuple(f.name for f in attrs.fields(PodInfo))
_new_qpi = QueuedPodInfo.__new__
# fork_copy lists every field: a new field must be added there too (a test checks).
FORK_COPIED_FIELDS = frozenset(f.name for f in attrs.fields(QueuedPodInfo))
