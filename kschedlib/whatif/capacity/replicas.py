"""ReplicaSet-style replicas of a template pod, and their PodInfos."""

from __future__ import annotations

from typing import TypeVar

import attrs

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod, PodSpec
from kschedlib.framework.queued_pod_info import POD_INFO_FIELDS
from kschedlib.framework.types import PodInfo

# Kubernetes' rand.String alphabet (no vowels, no confusable characters).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

_T = TypeVar("_T")


def replica_name(base: str, index: int) -> str:
    """``<base>-<5 characters>``, a deterministic ReplicaSet-style pod name."""
    chars = []
    n = index
    for _ in range(5):
        n, r = divmod(n, len(_ALPHANUMS))
        chars.append(_ALPHANUMS[r])
    return f"{base}-{''.join(reversed(chars))}"


def make_replica(template: Pod, base: str, index: int) -> Pod:
    """Replica ``index`` of ``template``: a ReplicaSet-style name, a UID, the template's
    labels, an owner reference to the ReplicaSet ``base``, and no node or nomination."""
    return Replicas(template, base).make(index)


class Replicas:
    """Builds replicas of one template quickly: the metadata, spec and status are prepared
    once (through the classes' constructors), and each replica is a field-by-field copy of
    those with its name, UID and node set (the classes have no validators or converters on
    these fields, so the result is what the constructors would build)."""

    def __init__(self, template: Pod, base: str) -> None:
        meta = template.metadata
        owner = OwnerReference(
            api_version="apps/v1", kind="ReplicaSet", name=base, uid=f"whatif-rs-{base}",
            controller=True,
        )
        self.base = base
        self.ns = meta.namespace or "default"
        self.meta = attrs.evolve(
            meta,
            namespace=self.ns,
            owner_references=tuple(o for o in meta.owner_references if not o.controller)
            + (owner,),
        )
        self.proto = Pod(
            api_version=template.api_version, kind=template.kind, metadata=self.meta,
            spec=template.spec, status=attrs.evolve(template.status, nominated_node_name=""),
        )
        self.bound_specs: dict[str, PodSpec] = {}

    def make(self, index: int) -> Pod:
        name = replica_name(self.base, index)
        meta = _copy(self.meta, _META_FIELDS)
        _set(meta, "name", name)
        _set(meta, "uid", f"whatif-{self.ns}-{name}")
        pod = _copy(self.proto, _POD_FIELDS)
        _set(pod, "metadata", meta)
        return pod

    def bound(self, replica: Pod, node_name: str) -> Pod:
        """``replica.with_node_name(node_name)``, sharing one spec per node."""
        spec = self.bound_specs.get(node_name)
        if spec is None:
            spec = self.bound_specs[node_name] = _copy(replica.spec, _SPEC_FIELDS)
            _set(spec, "node_name", node_name)
        pod = _copy(replica, _POD_FIELDS)
        _set(pod, "spec", spec)
        return pod


_set = object.__setattr__
_META_FIELDS = tuple(f.name for f in attrs.fields(ObjectMeta))
_POD_FIELDS = tuple(f.name for f in attrs.fields(Pod))
_SPEC_FIELDS = tuple(f.name for f in attrs.fields(PodSpec))


def _copy(obj: _T, names: tuple[str, ...]) -> _T:
    """A field-by-field copy of a frozen attrs object (its fields listed in ``names``)."""
    new = object.__new__(type(obj))
    for name in names:
        _set(new, name, getattr(obj, name))
    return new


def pod_info_like(proto: PodInfo, pod: Pod) -> PodInfo:
    """``proto``'s compiled terms and computed resources for another replica: replicas share
    spec, labels and namespace, which is all a PodInfo is computed from."""
    proto.resources  # computed once, then shared  # noqa: B018
    pi = PodInfo.__new__(PodInfo)
    for name in POD_INFO_FIELDS:
        object.__setattr__(pi, name, getattr(proto, name))
    pi.pod = pod
    return pi

