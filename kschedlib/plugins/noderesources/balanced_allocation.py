"""NodeResourcesBalancedAllocation: favour nodes whose requested fractions of the configured
resources stay close to each other once the pod is placed."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.errors import ConfigError
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import SKIP, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.noderesources.args import NodeResourcesBalancedAllocationArgs
from kschedlib.plugins.noderesources.resource_allocation import (
    FractionScore,
    ResourceAllocationScorer,
    Term,
    is_best_effort,
)

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME

MAX_NODE_SCORE = 100


def balance_score(fractions: list[float]) -> int:
    """(1 - std dev of the fractions) * 100 in float64, truncated; std is |f1 - f2| / 2 for two
    resources, the population std dev for more, 0 for fewer."""
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        total = 0.0
        for f in fractions:
            total += f
        mean = total / float(n)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(n))
    return int((1 - std) * float(MAX_NODE_SCORE))


balanced_resource_scorer = FractionScore(balance_score)
"""balancedResourceScorer over (requested, allocatable, weights) vectors."""


class PreScoreState:
    """The pod's requests (no non-zero defaults) per configured resource, prepared as terms."""

    __slots__ = ("pod_requests", "terms")

    def __init__(self, pod_requests_list: list[int], terms: tuple[Term, ...]) -> None:
        self.pod_requests = pod_requests_list
        self.terms = terms

    def clone(self) -> PreScoreState:
        return self


class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin: PreScore (skips best-effort pods) and Score."""

    __slots__ = ("_scorer", "handle")

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: Any = None) -> None:
        self._scorer = ResourceAllocationScorer(
            NAME,
            args.resources,
            balanced_resource_scorer,
            use_requested=True,
            pod_level=features_of(handle).enable_pod_level_resources,
        )
        self.handle = handle

    @property
    def name(self) -> str:
        return NAME

    # Filter and raw Score depend only on the signed fragment and the NodeInfo.
    node_local = True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: the fields its Filter and Score read."""
        return tuple(self._scorer.pod_request_list(pod))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        reqs = self._scorer.pod_request_list(pod)
        if is_best_effort(reqs):
            # Scoring best-effort pods for balance would pile them onto one node.
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(reqs, self._scorer.terms(reqs)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            reqs = self._scorer.pod_request_list(pod)
            if is_best_effort(reqs):
                return 0, None
            s = PreScoreState(reqs, self._scorer.terms(reqs))
        return self._scorer.score(node_info, s.terms), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (same result as ``score`` per node)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            reqs = self._scorer.pod_request_list(pod)
            if is_best_effort(reqs):
                return [0] * len(nodes), None
            s = PreScoreState(reqs, self._scorer.terms(reqs))
        score, terms = self._scorer.score, s.terms
        return [score(ni, terms) for ni in nodes], None

    def score_extensions(self) -> None:
        return None


def new_balanced_allocation(
    args: NodeResourcesBalancedAllocationArgs | None, handle: Any
) -> BalancedAllocation:
    """Factory: validates the args as NewBalancedAllocation does."""
    args = args if args is not None else NodeResourcesBalancedAllocationArgs()
    errs = args.validate()
    if errs:
        raise ConfigError("; ".join(f"{path}: {msg}" for path, msg in errs))
    return BalancedAllocation(args, handle)
