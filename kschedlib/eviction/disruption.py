"""The API server's Eviction subresource (pkg/registry/core/pod/storage/eviction.go).

``evaluate_eviction`` answers as ``POST pods/<name>/eviction`` would: 200 (the pod is deleted
with its grace period; the PDB's ``disruptionsAllowed`` goes down), 429 (a PDB refuses it, or
its status is stale), 500 (several PDBs select the pod), 403 (a PDB in a state the handler
refuses). It returns the decision and the PDB's new status; the caller applies them.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.workloads import PodDisruptionBudget

MAX_DISRUPTED_POD_SIZE = 2000
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
PDB_VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS_MESSAGE = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"


@attrs.define(slots=True, frozen=True)
class EvictionResponse:
    """What the Eviction subresource answered (a metav1.Status)."""

    pod_key: str
    code: int
    reason: str
    message: str
    causes: tuple[str, ...] = ()
    pdb: str = ""
    deleted: bool = False
    grace_period_seconds: int | None = None
    retry_after_seconds: int | None = None
    explanation: str = ""

    @property
    def allowed(self) -> bool:
        return self.code == 200

    def error(self) -> str:
        """The error text a client (kubectl) prints for a refused eviction."""
        return self.message


def effective_phase(pod: Pod) -> str:
    """The pod's phase; a hand-written pod without one is Pending until it is bound and
    Running after (what the kubelet would report)."""
    if pod.status.phase:
        return pod.status.phase
    return "Running" if pod.spec.node_name else "Pending"


def is_pod_ready(pod: Pod) -> bool:
    """podutil.IsPodReady: a Ready condition with status True."""
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def can_ignore_pdb(pod: Pod) -> bool:
    """canIgnorePDB: terminal, Pending or already terminating pods are deleted directly."""
    return (
        effective_phase(pod) in ("Succeeded", "Failed", "Pending")
        or pod.metadata.deletion_timestamp is not None
    )


def deletion_grace_period(pod: Pod, requested: int | None = None) -> int:
    """The grace period a delete gives: the request's, else the pod's (30 s by default);
    0 for pods not yet bound or already terminal (podStrategy.CheckGracefulDelete)."""
    period = requested
    if period is None:
        tgps = pod.spec.termination_grace_period_seconds
        period = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS if tgps is None else tgps
    if not pod.spec.node_name or effective_phase(pod) in ("Failed", "Succeeded"):
        period = 0
    return max(0, period)


def pdb_selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Whether ``pdb`` covers ``pod``, with policy/v1 semantics shared by the Eviction API and
    the disruption controller: same namespace; an empty selector ``{}`` selects every pod of
    the namespace, a missing or invalid one none."""
    if pdb.metadata.namespace != pod.metadata.namespace:
        return False
    sel = pdb.spec.selector
    if sel is None:
        return False
    try:
        matcher = sel.as_selector()
    except Exception:  # an invalid selector matches nothing
        return False
    return bool(matcher.matches(pod.metadata.labels))


