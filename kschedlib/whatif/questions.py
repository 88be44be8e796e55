"""``can_schedule``: one scheduling cycle of a pod in a fork, reported as a Verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedlib.api.pod import Pod, is_terminal
from kschedlib.errors import InvalidObjectError
from kschedlib.results import Outcome
from kschedlib.whatif_reports import Verdict

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler


def pending_in(fork: Scheduler, pod: Pod | str) -> Pod:
    """The pending version of ``pod`` in ``fork``, adding it when it is new there; raises
    InvalidObjectError for a pod that cannot be scheduled (bound, terminal, unknown key,
    or for a scheduler name no profile has)."""
    if isinstance(pod, str):
        found = fork._find_pod(pod)
        if found is None or found.uid not in fork._pending:
            raise InvalidObjectError(f"pod {pod}", "metadata.name", "is not a pending pod of this scheduler")
        return fork._pending[found.uid]
    if pod.uid in fork._pending:
        return fork._pending[pod.uid]
    if pod.spec.node_name:
        raise InvalidObjectError(f"pod {pod.key}", "spec.nodeName", "is set: the pod is already bound")
    if is_terminal(pod):
        raise InvalidObjectError(f"pod {pod.key}", "status.phase", "is terminal")
    if not fork.responsible_for(pod):
        raise InvalidObjectError(
            f"pod {pod.key}", "spec.schedulerName",
            f'"{pod.spec.scheduler_name}" is not a profile of this scheduler',
        )
    fork.add_pod(pod)
    return fork._pending[pod.uid]


def can_schedule(sched: Scheduler, pod: Pod | str) -> Verdict:
    """Run the pod's scheduling cycle (PostFilter included) in a fork of ``sched``."""
    fork = sched.fork()
    fork.explain_enabled = True
    target = pending_in(fork, pod)
    result = fork.schedule_pod(target)
    if result is None:
        return Verdict(
            target.key, False, None,
            "the pod is not ready for scheduling: a PreEnqueue plugin gates it",
            outcome="Gated",
        )
    ok = result.outcome in (Outcome.Scheduled, Outcome.Waiting)
    node = result.node if ok else None
    return Verdict(
        target.key,
        ok,
        node,
        result.message or (f"waiting at Permit on {node}" if result.outcome == Outcome.Waiting else ""),
        nominated_node=result.nominated_node,
        victims=tuple(v.key for v in result.victims),
        outcome=result.outcome.value,
        explanation=result.explanation,
    )
