"""Scale-up what-ifs: new nodes made from a template node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from kschedlib.api.node import Node
from kschedlib.errors import InvalidObjectError

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler

LABEL_HOSTNAME = "kubernetes.io/hostname"


def add_nodes_like(
    sched: Scheduler, node: Node | str, count: int, *, prefix: str | None = None
) -> list[Node]:
    """Add ``count`` copies of ``node`` (or of the cached node of that name), named
    ``<prefix>-<i>`` with the first unused indexes (prefix: the template's name + ``-copy``)
    and with their own hostname label and UID; returns the added nodes."""
    if count < 0:
        raise InvalidObjectError("add_nodes_like", "count", f"must be >= 0, got {count}")
    if isinstance(node, str):
        if node not in set(sched.cache.node_names()):
            raise InvalidObjectError(f"node {node}", "metadata.name", "is not a node of this scheduler")
        template = sched.cache.get_node(node).node
        assert template is not None
    else:
        template = node
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
        new = attrs.evolve(template, metadata=meta)
        sched.add_node(new)
        taken.add(name)
        out.append(new)
    return out
