"""Scale-up what-ifs: new nodes made from a template node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import InvalidObjectError

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler

LABEL_HOSTNAME = "kubernetes.io/hostname"


_AUTOSCALER_TAINTS = ("ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler")
MIRROR_POD = "kubernetes.io/config.mirror"
DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"


def _expected_on_fresh_node(pod: Pod) -> bool:
    """cluster-autoscaler's podsExpectedOnFreshNode: mirror and DaemonSet pods, not being
    deleted."""
    if pod.metadata.deletion_timestamp is not None:
        return False
    if MIRROR_POD in pod.metadata.annotations:
        return True
    if any(o.controller and o.kind == "DaemonSet" for o in pod.metadata.owner_references):
        return True
    return pod.metadata.annotations.get(DAEMONSET_POD) == "true"


def add_nodes_like(
    sched: Scheduler,
    node: Node | str,
    count: int,
    *,
    prefix: str | None = None,
    with_daemonset_pods: bool = True,
) -> list[Node]:
    """Add ``count`` copies of ``node`` (or of the cached node of that name), named
    ``<prefix>-<i>`` with the first unused indexes (prefix: the template's name + ``-copy``)
    and with their own hostname label and UID; returns the added nodes.

    As cluster-autoscaler's scale-up template (SanitizedTemplateNodeInfoFromNodeInfo), each
    copy gets the DaemonSet and mirror pods of the example node in the cache, renamed
    ``<pod>-<copy>`` (``with_daemonset_pods=False``: none), and loses cluster-autoscaler's
    own deletion taints."""
    if count < 0:
        raise InvalidObjectError("add_nodes_like", "count", f"must be >= 0, got {count}")
    if isinstance(node, str):
        if node not in set(sched.cache.node_names()):
            raise InvalidObjectError(f"node {node}", "metadata.name", "is not a node of this scheduler")
        template = sched.cache.get_node(node).node
        assert template is not None
    else:
        template = node
    daemon_pods: list[Pod] = []
    if with_daemonset_pods and template.metadata.name in set(sched.cache.node_names()):
        daemon_pods = [pi.pod for pi in sched.cache.get_node(template.metadata.name).pods
                       if _expected_on_fresh_node(pi.pod)]
    base = prefix if prefix is not None else f"{template.metadata.name}-copy"
    taken = set(sched.cache.node_names())
    out: list[Node] = []
    i = 0
    while len(out) < count:
        name = f"{base}-{i}"
        i += 1
        if name in taken:
            continue
        labels = dict(template.metadata.labels)
        labels[LABEL_HOSTNAME] = name
        meta = attrs.evolve(template.metadata, name=name, uid=f"whatif-node-{name}", labels=labels)
        spec = attrs.evolve(template.spec, taints=tuple(
            t for t in template.spec.taints if t.key not in _AUTOSCALER_TAINTS))
        new = attrs.evolve(template, metadata=meta, spec=spec)
        sched.add_node(new)
        for pod in daemon_pods:
            pmeta = attrs.evolve(pod.metadata, name=f"{pod.metadata.name}-{name}",
                                 uid=f"whatif-pod-{pod.metadata.name}-{name}")
            sched.add_pod(attrs.evolve(pod, metadata=pmeta,
                                       spec=attrs.evolve(pod.spec, node_name=name)))
        taken.add(name)
        out.append(new)
    return out
