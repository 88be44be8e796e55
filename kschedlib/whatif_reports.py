"""Typed answers of the what-if questions: ``to_dict()`` for JSON, ``str()`` for people."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from kschedlib.results import Explanation

__all__ = [
    "CapacityReport",
    "DrainReport",
    "PodDrainResult",
    "RemovableNode",
    "RemovableNodesReport",
    "Verdict",
    "format_table",
]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with left-aligned columns."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@attrs.define(slots=True, frozen=True)
class Verdict:
    """Would a pod be scheduled now: where, or why not and what preemption would do."""

    pod: str
    schedulable: bool
    node: str | None
    message: str
    """``Successfully assigned ...`` or the FailedScheduling (FitError) text."""
    nominated_node: str | None = None
    """The node preemption would nominate (None when it would not help)."""
    victims: tuple[str, ...] = ()
    """Pods (namespace/name) preemption would evict."""
    outcome: str = ""
    explanation: Explanation | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "schedulable": self.schedulable,
            "node": self.node,
            "outcome": self.outcome,
            "message": self.message,
            "nominatedNode": self.nominated_node,
            "victims": list(self.victims),
            "explanation": self.explanation.to_dict() if self.explanation else None,
        }

    def __str__(self) -> str:
        if self.schedulable:
            return f"{self.pod}: schedulable on {self.node}"
        out = [f"{self.pod}: not schedulable: {self.message}"]
        if self.nominated_node:
            out.append(f"preemption would nominate {self.nominated_node}, evicting "
                       + (", ".join(self.victims) or "nothing"))
        return "\n".join(out)


@attrs.define(slots=True, frozen=True)
class CapacityReport:
    """cluster-capacity's answer: how many replicas of a pod fit, where, and why it stopped."""

    pod: str
    count: int
    distribution: dict[str, int]
    """Node name -> replicas placed there (nodes with none are left out)."""
    stop_reason: str
    """``limit`` when ``limit`` replicas fit, else the FitError of the first that did not."""
    limit: int | None = None
    replicas: tuple[tuple[str, str], ...] = ()
    """(replica name, node) in creation order."""
    batched: int = 0
    """Replicas placed by the batched loop (the others ran a full scheduling cycle)."""
    preemption_node: str | None = None
    """The node the first replica that does not fit would be nominated to by preempting
    lower-priority pods (None: preemption would not help); nothing is evicted."""
    preemption_victims: tuple[str, ...] = ()
    """The pods that preemption would evict for it (namespace/name)."""

    @property
    def limited(self) -> bool:
        return self.stop_reason == "limit"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "count": self.count,
            "limit": self.limit,
            "stopReason": self.stop_reason,
            "distribution": dict(sorted(self.distribution.items())),
            "replicas": [{"name": n, "node": node} for n, node in self.replicas],
            "preemption": None if self.preemption_node is None else {
                "node": self.preemption_node, "victims": list(self.preemption_victims),
            },
        }

    def summary(self) -> str:
        why = (
            f"limit of {self.limit} reached" if self.limited else f"stopped: {self.stop_reason}"
        )
        out = f"{self.count} replica(s) of {self.pod} fit on {len(self.distribution)} node(s); {why}"
        if self.preemption_node is not None:
            out += (
                f"; the next replica would fit on {self.preemption_node} by preempting "
                f"{', '.join(self.preemption_victims)}"
            )
        return out

    def __str__(self) -> str:
        rows = sorted(self.distribution.items(), key=lambda kv: (-kv[1], kv[0]))
        return self.summary() + "\n\n" + format_table(("NODE", "REPLICAS"), rows)


@attrs.define(slots=True, frozen=True)
class PodDrainResult:
    """One pod of a drained node: what happens to it and why."""

    pod: str
    node: str
    action: str
    """``moved`` (rescheduled to ``destination``), ``unschedulable`` (no room elsewhere),
    ``blocked`` (a drainability rule forbids eviction), ``stays`` (DaemonSet or mirror
    pod: not evicted), or ``ignored`` (terminal pod)."""
    reason: str = ""
    destination: str | None = None

    @property
    def blocking(self) -> bool:
        return self.action in ("blocked", "unschedulable")

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "action": self.action,
            "reason": self.reason,
            "destination": self.destination,
        }


@attrs.define(slots=True, frozen=True)
class DrainReport:
    """Can these nodes go: every pod on them classified and, if movable, rescheduled."""

    nodes: tuple[str, ...]
    pods: tuple[PodDrainResult, ...]
    missing_nodes: tuple[str, ...] = ()

    @property
    def success(self) -> bool:
        return not self.missing_nodes and not any(p.blocking for p in self.pods)

    @property
    def blockers(self) -> tuple[PodDrainResult, ...]:
        return tuple(p for p in self.pods if p.blocking)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes),
            "success": self.success,
            "missingNodes": list(self.missing_nodes),
            "pods": [p.to_dict() for p in self.pods],
        }

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for p in self.pods:
            counts[p.action] = counts.get(p.action, 0) + 1
        parts = ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "no pods"
        verdict = "can be drained" if self.success else "cannot be drained"
        head = f"{', '.join(self.nodes)}: {verdict} ({parts})"
        if self.missing_nodes:
            head += f"; unknown node(s): {', '.join(self.missing_nodes)}"
        return head

    def __str__(self) -> str:
        rows = [(p.pod, p.node, p.action, p.destination or "", p.reason) for p in self.pods]
        table = format_table(("POD", "NODE", "ACTION", "DESTINATION", "REASON"), rows)
        return self.summary() + ("\n\n" + table if rows else "")


@attrs.define(slots=True, frozen=True)
class RemovableNode:
    """A node that can go once the nodes ranked before it are gone."""

    node: str
    utilization: float
    """The node's requested share of allocatable (max of CPU and memory), 0..1."""
    moved_pods: int

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "utilization": self.utilization, "movedPods": self.moved_pods}


@attrs.define(slots=True, frozen=True)
class RemovableNodesReport:
    """Scale-down simulation: nodes removable one after another, and why the others are not."""

    removable: tuple[RemovableNode, ...]
    not_removable: dict[str, str]
    """Node -> the first reason it could not be drained (after the removals before it)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "removable": [r.to_dict() for r in self.removable],
            "notRemovable": dict(sorted(self.not_removable.items())),
        }

    def summary(self) -> str:
        return (
            f"{len(self.removable)} node(s) removable one after another; "
            f"{len(self.not_removable)} not removable"
        )

    def __str__(self) -> str:
        rows: list[tuple[Any, ...]] = [
            (r.node, "removable", f"{r.utilization:.2f}", r.moved_pods, "") for r in self.removable
        ]
        rows += [(n, "kept", "", "", why) for n, why in sorted(self.not_removable.items())]
        table = format_table(("NODE", "RESULT", "UTILIZATION", "MOVED", "REASON"), rows)
        return self.summary() + "\n\n" + table
