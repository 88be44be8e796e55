"""NodeTree: node names grouped by zone, listed round-robin across zones (node_tree.go)."""

from __future__ import annotations

from collections.abc import KeysView
from itertools import chain

from kschedlib.api.node import Node
from kschedlib.errors import CacheError

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def get_zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: ``region:\\x00:zone``, "" without zone labels.

    The deprecated failure-domain.beta labels win when present (even empty); the
    topology.kubernetes.io labels are the fallback, exactly as component-helpers does.
    """
    labels = node.metadata.labels
    if not labels:
        return ""
    zone = labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE)
    if zone is None:
        zone = labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION)
    if region is None:
        region = labels.get(LABEL_TOPOLOGY_REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """Node names per zone key; zones keep their order of first appearance.

    Membership is tracked by name (name -> zone), so removal and zone moves do not
    depend on the labels of a possibly stale Node object.
    """

    __slots__ = ("_tree", "_zones", "_zone_of")

    def __init__(self, nodes: list[Node] | None = None) -> None:
        self._tree: dict[str, list[str]] = {}
        self._zones: list[str] = []
        self._zone_of: dict[str, str] = {}
        for n in nodes or ():
            self.add_node(n)

    def copy(self) -> NodeTree:
        """An independent copy (same zones, same order)."""
        new = NodeTree.__new__(NodeTree)
        new._tree = {z: list(names) for z, names in self._tree.items()}
        new._zones = list(self._zones)
        new._zone_of = dict(self._zone_of)
        return new

    @property
    def num_nodes(self) -> int:
        return len(self._zone_of)

    @property
    def zones(self) -> list[str]:
        """Zone keys in order of first appearance (a copy)."""
        return list(self._zones)

    def __contains__(self, name: object) -> bool:
        return name in self._zone_of

    def names(self) -> KeysView[str]:
        """The node names (a live view, in no particular order)."""
        return self._zone_of.keys()

    def zone_of(self, name: str) -> str | None:
        return self._zone_of.get(name)

    def add_node(self, node: Node) -> None:
        """Append the node to its zone; a node already in that zone is left where it is."""
        name = node.metadata.name
        zone = get_zone_key(node)
        current = self._zone_of.get(name)
        if current == zone:
            return
        if current is not None:
            self._remove(name, current)
        self._add(name, zone)

    def update_node(self, old: Node | None, new: Node) -> None:
        """Move the node to the end of its new zone when its zone key changed (adding it
        when absent); ``old`` is accepted for symmetry with Go, the stored zone is used."""
        name = new.metadata.name
        current = self._zone_of.get(name)
        if current is None:
            self._add(name, get_zone_key(new))
            return
        zone = get_zone_key(new)
        if zone == current:
            return
        self._remove(name, current)
        self._add(name, zone)

    def remove_node(self, node: Node | str) -> None:
        """Remove a node by name; raises CacheError (changing nothing) when it is absent."""
        name = node if isinstance(node, str) else node.metadata.name
        zone = self._zone_of.get(name)
        if zone is None:
            raise CacheError(f'node "{name}" was not found in the node tree')
        self._remove(name, zone)

    def list(self) -> list[str]:
        """Node names, taking the i-th node of every zone in zone order, for i = 0, 1, ..."""
        zones = self._zones
        if len(zones) == 1:
            return list(self._tree[zones[0]])
        columns = [self._tree[z] for z in zones]
        # Row by row at C speed: zip interleaves the rows every column reaches, then the
        # longer columns go on from there (the same order as taking row i of every column).
        short = min((len(c) for c in columns), default=0)
        out = list(chain.from_iterable(zip(*columns, strict=False)))
        if any(len(c) > short for c in columns):
            rest = [c[short:] for c in columns if len(c) > short]
            depth = max(len(c) for c in rest)
            for i in range(depth):
                for c in rest:
                    if i < len(c):
                        out.append(c[i])
        return out

    def _add(self, name: str, zone: str) -> None:
        names = self._tree.get(zone)
        if names is None:
            self._zones.append(zone)
            self._tree[zone] = [name]
        else:
            names.append(name)
        self._zone_of[name] = zone

    def _remove(self, name: str, zone: str) -> None:
        names = self._tree[zone]
        names.remove(name)
        if not names:
            del self._tree[zone]
            self._zones.remove(zone)
        del self._zone_of[name]
