"""ReplicaSet-style replicas of a template pod, and their PodInfos."""

from __future__ import annotations

import attrs

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod, PodSpec
from kschedlib.framework.queued_pod_info import POD_INFO_FIELDS
from kschedlib.framework.types import PodInfo

# Kubernetes' rand.String alphabet (no vowels, no confusable characters).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


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
    """Builds replicas of one template quickly (the metadata fields are prepared once)."""

    def __init__(self, template: Pod, base: str) -> None:
        meta = template.metadata
        owner = OwnerReference(
            api_version="apps/v1", kind="ReplicaSet", name=base, uid=f"whatif-rs-{base}",
            controller=True,
        )
        self.base = base
        self.ns = meta.namespace or "default"
        self.meta = {f.name: getattr(meta, f.name) for f in attrs.fields(ObjectMeta)}
        self.meta["namespace"] = self.ns
        self.meta["owner_references"] = tuple(
            o for o in meta.owner_references if not o.controller
        ) + (owner,)
        self.template = template
        self.status = attrs.evolve(template.status, nominated_node_name="")
        self.bound_specs: dict[str, PodSpec] = {}

    def make(self, index: int) -> Pod:
        t = self.template
        name = replica_name(self.base, index)
        kw = dict(self.meta)
        kw["name"] = name
        kw["uid"] = f"whatif-{self.ns}-{name}"
        return Pod(api_version=t.api_version, kind=t.kind, metadata=ObjectMeta(**kw),
                   spec=t.spec, status=self.status)

    def bound(self, replica: Pod, node_name: str) -> Pod:
        """``replica.with_node_name(node_name)``, sharing one spec per node."""
        spec = self.bound_specs.get(node_name)
        if spec is None:
            spec = self.bound_specs[node_name] = attrs.evolve(replica.spec, node_name=node_name)
        return Pod(api_version=replica.api_version, kind=replica.kind, metadata=replica.metadata,
                   spec=spec, status=replica.status)


def pod_info_like(proto: PodInfo, pod: Pod) -> PodInfo:
    """``proto``'s compiled terms and computed resources for another replica: replicas share
    spec, labels and namespace, which is all a PodInfo is computed from."""
    proto.resources  # computed once, then shared  # noqa: B018
    pi = PodInfo.__new__(PodInfo)
    for name in POD_INFO_FIELDS:
        object.__setattr__(pi, name, getattr(proto, name))
    pi.pod = pod
    return pi

