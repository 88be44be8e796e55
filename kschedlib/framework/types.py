"""PodInfo, AffinityTerm, NodeInfo and HostPortInfo: the scheduler's prepared views of objects."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import ContainerPort, Pod, PodAffinityTerm, host_ports
from kschedlib.api.resource import PodResources, Resource, compute_pod_resources
from kschedlib.api.selectors import Selector, selector_from

_generation = itertools.count(1)
_NO_LABELS: Mapping[str, str] = {}


def next_generation() -> int:
    """A process-wide, ever-increasing generation stamp for NodeInfo changes."""
    return next(_generation)


@attrs.define(slots=True, frozen=True)
class AffinityTerm:
    """A PodAffinityTerm of a pod, compiled: namespaces, selectors and the topology key."""

    namespaces: frozenset[str]
    selector: Selector | object
    topology_key: str
    namespace_selector: Selector | object

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` is selected: in one of the namespaces (or by the namespace
        selector, given the pod's namespace labels) and by the label selector."""
        if pod.metadata.namespace in self.namespaces or self.namespace_selector.matches(  # type: ignore[attr-defined]
            ns_labels if ns_labels is not None else _NO_LABELS
        ):
            return bool(self.selector.matches(pod.metadata.labels))  # type: ignore[attr-defined]
        return False


@attrs.define(slots=True, frozen=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _merge_label_keys(pod: Pod, term: PodAffinityTerm) -> Selector | object:
    """The term's selector with matchLabelKeys / mismatchLabelKeys merged in from the pod's
    labels, as the API server does on pod creation (merging twice changes nothing)."""
    base = selector_from(term.label_selector)
    if term.label_selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return base
    extra: list[tuple[str, str, frozenset[str]]] = []
    labels = pod.metadata.labels
    for key in term.match_label_keys:
        if key in labels:
            extra.append((key, "In", frozenset((labels[key],))))
    for key in term.mismatch_label_keys:
        if key in labels:
            extra.append((key, "NotIn", frozenset((labels[key],))))
    assert isinstance(base, Selector)
    return base.add(*extra)


def new_affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(
        namespaces=namespaces,
        selector=_merge_label_keys(pod, term),
        topology_key=term.topology_key,
        namespace_selector=selector_from(term.namespace_selector),
    )


@attrs.define(slots=True)
class PodInfo:
    """A pod with its affinity terms compiled and its resource requests computed once."""

    pod: Pod
    required_affinity_terms: tuple[AffinityTerm, ...] = ()
    required_anti_affinity_terms: tuple[AffinityTerm, ...] = ()
    preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
    _resources: PodResources | None = attrs.field(default=None, eq=False, repr=False)
    pod_level: bool = attrs.field(default=True, eq=False, repr=False)
    """Whether pod-level requests count (the PodLevelResources gate of the owning cache)."""

    @classmethod
    def of(cls, pod: Pod, pod_level: bool = True) -> PodInfo:
        pi = cls(pod, pod_level=pod_level)
        pi.update(pod)
        return pi

    def update(self, pod: Pod) -> None:
        """Point at a new version of the pod, recompiling only what changed."""
        old = self.pod
        self.pod = pod
        if old is not pod and old.spec is pod.spec and self._resources is not None:
            pass  # spec unchanged: keep cached resources
        else:
            self._resources = None
        aff = pod.spec.affinity
        pa = aff.pod_affinity if aff is not None else None
        paa = aff.pod_anti_affinity if aff is not None else None
        self.required_affinity_terms = tuple(
            new_affinity_term(pod, t) for t in (pa.required if pa else ())
        )
        self.required_anti_affinity_terms = tuple(
            new_affinity_term(pod, t) for t in (paa.required if paa else ())
        )
        self.preferred_affinity_terms = tuple(
            WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in (pa.preferred if pa else ())
        )
        self.preferred_anti_affinity_terms = tuple(
            WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in (paa.preferred if paa else ())
        )

    def copy(self) -> PodInfo:
        """What ``copy.copy`` gives, faster, with the resources computed once on this PodInfo
        and shared (they depend on the pod and ``pod_level`` only): copies handed out again
        and again (the nominator's) do not recompute them each time."""
        res = self._resources
        if res is None:
            try:
                res = self.resources
            except Exception:  # left to the copy's own (lazy) computation, as before
                res = None
        c = PodInfo.__new__(PodInfo)
        c.pod = self.pod
        c.required_affinity_terms = self.required_affinity_terms
        c.required_anti_affinity_terms = self.required_anti_affinity_terms
        c.preferred_affinity_terms = self.preferred_affinity_terms
        c.preferred_anti_affinity_terms = self.preferred_anti_affinity_terms
        c._resources = res
        c.pod_level = self.pod_level
        return c

    @property
    def resources(self) -> PodResources:
        r = self._resources
        if r is None:
            r = self._resources = compute_pod_resources(self.pod, not self.pod_level)
        return r

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def host_ports(self) -> list[ContainerPort]:
        """The pod's host ports (computed per access; most pods have none)."""
        spec = self.pod.spec
        if not any(c.ports for c in spec.containers) and not any(
            c.ports for c in spec.init_containers
        ):
            return []
        return host_ports(self.pod)


def pod_with_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)