def matching_pdbs(pod: Pod, pdbs: Iterable[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    """getPodDisruptionBudgets: the budgets that select the pod (``pdb_selects``)."""
    out = [pdb for pdb in pdbs if pdb_selects(pdb, pod)]
    return sorted(out, key=lambda p: p.metadata.name)


def _too_many(pdb: str, cause: str, retry: int) -> EvictionResponse:
    return EvictionResponse("", 429, "TooManyRequests", PDB_VIOLATION_MESSAGE, (cause,), pdb,
                            retry_after_seconds=retry)


def check_and_decrement(
    pod: Pod, pdb: PodDisruptionBudget, now: float, dry_run: bool = False
) -> tuple[EvictionResponse | None, PodDisruptionBudget]:
    """checkAndDecrement: refuse (429/403) or take one disruption from the budget."""
    name = pdb.metadata.name
    st = pdb.status
    if st.observed_generation < pdb.metadata.generation:
        return _too_many(name, f"The disruption budget {name} is still being processed by the server.", 10), pdb
    if st.disruptions_allowed < 0:
        return EvictionResponse(
            "", 403, "Forbidden",
            f'poddisruptionbudgets.policy "{name}" is forbidden: pdb disruptions allowed is negative',
            pdb=name), pdb
    if len(st.disrupted_pods) > MAX_DISRUPTED_POD_SIZE:
        return EvictionResponse(
            "", 403, "Forbidden",
            f'poddisruptionbudgets.policy "{name}" is forbidden: DisruptedPods map too big - too many '
            "evictions not confirmed by PDB controller", pdb=name), pdb
    if st.disruptions_allowed == 0:
        cause = (f"The disruption budget {name} needs {st.desired_healthy} healthy pods and has "
                 f"{st.current_healthy} currently")
        return _too_many(name, cause, 0), pdb
    if dry_run:
        return None, pdb
    stamp = _dt.datetime.fromtimestamp(now, tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    disrupted = dict(st.disrupted_pods)
    disrupted[pod.metadata.name] = stamp
    new_status = attrs.evolve(st, disruptions_allowed=st.disruptions_allowed - 1,
                              disrupted_pods=disrupted)
    return None, attrs.evolve(pdb, status=new_status)


def evaluate_eviction(
    pod: Pod,
    pdbs: Iterable[PodDisruptionBudget],
    now: float,
    grace_period_seconds: int | None = None,
    dry_run: bool = False,
) -> tuple[EvictionResponse, PodDisruptionBudget | None]:
    """The Eviction subresource's answer for ``pod`` and the PDB to store (None: unchanged)."""
    key = pod.key
    grace = deletion_grace_period(pod, grace_period_seconds)
    if can_ignore_pdb(pod):
        why = ("the pod is terminating" if pod.metadata.deletion_timestamp is not None
               else f"the pod is {effective_phase(pod)}")
        return EvictionResponse(key, 200, "", "", deleted=not dry_run, grace_period_seconds=grace,
                                explanation=f"{why}: deleted without checking disruption budgets"), None
    matching = matching_pdbs(pod, pdbs)
    if len(matching) > 1:
        names = ", ".join(p.metadata.name for p in matching)
        return EvictionResponse(key, 500, "InternalError", MULTIPLE_PDBS_MESSAGE,
                                explanation=f"PodDisruptionBudgets {names} select the pod"), None
    if not matching:
        return EvictionResponse(key, 200, "", "", deleted=not dry_run, grace_period_seconds=grace,
                                explanation="no PodDisruptionBudget selects the pod"), None
    pdb = matching[0]
    name = pdb.metadata.name
    if not is_pod_ready(pod):
        policy = pdb.spec.unhealthy_pod_eviction_policy
        if policy == "AlwaysAllow":
            return EvictionResponse(
                key, 200, "", "", pdb=name, deleted=not dry_run, grace_period_seconds=grace,
                explanation=f"the pod is not Ready and {name} has unhealthyPodEvictionPolicy "
                "AlwaysAllow: deleted without taking a disruption"), None
        st = pdb.status
        if st.current_healthy >= st.desired_healthy and st.desired_healthy > 0:
            return EvictionResponse(
                key, 200, "", "", pdb=name, deleted=not dry_run, grace_period_seconds=grace,
                explanation=f"the pod is not Ready and {name} is healthy ({st.current_healthy} of "
                f"{st.desired_healthy} desired): deleted without taking a disruption"), None
    refused, updated = check_and_decrement(pod, pdb, now, dry_run)
    if refused is not None:
        return attrs.evolve(refused, pod_key=key,
                            explanation=f"{name}: {refused.causes[0] if refused.causes else refused.message}"), None
    left = updated.status.disruptions_allowed
    return EvictionResponse(
        key, 200, "", "", pdb=name, deleted=not dry_run, grace_period_seconds=grace,
        explanation=f"{name} allowed the disruption ({left} left)"), (None if dry_run else updated)


# ---------------------------------------------------------------------- the disruption controller

DELETION_TIMEOUT_SECONDS = 120.0


def _parse_time(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, _dt.datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with rounding up; ValueError when invalid."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value}")
    pct = int(value[:-1])
    return -(-(pct * total) // 100)


def pdb_pods(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> list[Pod]:
    """getPodsForPdb: the namespace's pods its selector matches (``pdb_selects``)."""
    return [p for p in pods if pdb_selects(pdb, p)]


def pdb_status(
    pdb: PodDisruptionBudget,
    pods: Iterable[Pod],
    now: float,
    scale_of: Callable[[Pod], tuple[str, int] | None] | None = None,
) -> PodDisruptionBudget:
    """The disruption controller's sync of one PDB: expected pods, desired and current
    healthy, disruptions allowed, the disrupted-pods map pruned of expired entries.

    ``scale_of(pod)`` gives the (controller UID, replicas) of a pod's controller for
    percentages and maxUnavailable; without it a controller's scale is its number of pods.
    """
    matched = pdb_pods(pdb, pods)
    spec = pdb.spec
    try:
        expected, desired = _expected_and_desired(spec.max_unavailable, spec.min_available,
                                                  matched, scale_of)
    except ValueError:
        # failSafe: an unusable budget allows no disruption
        return attrs.evolve(pdb, status=attrs.evolve(pdb.status, disruptions_allowed=0))
    disrupted: dict[str, Any] = {}
    for p in matched:
        if p.metadata.deletion_timestamp is not None:
            continue
        stamp = pdb.status.disrupted_pods.get(p.metadata.name)
        at = _parse_time(stamp)
        if stamp is None or at is None:
            continue
        if at + DELETION_TIMEOUT_SECONDS >= now:
            disrupted[p.metadata.name] = stamp
    healthy = 0
    for p in matched:
        if p.metadata.deletion_timestamp is not None:
            continue
        at = _parse_time(disrupted.get(p.metadata.name))
        if at is not None and at + DELETION_TIMEOUT_SECONDS > now:
            continue
        if is_pod_ready(p):
            healthy += 1
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status = attrs.evolve(
        pdb.status, observed_generation=pdb.metadata.generation, disruptions_allowed=allowed,
        current_healthy=healthy, desired_healthy=desired, expected_pods=expected,
        disrupted_pods=disrupted,
    )
    return attrs.evolve(pdb, status=status)


def _expected_and_desired(
    max_unavailable: int | str | None,
    min_available: int | str | None,
    pods: list[Pod],
    scale_of: Callable[[Pod], tuple[str, int] | None] | None,
) -> tuple[int, int]:
    def expected_scale() -> int:
        scales: dict[str, int] = {}
        counts: dict[str, int] = {}
        for p in pods:
            ref = next((r for r in p.metadata.owner_references if r.controller), None)
            if ref is None:
                continue  # unmanaged pods are left out
            given = scale_of(p) if scale_of is not None else None
            if given is not None:
                scales[given[0]] = given[1]
                continue
            uid = ref.uid or f"{ref.kind}/{ref.name}"
            counts[uid] = counts.get(uid, 0) + 1
        return sum(scales.values()) + sum(counts.values())

    if max_unavailable is not None:
        expected = expected_scale()
        desired = max(0, expected - _scaled(max_unavailable, expected))
        return expected, desired
    if min_available is not None:
        if isinstance(min_available, int):
            return len(pods), min_available
        expected = expected_scale()
        return expected, _scaled(min_available, expected)
    return 0, 0
