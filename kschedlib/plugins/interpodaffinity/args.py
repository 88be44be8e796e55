"""InterPodAffinityArgs, defaulted and validated as kube-scheduler v1.35 does."""

from __future__ import annotations

import attrs

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


@attrs.define(slots=True, frozen=True)
class InterPodAffinityArgs:
    """Args of InterPodAffinity: the score weight existing pods' required affinity gives to
    the pods it selects, and whether to ignore existing pods' preferred terms for pods
    without inter-pod affinity of their own."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self) -> list[tuple[str, str]]:
        w = self.hard_pod_affinity_weight
        if MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
            return []
        msg = f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}-{MAX_HARD_POD_AFFINITY_WEIGHT}]"
        return [("hardPodAffinityWeight", f"Invalid value: {w}: {msg}")]
