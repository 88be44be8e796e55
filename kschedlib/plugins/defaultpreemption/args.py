"""DefaultPreemptionArgs: how many candidate nodes preemption dry-runs, defaulted and validated
as kube-scheduler v1.35 does (config/v1 defaults, ValidateDefaultPreemptionArgs)."""

from __future__ import annotations

import random

import attrs

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@attrs.define(slots=True, frozen=True)
class DefaultPreemptionArgs:
    """Args of DefaultPreemption. ``rng`` (kube-scheduler's random offset into the potential
    nodes) and ``deterministic`` (offset 0) are library options, not configuration keys."""

    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
    rng: random.Random | None = attrs.field(
        default=None, eq=False, repr=False, metadata={"skip": True}
    )
    deterministic: bool = attrs.field(default=False, metadata={"skip": True})

    def validate(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        pct = self.min_candidate_nodes_percentage
        absolute = self.min_candidate_nodes_absolute
        if pct < 0 or pct > 100:
            errs.append(
                (
                    "minCandidateNodesPercentage",
                    f"Invalid value: {pct}: not in valid range [0, 100]",
                )
            )
        if absolute < 0:
            errs.append(
                (
                    "minCandidateNodesAbsolute",
                    f"Invalid value: {absolute}: not in valid range [0, inf)",
                )
            )
        if pct == 0 and absolute == 0:
            errs.append(
                (
                    "minCandidateNodesPercentage",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                )
            )
            errs.append(
                (
                    "minCandidateNodesAbsolute",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
                )
            )
        return errs
