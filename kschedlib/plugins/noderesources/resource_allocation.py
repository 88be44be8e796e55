"""resourceAllocationScorer: the per-node (requested, allocatable) vectors every resource
scoring strategy starts from, prepared once per pod so Score is a few lookups per node."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.quantity import Quantity
from kschedlib.api.resource import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NON_ZERO_DEFAULTS,
    is_scalar_resource,
    pod_requests,
)
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.noderesources.args import ResourceSpec

Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]
"""(requested, allocatable, weights) -> score, over the resources the node has (allocatable != 0)."""

KIND_CPU = 0
KIND_MEMORY = 1
KIND_EPHEMERAL_STORAGE = 2
KIND_SCALAR = 3

Term = tuple[int, str, int, int]
"""(kind, resource name, the pod's request, weight): one resource that may count for a node."""


def go_div(a: int, b: int) -> int:
    """int64 division truncating toward zero, as Go's ``/``."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def pod_resource_request_list(
    pod: Pod, resources: Sequence[ResourceSpec], use_requested: bool, pod_level: bool = True
) -> list[int]:
    """calculatePodResourceRequestList: the pod's request of each resource (milli for cpu).

    Unless ``use_requested``, containers missing a cpu/memory request count 100m / 200Mi;
    pod-level requests (spec.resources) override the containers' only when ``pod_level``.
    """
    reqs: Mapping[str, Quantity] = pod_requests(
        pod,
        non_missing=None if use_requested else NON_ZERO_DEFAULTS,
        skip_pod_level=not pod_level,
    )
    out: list[int] = []
    for spec in resources:
        q = reqs.get(spec.name)
        if q is None:
            out.append(0)
        elif spec.name == CPU:
            out.append(q.milli_value())
        else:
            out.append(q.value())
    return out


def prepare_terms(
    resources: Sequence[ResourceSpec], pod_requests_list: Sequence[int]
) -> tuple[Term, ...]:
    """The resources that can count for some node: cpu, memory, ephemeral-storage, and the
    scalar resources the pod requests (the others always score as absent)."""
    terms: list[Term] = []
    for spec, req in zip(resources, pod_requests_list, strict=True):
        name = spec.name
        if name == CPU:
            terms.append((KIND_CPU, name, req, spec.weight))
        elif name == MEMORY:
            terms.append((KIND_MEMORY, name, req, spec.weight))
        elif name == EPHEMERAL_STORAGE:
            terms.append((KIND_EPHEMERAL_STORAGE, name, req, spec.weight))
        elif req != 0 and is_scalar_resource(name):
            terms.append((KIND_SCALAR, name, req, spec.weight))
    return tuple(terms)


@attrs.define(slots=True, frozen=True)
class WeightedMean:
    """How LeastAllocated, MostAllocated and RequestedToCapacityRatio combine resources:
    a weighted mean of ``resource_score(requested, allocatable)``.

    RequestedToCapacityRatio leaves resources scoring 0 out of the weight sum
    (``positive_only``) and rounds the mean in float64 (``rounded``); the others truncate.
    """

    resource_score: Callable[[int, int], int]
    positive_only: bool = False
    rounded: bool = False

    def __call__(
        self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
    ) -> int:
        """The Scorer over vectors (resources with zero allocatable are skipped)."""
        node_score = weight_sum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a == 0:
                continue
            s = self.resource_score(r, a)
            if s > 0 or not self.positive_only:
                node_score += s * w
                weight_sum += w
        return self.finish(node_score, weight_sum)

    def finish(self, node_score: int, weight_sum: int) -> int:
        if weight_sum == 0:
            return 0
        if self.rounded:
            return go_round(float(node_score) / float(weight_sum))
        return go_div(node_score, weight_sum)


@attrs.define(slots=True, frozen=True)
class FractionScore:
    """How BalancedAllocation combines resources: ``score_fractions`` over each resource's
    requested / allocatable, in float64, capped at 1 (weights play no part)."""

    score_fractions: Callable[[list[float]], int]

    def __call__(
        self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
    ) -> int:
        """The Scorer over vectors (resources with zero allocatable are skipped)."""
        fractions = [
            min(float(r) / float(a), 1.0)
            for r, a in zip(requested, allocatable, strict=True)
            if a != 0
        ]
        return self.score_fractions(fractions)


def go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


class ResourceAllocationScorer:
    """Scores a node over the resources it has allocatable: a WeightedMean or FractionScore
    strategy is folded in place (allocating nothing but the fractions), any other Scorer
    gets the vectors.

    ``use_requested`` picks NodeInfo.requested over non_zero_requested for cpu and memory
    (BalancedAllocation); scalar resources and ephemeral-storage always use requested.
    ``pod_level`` says whether the pod's own requests honour pod-level resources: v1.35 turns
    that on for BalancedAllocation only (NodeResourcesFit's scorer never gets the feature flag).
    """

    __slots__ = (
        "_fractions",
        "_memo",
        "_weighted",
        "name",
        "pod_level",
        "resources",
        "scorer",
        "use_requested",
    )

    def __init__(
        self,
        name: str,
        resources: Sequence[ResourceSpec],
        scorer: Scorer,
        *,
        use_requested: bool,
        pod_level: bool,
    ) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.scorer = scorer
        self.use_requested = use_requested
        self.pod_level = pod_level
        self._weighted = scorer if isinstance(scorer, WeightedMean) else None
        self._fractions = scorer if isinstance(scorer, FractionScore) else None
        self._memo: tuple[Pod, list[int]] | None = None

    def pod_request_list(self, pod: Pod) -> list[int]:
        """The pod's requests per resource (remembered for the last pod: pods are immutable
        and SignPod, PreScore and Score ask for the same pod in a cycle)."""
        memo = self._memo
        if memo is not None and memo[0] is pod:
            return list(memo[1])
        reqs = pod_resource_request_list(pod, self.resources, self.use_requested, self.pod_level)
        self._memo = (pod, reqs)
        return list(reqs)

    def terms(self, pod_requests_list: Sequence[int]) -> tuple[Term, ...]:
        return prepare_terms(self.resources, pod_requests_list)

    def score(self, node_info: NodeInfo, terms: tuple[Term, ...]) -> int:
        alloc = node_info.allocatable
        requested = node_info.requested
        cpu_mem = requested if self.use_requested else node_info.non_zero_requested
        weighted = self._weighted
        by_fraction = self._fractions
        fractions: list[float] = []
        if weighted is not None:
            resource_score = weighted.resource_score
            positive_only = weighted.positive_only
            node_score = weight_sum = 0
        elif by_fraction is None:
            req_list: list[int] = []
            alloc_list: list[int] = []
            weights: list[int] = []
        for kind, name, pod_req, weight in terms:
            if kind == KIND_CPU:
                a = alloc.milli_cpu
                r = cpu_mem.milli_cpu + pod_req
            elif kind == KIND_MEMORY:
                a = alloc.memory
                r = cpu_mem.memory + pod_req
            elif kind == KIND_EPHEMERAL_STORAGE:
                a = alloc.ephemeral_storage
                r = requested.ephemeral_storage + pod_req
            else:
                found = alloc.scalar_resources.get(name)
                if found is None:
                    continue
                a = found
                r = requested.scalar_resources.get(name, 0) + pod_req
            if a == 0:
                continue
            if weighted is not None:
                s = resource_score(r, a)
                if s > 0 or not positive_only:
                    node_score += s * weight
                    weight_sum += weight
            elif by_fraction is not None:
                f = float(r) / float(a)
                fractions.append(1.0 if f > 1 else f)
            else:
                req_list.append(r)
                alloc_list.append(a)
                weights.append(weight)
        if weighted is not None:
            return weighted.finish(node_score, weight_sum)
        if by_fraction is not None:
            return by_fraction.score_fractions(fractions)
        return self.scorer(req_list, alloc_list, weights)


def is_best_effort(pod_requests_list: Sequence[int]) -> bool:
    return not any(pod_requests_list)
