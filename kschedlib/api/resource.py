"""Resource accounting as kube-scheduler does it: the Resource value and pod request sums.

Requests are summed as Go sums resource.Quantity (exactly, with Go's representation) and
only then converted to integers with Go's MilliValue()/Value() (rounding, int64 wrap-around
and saturation included); Resource totals are int64 and wrap as Go's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from kschedlib.api.pod import Container, ContainerStatus, Pod
from kschedlib.api.quantity import Quantity, quantity_from_int, quantity_from_milli

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_PREFIX = "attachable-volumes-"

ExactList = dict[str, Quantity]

_I64 = 1 << 64
_I63 = 1 << 63


def wrap64(x: int) -> int:
    """Two's complement int64 wrap-around of ``x`` (Go integer arithmetic)."""
    if -_I63 <= x < _I63:
        return x
    return (x + _I63) % _I64 - _I63


def is_prefixed_native_resource(name: str) -> bool:
    return "kubernetes.io/" in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


def is_hugepage_resource(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


def is_attachable_volume_resource(name: str) -> bool:
    return name.startswith(_ATTACHABLE_PREFIX)


def _is_qualified_name(value: str) -> bool:
    prefix, sep, name = value.rpartition("/")
    if sep and (not prefix or len(prefix) > 253):
        return False
    if not name or len(name) > 63:
        return False
    ok = all(c.isalnum() or c in "-_." for c in name) and name.isascii()
    return ok and name[0].isalnum() and name[-1].isalnum()


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed, non-native, quota-able name."""
    if is_native_resource(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return _is_qualified_name(_REQUESTS_PREFIX + name)


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, prefixed native or attachable."""
    return (
        is_extended_resource(name)
        or is_hugepage_resource(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource(name)
    )


@attrs.define(slots=True, kw_only=True)
class Resource:
    """framework.Resource: integer totals of the resources the scheduler accounts for."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def from_list(cls, rl: Mapping[str, Quantity]) -> Resource:
        """NewResource: totals of a ResourceList such as a node's allocatable."""
        r = cls()
        r.add_exact(rl)
        return r

    def add_exact(self, rl: Mapping[str, Quantity]) -> None:
        """Resource.Add over a ResourceList: MilliValue() for cpu, Value() otherwise, summed
        as Go int64."""
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu = wrap64(self.milli_cpu + q.milli_value())
            elif name == MEMORY:
                self.memory = wrap64(self.memory + q.value())
            elif name == PODS:
                self.allowed_pod_number = wrap64(self.allowed_pod_number + q.value())
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage = wrap64(self.ephemeral_storage + q.value())
            elif is_scalar_resource(name):
                sr = self.scalar_resources
                sr[name] = wrap64(sr.get(name, 0) + q.value())

    def add(self, other: Resource) -> None:
        self.milli_cpu = wrap64(self.milli_cpu + other.milli_cpu)
        self.memory = wrap64(self.memory + other.memory)
        self.ephemeral_storage = wrap64(self.ephemeral_storage + other.ephemeral_storage)
        self.allowed_pod_number = wrap64(self.allowed_pod_number + other.allowed_pod_number)
        if other.scalar_resources:
            sr = self.scalar_resources
            for k, v in other.scalar_resources.items():
                sr[k] = wrap64(sr.get(k, 0) + v)

    def sub(self, other: Resource) -> None:
        self.milli_cpu = wrap64(self.milli_cpu - other.milli_cpu)
        self.memory = wrap64(self.memory - other.memory)
        self.ephemeral_storage = wrap64(self.ephemeral_storage - other.ephemeral_storage)
        self.allowed_pod_number = wrap64(self.allowed_pod_number - other.allowed_pod_number)
        if other.scalar_resources:
            sr = self.scalar_resources
            for k, v in other.scalar_resources.items():
                sr[k] = wrap64(sr.get(k, 0) - v)

    def clone(self) -> Resource:
        # Slots filled directly (a hot path: two clones per snapshot copy of a NodeInfo).
        r = Resource.__new__(Resource)
        r.milli_cpu = self.milli_cpu
        r.memory = self.memory
        r.ephemeral_storage = self.ephemeral_storage
        r.allowed_pod_number = self.allowed_pod_number
        sr = self.scalar_resources
        r.scalar_resources = sr.copy() if sr else {}
        return r

    def get(self, name: str) -> int:
        """The amount of one resource by its Kubernetes name (0 when absent)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def is_zero(self) -> bool:
        return not (
            self.milli_cpu
            or self.memory
            or self.ephemeral_storage
            or self.allowed_pod_number
            or any(self.scalar_resources.values())
        )


def _add_into(acc: ExactList, rl: Mapping[str, Quantity]) -> None:
    for k, v in rl.items():
        cur = acc.get(k)
        acc[k] = v if cur is None else cur + v


def _max_into(acc: ExactList, rl: Mapping[str, Quantity]) -> None:
    for k, v in rl.items():
        cur = acc.get(k)
        if cur is None or v.cmp(cur) > 0:
            acc[k] = v


def _exact(rl: Mapping[str, Quantity]) -> ExactList:
    return dict(rl)


def _container_requests(
    c: Container,
    non_missing: Mapping[str, Quantity] | None,
    status: ContainerStatus | None = None,
    resize_infeasible: bool = False,
) -> ExactList:
    reqs = _exact(c.resources.requests)
    if status is not None:
        # In-place resize: count the larger of spec, actual and allocated requests (only
        # actual and allocated when the resize is infeasible).
        actual = _exact(status.resources.requests) if status.resources is not None else {}
        allocated = _exact(status.allocated_resources)
        reqs = {} if resize_infeasible else reqs
        _max_into(reqs, actual)
        _max_into(reqs, allocated)
    if non_missing:
        for k, v in non_missing.items():
            if k not in reqs:
                reqs[k] = v
    return reqs


def _is_supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


def is_pod_level_requests_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and any(_is_supported_pod_level(k) for k in res.requests)


def is_pod_resize_infeasible(pod: Pod) -> bool:
    for cond in pod.status.conditions:
        if cond.type == "PodResizePending":
            return cond.reason == "Infeasible"
    return False


def aggregate_container_requests(
    containers: Iterable[Container],
    init_containers: Iterable[Container],
    non_missing: Mapping[str, Quantity] | None = None,
    pod: Pod | None = None,
) -> ExactList:
    """Sum of app containers and sidecars, maxed with each init container's peak (KEP-753).

    With ``pod``, container statuses (in-place resize) are taken into account.
    """
    statuses: dict[str, ContainerStatus] = {}
    infeasible = False
    if pod is not None and (pod.status.container_statuses or pod.status.init_container_statuses):
        statuses = {cs.name: cs for cs in pod.status.container_statuses}
        for cs in pod.status.init_container_statuses:
            statuses.setdefault(cs.name, cs)
        infeasible = is_pod_resize_infeasible(pod)
    result: ExactList = {}
    for c in containers:
        _add_into(result, _container_requests(c, non_missing, statuses.get(c.name), infeasible))
    sidecars: ExactList = {}
    init_peak: ExactList = {}
    for c in init_containers:
        reqs = _container_requests(c, non_missing, statuses.get(c.name), infeasible)
        if c.restart_policy == "Always":
            _add_into(result, reqs)
            _add_into(sidecars, reqs)
            use = dict(sidecars)
        else:
            use = dict(reqs)
            _add_into(use, sidecars)
        _max_into(init_peak, use)
    _max_into(result, init_peak)
    return result


def pod_requests(
    pod: Pod,
    *,
    non_missing: Mapping[str, Quantity] | None = None,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
) -> ExactList:
    """resourcehelper.PodRequests: container aggregate, pod-level override, plus overhead."""
    reqs = aggregate_container_requests(
        pod.spec.containers, pod.spec.init_containers, non_missing, pod
    )
    if not skip_pod_level and is_pod_level_requests_set(pod):
        assert pod.spec.resources is not None
        for k, q in pod.spec.resources.requests.items():
            if _is_supported_pod_level(k):
                reqs[k] = q
    if not exclude_overhead and pod.spec.overhead:
        _add_into(reqs, _exact(pod.spec.overhead))
    return reqs


NON_ZERO_DEFAULTS: Mapping[str, Quantity] = {
    CPU: quantity_from_milli(DEFAULT_MILLI_CPU_REQUEST),
    MEMORY: quantity_from_int(DEFAULT_MEMORY_REQUEST),
}


@attrs.define(slots=True, frozen=True)
class PodResources:
    """A pod's requests as NodeInfo accounts them: the totals and the non-zero CPU/memory."""

    requests: Resource
    non0_cpu: int
    non0_mem: int


def compute_pod_resources(pod: Pod, skip_pod_level: bool = False) -> PodResources:
    """PodInfo.calculateResource: requests, plus CPU/memory with 100m / 200Mi for missing ones.

    With pod-level requests set, the defaults apply only to a resource missing at both levels.
    ``skip_pod_level`` ignores pod-level requests (the PodLevelResources gate off).
    """
    requests = pod_requests(pod, skip_pod_level=skip_pod_level)
    res = Resource()
    res.add_exact(requests)
    if not skip_pod_level and is_pod_level_requests_set(pod):
        defaults = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}
    else:
        defaults = dict(NON_ZERO_DEFAULTS)
    non0 = (
        pod_requests(pod, non_missing=defaults, skip_pod_level=skip_pod_level)
        if defaults
        else requests
    )
    cpu = non0.get(CPU)
    mem = non0.get(MEMORY)
    non0_cpu = 0 if cpu is None else cpu.milli_value()
    non0_mem = 0 if mem is None else mem.value()
    return PodResources(res, non0_cpu, non0_mem)
