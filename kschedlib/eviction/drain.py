"""kubectl drain's pod filters and results (staging/src/k8s.io/kubectl/pkg/drain)."""

from __future__ import annotations

import attrs

from kschedlib.api.pod import Pod
from kschedlib.eviction.disruption import EvictionResponse, effective_phase
from kschedlib.eviction.qos import is_mirror_pod

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"

STATUS_OKAY = "Okay"
STATUS_SKIP = "Skip"
STATUS_WARNING = "Warning"
STATUS_ERROR = "Error"


@attrs.define(slots=True, frozen=True)
class DrainOptions:
    """kubectl drain flags (kubectl's defaults)."""

    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    grace_period_seconds: int = -1
    disable_eviction: bool = False


@attrs.define(slots=True, frozen=True)
class PodDeleteStatus:
    delete: bool
    reason: str
    message: str = ""


def _finished(pod: Pod) -> bool:
    return effective_phase(pod) in ("Succeeded", "Failed")


def _controller_kind(pod: Pod) -> str | None:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.kind
    return None


def daemonset_filter(pod: Pod, opts: DrainOptions) -> PodDeleteStatus:
    """The DaemonSet controller is assumed to exist (kschedlib keeps no DaemonSets)."""
    if _controller_kind(pod) != "DaemonSet" or _finished(pod):
        return PodDeleteStatus(True, STATUS_OKAY)
    if not opts.ignore_daemonsets:
        return PodDeleteStatus(False, STATUS_ERROR, DAEMONSET_FATAL)
    return PodDeleteStatus(False, STATUS_WARNING, DAEMONSET_WARNING)


def mirror_pod_filter(pod: Pod, opts: DrainOptions) -> PodDeleteStatus:
    if is_mirror_pod(pod):
        return PodDeleteStatus(False, STATUS_SKIP)
    return PodDeleteStatus(True, STATUS_OKAY)


def local_storage_filter(pod: Pod, opts: DrainOptions) -> PodDeleteStatus:
    if not any(v.empty_dir is not None for v in pod.spec.volumes) or _finished(pod):
        return PodDeleteStatus(True, STATUS_OKAY)
    if not opts.delete_emptydir_data:
        return PodDeleteStatus(False, STATUS_ERROR, LOCAL_STORAGE_FATAL)
    return PodDeleteStatus(True, STATUS_WARNING, LOCAL_STORAGE_WARNING)


def unreplicated_filter(pod: Pod, opts: DrainOptions) -> PodDeleteStatus:
    if _finished(pod) or _controller_kind(pod) is not None:
        return PodDeleteStatus(True, STATUS_OKAY)
    if opts.force:
        return PodDeleteStatus(True, STATUS_WARNING, UNMANAGED_WARNING)
    return PodDeleteStatus(False, STATUS_ERROR, UNMANAGED_FATAL)


FILTERS = (daemonset_filter, mirror_pod_filter, local_storage_filter, unreplicated_filter)


def pod_delete_status(pod: Pod, opts: DrainOptions) -> PodDeleteStatus:
    """GetPodsForDeletion's verdict for one pod: the filters in order, stopping at the first
    that keeps the pod."""
    status = PodDeleteStatus(True, STATUS_OKAY)
    for f in FILTERS:
        status = f(pod, opts)
        if not status.delete:
            break
    return status


def filter_errors(verdicts: list[tuple[Pod, PodDeleteStatus]]) -> list[str]:
    """PodDeleteList.errors: one ``cannot delete <reason>: ns/a, ns/b`` per reason."""
    by_msg: dict[str, list[str]] = {}
    for pod, st in verdicts:
        if st.reason == STATUS_ERROR:
            by_msg.setdefault(st.message or "unexpected error", []).append(pod.key)
    return [f"cannot delete {msg}: {', '.join(keys)}" for msg, keys in by_msg.items()]


@attrs.define(slots=True, frozen=True)
class StuckPod:
    """A pod drain could not evict, with the API server's answer."""

    pod: Pod
    response: EvictionResponse
    message: str


@attrs.define(slots=True, frozen=True)
class DrainResult:
    """What ``kubectl drain <node>`` did."""

    node_name: str
    cordoned: bool
    evicted: tuple[EvictionResponse, ...] = ()
    skipped: tuple[tuple[Pod, str], ...] = ()
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    stuck: tuple[StuckPod, ...] = ()

    @property
    def completed(self) -> bool:
        """True when every pod that had to go was evicted ("node/<name> drained")."""
        return not self.errors and not self.stuck

    def report(self) -> str:
        lines = [f"node/{self.node_name} cordoned"]
        lines.extend(f"Warning: {w}" for w in self.warnings)
        if self.errors:
            lines.append(
                f'error: unable to drain node "{self.node_name}" due to error: '
                f"[{', '.join(self.errors)}], continuing command..."
            )
            return "\n".join(lines)
        for r in self.evicted:
            ns, name = r.pod_key.split("/", 1)
            lines.append(f"evicting pod {ns}/{name}")
        for s in self.stuck:
            lines.append(s.message)
        for r in self.evicted:
            lines.append(f"pod/{r.pod_key.split('/', 1)[1]} evicted")
        if self.completed:
            lines.append(f"node/{self.node_name} drained")
        return "\n".join(lines)
