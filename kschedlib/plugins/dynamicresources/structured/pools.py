"""GatherPools: the ResourceSlices indexed by node and grouped into pools (complete or not,
valid or not, with their counter sets)."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import Device, ResourceSlice
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.plugins.dynamicresources.structured.common import DeviceID, Features


def node_selector_of_slice(s: ResourceSlice) -> NodeSelectorMatcher | None:
    sel = s.spec.node_selector
    return NodeSelectorMatcher(sel) if sel is not None else None


class _Pool:
    __slots__ = (
        "driver", "name", "generation", "slices", "incomplete", "invalid", "_flat", "_counters",
    )

    def __init__(self, driver: str, name: str, first: ResourceSlice) -> None:
        self.driver = driver
        self.name = name
        self.generation = first.spec.pool.generation
        self.slices: list[ResourceSlice] = [first]
        self.incomplete = False
        self.invalid = ""
        self._flat: list[tuple[DeviceID, Device, ResourceSlice]] | None = None
        self._counters: dict[str, dict[str, Fraction]] | None = None

    def counter_sets(self) -> dict[str, dict[str, Fraction]]:
        """The pool's shared counter sets (from any of its slices), by set and counter name."""
        out = self._counters
        if out is None:
            out = {}
            for s in self.slices:
                for cs in s.spec.shared_counters:
                    out[cs.name] = {
                        n: (c.value.as_fraction() if c.value is not None else Fraction(0))
                        for n, c in cs.counters.items()
                    }
            self._counters = out
        return out

    def devices(self) -> list[tuple[DeviceID, Device, ResourceSlice]]:
        """The pool's devices in search order (slices in order, devices in order)."""
        flat = self._flat
        if flat is None:
            flat = [
                ((s.spec.driver, s.spec.pool.name, d.name), d, s)
                for s in self.slices
                for d in s.spec.devices
            ]
            self._flat = flat
        return flat

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _add_slice(pools: dict[tuple[str, str], _Pool], s: ResourceSlice) -> None:
    key = (s.spec.driver, s.spec.pool.name)
    pool = pools.get(key)
    if pool is None:
        pools[key] = _Pool(key[0], key[1], s)
        return
    gen = s.spec.pool.generation
    if gen < pool.generation:
        return  # outdated
    if gen > pool.generation:
        pool.slices = []
        pool.generation = gen
    pool.slices.append(s)


class SliceIndex:
    """The ResourceSlices of a cycle, indexed by node so that gathering a node's pools does
    not walk every slice (GatherPools' result is the same)."""

    __slots__ = ("_by_node", "_selected", "order", "_pools", "_generations")

    def __init__(self, slices: Iterable[ResourceSlice], features: Features) -> None:
        ordered = sorted(slices, key=lambda s: s.metadata.name)
        self.order = {id(s): i for i, s in enumerate(ordered)}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        # Pools per node object (nodes are immutable: a label change is a new object).
        self._pools: dict[str, tuple[Node, list[_Pool]]] = {}
        # Slices for all nodes or with a node selector, in order, with their matcher (None =
        # all nodes).
        self._selected: list[tuple[ResourceSlice, NodeSelectorMatcher | None]] = []
        # Per pool: how many slices each generation has, over all slices (checkSlicesInPool).
        self._generations: dict[tuple[str, str], dict[int, int]] = {}
        for s in ordered:
            spec = s.spec
            gens = self._generations.setdefault((spec.driver, spec.pool.name), {})
            gens[spec.pool.generation] = gens.get(spec.pool.generation, 0) + 1
            if spec.per_device_node_selection:
                if features.partitionable_devices:
                    # Each device names its nodes; the slice is a candidate everywhere.
                    self._selected.append((s, None))
                continue  # perDeviceNodeSelection needs DRAPartitionableDevices
            if spec.node_name:
                self._by_node.setdefault(spec.node_name, []).append(s)
            elif spec.all_nodes:
                self._selected.append((s, None))
            elif spec.node_selector is not None:
                self._selected.append((s, NodeSelectorMatcher(spec.node_selector)))
            # else: nothing known set (a future extension): ignored

    def pools_for(self, node: Node) -> list[_Pool]:
        """GatherPools: the pools whose slices are available on the node."""
        hit = self._pools.get(node.metadata.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._gather(node)
        self._pools[node.metadata.name] = (node, out)
        return out

    def _gather(self, node: Node) -> list[_Pool]:
        local = self._by_node.get(node.metadata.name, ())
        chosen: list[ResourceSlice] = list(local)
        labels = node.metadata.labels
        name = node.metadata.name
        for s, m in self._selected:
            if m is None or m.matches(labels, name):
                chosen.append(s)
        if local and len(chosen) > len(local):
            chosen.sort(key=lambda s: self.order[id(s)])
        pools: dict[tuple[str, str], _Pool] = {}
        for s in chosen:
            _add_slice(pools, s)
        out: list[_Pool] = []
        for p in pools.values():
            want = p.slices[0].spec.pool.resource_slice_count
            complete = len(p.slices) == want
            if not complete:
                # Slices of the pool for other nodes count too; a newer generation elsewhere
                # means this one is being replaced: the pool is ignored.
                gens = self._generations.get((p.driver, p.name), {})
                if any(g > p.generation for g in gens):
                    continue
                complete = gens.get(p.generation, 0) == want
            p.incomplete = not complete
            out.append(p)
            seen: set[str] = set()
            for s in p.slices:
                for d in s.spec.devices:
                    if d.name in seen:
                        p.invalid = f"duplicate device name {d.name}"
                        break
                    seen.add(d.name)
                if p.invalid:
                    break
        return out
