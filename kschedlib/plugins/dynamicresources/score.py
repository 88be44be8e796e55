"""Score: rank nodes by the prioritized-list subrequests their allocation used."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import Self

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.framework.status import Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.dynamicresources.base import DynamicResourcesBase
from kschedlib.plugins.dynamicresources.state import (
    FIRST_AVAILABLE_MAX,
    NAME,
    STATE_KEY,
    StateData,
    _not_found,
)
from kschedlib.plugins.helper import default_normalize_score, default_normalize_values


class ScoreMixin(DynamicResourcesBase):
    """Score and NormalizeScore."""

    __slots__ = ()

    def _score_node(self, s: StateData, node_name: str) -> tuple[int, Status | None]:
        if s.allocator is None:
            return 0, None
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return 0, None
        if len(allocations) < len(s.claims):
            return 0, Status.error(
                f"number of allocations {len(allocations)} is smaller than number of claims",
                NAME,
            )
        score = 0
        for i, claim in enumerate(s.claims):
            results = allocations[i].devices.results
            for r in claim.spec.devices.requests:
                if not r.first_available:
                    continue
                for res in results:
                    parent, _, sub = res.request.partition("/")
                    if parent != r.name or not sub:
                        continue
                    for j, sr in enumerate(r.first_available):
                        if sr.name == sub:
                            score += FIRST_AVAILABLE_MAX - j
                            break
                    break
        return score, None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return 0, _not_found()
        return self._score_node(s, node_info.name)

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (0 everywhere for pods without claims to allocate)."""
        s = state.get(STATE_KEY)
        if not isinstance(s, StateData):
            return [], _not_found()
        if s.allocator is None:
            return [0] * len(nodes), None
        out: list[int] = []
        for ni in nodes:
            v, st = self._score_node(s, ni.name)
            if st is not None:
                return [], st
            out.append(v)
        return out, None

    def score_extensions(self) -> Self:
        return self

    def normalize_score_values(
        self, state: CycleState, pod: Pod, values: list[int]
    ) -> Status | None:
        """normalize_score over plain scores in node order (in place)."""
        default_normalize_values(MAX_NODE_SCORE, False, values)
        return None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)