def pod_with_required_anti_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return (
        aff is not None
        and aff.pod_anti_affinity is not None
        and bool(aff.pod_anti_affinity.required)
    )


DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


class HostPortInfo(dict[str, set[tuple[str, int]]]):
    """ip -> {(protocol, port)}: the host ports in use on a node."""

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return (ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP")

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        s = self.get(ip)
        if s is not None:
            s.discard((protocol, port))
            if not s:
                del self[ip]

    def length(self) -> int:
        return sum(len(s) for s in self.values())

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in s for s in self.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            s = self.get(key)
            if s is not None and pp in s:
                return True
        return False

    def copy(self) -> HostPortInfo:
        c = HostPortInfo()
        for k, v in self.items():
            c[k] = set(v)
        return c


@attrs.define(slots=True, frozen=True)
class ImageStateSummary:
    """An image on a node: its size and how many nodes in the cluster have it."""

    size: int
    num_nodes: int


def _pvc_keys(pod: Pod) -> list[str]:
    ns = pod.metadata.namespace
    return [
        f"{ns}/{v.persistent_volume_claim.claim_name}"
        for v in pod.spec.volumes
        if v.persistent_volume_claim is not None
    ]


class NodeInfo:
    """A node and the aggregate of the pods on it, as the scheduler sees them."""

    __slots__ = (
        "node",
        "name",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "requested",
        "non_zero_requested",
        "allocatable",
        "image_states",
        "pvc_ref_counts",
        "generation",
        "extensions",
    )

    def __init__(self, node: Node | None = None, *pods: Pod | PodInfo) -> None:
        self.node: Node | None = None
        """The node; None for a ghost NodeInfo whose node was removed but pods remain."""
        self.name = ""
        """The node's name ("" for a ghost NodeInfo)."""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        self.extensions: dict[str, NodeInfoExtension] | None = None
        """Plugins' per-node state (see :meth:`extension`); None until a plugin asks."""
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    @property
    def _node(self) -> Node | None:
        return self.node

    @_node.setter
    def _node(self, node: Node | None) -> None:
        self.node = node
        self.name = node.metadata.name if node is not None else ""

    def set_node(self, node: Node) -> None:
        self._node = node
        self.allocatable = Resource.from_list(node.status.allocatable)
        self.extensions = None  # rebuilt from the new node on the next request
        self.generation = next_generation()

    def remove_node(self) -> None:
        self._node = None
        self.extensions = None
        self.generation = next_generation()

    def extension(self, key: str, factory: Callable[[NodeInfo], NodeInfoExtension]) -> Any:
        """The plugin state stored under ``key``, built by ``factory(self)`` (from the node and
        the pods already on it) on first use. It then follows every ``add_pod``/``remove_pod``
        of this NodeInfo and is cloned with it (snapshots, forks), so it always describes the
        same content as the NodeInfo and its generation."""
        exts = self.extensions
        if exts is None:
            exts = self.extensions = {}
        ext = exts.get(key)
        if ext is None:
            ext = exts[key] = factory(self)
        return ext

    def add_pod(self, pod: Pod | PodInfo) -> None:
        pi = pod if isinstance(pod, PodInfo) else PodInfo.of(pod)
        self.pods.append(pi)
        if pod_with_affinity(pi.pod):
            self.pods_with_affinity.append(pi)
        if pod_with_required_anti_affinity(pi.pod):
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)
        exts = self.extensions
        if exts:
            for ext in exts.values():
                ext.add_pod(pi)

    def remove_pod(self, pod: Pod) -> None:
        """Remove by UID; raises KeyError when the pod is not on this node."""
        uid = pod.uid
        if pod_with_affinity(pod):
            _swap_remove(self.pods_with_affinity, uid)
        if pod_with_required_anti_affinity(pod):
            _swap_remove(self.pods_with_required_anti_affinity, uid)
        removed = _swap_remove(self.pods, uid)
        if removed is None:
            raise KeyError(f"no corresponding pod {pod.metadata.name} in pods of node {self.name}")
        self._update(removed, -1)
        exts = self.extensions
        if exts:
            for ext in exts.values():
                ext.remove_pod(removed)

    def _update(self, pi: PodInfo, sign: int) -> None:
        res = pi.resources
        req = self.requested
        r = res.requests
        req.milli_cpu += sign * r.milli_cpu
        req.memory += sign * r.memory
        req.ephemeral_storage += sign * r.ephemeral_storage
        if r.scalar_resources:
            sr = req.scalar_resources
            for k, v in r.scalar_resources.items():
                sr[k] = sr.get(k, 0) + sign * v
        self.non_zero_requested.milli_cpu += sign * res.non0_cpu
        self.non_zero_requested.memory += sign * res.non0_mem
        pod = pi.pod
        for p in pi.host_ports:
            if sign > 0:
                self.used_ports.add(p.host_ip, p.protocol, p.host_port)
            else:
                self.used_ports.remove(p.host_ip, p.protocol, p.host_port)
        if pod.spec.volumes:
            counts = self.pvc_ref_counts
            for key in _pvc_keys(pod):
                n = counts.get(key, 0) + sign
                if n <= 0:
                    counts.pop(key, None)
                else:
                    counts[key] = n
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.copy()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable.clone()
        c.image_states = dict(self.image_states)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c.extensions = clone_extensions(self.extensions)
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, generation={self.generation})"


class NodeInfoExtension(Protocol):
    """Per-node state a plugin keeps in NodeInfo (``NodeInfo.extension``): updated by the
    NodeInfo's pod changes, copied with it. ``clone`` must give an independent copy."""

    def add_pod(self, pod_info: PodInfo) -> None: ...
    def remove_pod(self, pod_info: PodInfo) -> None: ...
    def clone(self) -> NodeInfoExtension: ...


def clone_extensions(
    exts: dict[str, NodeInfoExtension] | None,
) -> dict[str, NodeInfoExtension] | None:
    """Independent copies of a NodeInfo's extensions (None stays None)."""
    if not exts:
        return None
    return {k: v.clone() for k, v in exts.items()}


def _swap_remove(items: list[PodInfo], uid: str) -> PodInfo | None:
    """Remove the PodInfo with ``uid`` by moving the last element into its place (as Go does)."""
    for i, pi in enumerate(items):
        if pi.pod.uid == uid:
            last = items.pop()
            if i < len(items):
                items[i] = last
            return pi
    return None
