"""Stateful test: any sequence of cache operations keeps the cache's aggregates equal to the sum
of its pods, and an incrementally updated snapshot equal to one built from scratch."""

from __future__ import annotations

import functools
from typing import Any

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource import compute_pod_resources
from kschedlib.backend.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import CacheError
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.types import ImageStateSummary, NodeInfo
from tests.backend.test_cache import fingerprint, make_node, make_pod

NODE_NAMES = ("n0", "n1", "n2", "n3", "n4")
POD_NAMES = tuple(f"p{i}" for i in range(8))
ZONES = (None, "A", "B", "C")
IMAGES = (("img-a", 100), ("img-b", 200), ("img-c", 300))
TTL = 30.0
STRAY = (None, None, 0, (), False, False)

node_variants = st.tuples(
    st.sampled_from(ZONES),
    st.sampled_from(("2", "4")),
    st.frozensets(st.sampled_from(range(len(IMAGES))), max_size=3),
)
pod_variants = st.tuples(
    st.sampled_from(("100m", "250m", None)),
    st.sampled_from(("64Mi", None)),
    st.sampled_from((0, 1, 2)),
    st.sampled_from(((), ("c1",), ("c1", "c2"))),
    st.booleans(),
    st.booleans(),
)
node_names = st.sampled_from(NODE_NAMES)
pod_names = st.sampled_from(POD_NAMES)


@functools.cache
def build_node(name: str, variant: tuple[Any, ...]) -> Node:
    zone, cpu, images = variant
    return make_node(
        name, zone=zone, cpu=cpu, images=[([IMAGES[i][0]], IMAGES[i][1]) for i in sorted(images)]
    )


@functools.cache
def build_pod(name: str, node: str, variant: tuple[Any, ...]) -> Pod:
    cpu, memory, port, pvcs, affinity, anti = variant
    # Host ports are distinct per pod: HostPortInfo is a set, so two pods sharing a port would
    # free it for both when one leaves (as in Go); that is NodeInfo's business, not the cache's.
    host_port = 8000 + 10 * POD_NAMES.index(name) + port if port else 0
    return make_pod(
        name,
        node,
        uid=f"uid-{name}",
        cpu=cpu,
        memory=memory,
        host_port=host_port,
        pvcs=pvcs,
        affinity=affinity,
        anti_affinity=anti,
    )


def node_state(ni: NodeInfo) -> tuple[Any, ...]:
    """Everything a plugin can read from a NodeInfo except image states."""
    return (
        ni.node,
        [p.pod.uid for p in ni.pods],
        [p.pod.uid for p in ni.pods_with_affinity],
        [p.pod.uid for p in ni.pods_with_required_anti_affinity],
        attrs.astuple(ni.requested),
        attrs.astuple(ni.non_zero_requested),
        attrs.astuple(ni.allocatable),
        dict(ni.used_ports),
        dict(ni.pvc_ref_counts),
        ni.generation,
    )


class CacheMachine(RuleBasedStateMachine):
    """The model: nodes in the cluster, pods (with node, assumed flag and deadline)."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(1000.0)
        self.cache = Cache(ttl=TTL, clock=self.clock)
        self.snap = Snapshot()
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.assumed: set[str] = set()
        self.deadlines: dict[str, float] = {}
        self.prev_order: list[str] | None = None
        self.image_model: dict[str, dict[str, ImageStateSummary]] = {}

    def expect_error(self, fn: Any, *args: Any) -> None:
        before = fingerprint(self.cache)
        try:
            fn(*args)
        except CacheError:
            pass
        else:
            raise AssertionError(f"{fn.__name__}{args} should have raised CacheError")
        assert fingerprint(self.cache) == before

    @initialize(
        nodes=st.lists(st.tuples(node_names, node_variants), max_size=5),
        pods=st.lists(st.tuples(pod_names, node_names, pod_variants), max_size=6),
    )
    def seed(
        self,
        nodes: list[tuple[str, tuple[Any, ...]]],
        pods: list[tuple[str, str, tuple[Any, ...]]],
    ) -> None:
        for name, variant in nodes:
            self.add_node(name, variant)
        for name, node, variant in pods:
            self.add_pod(name, node, variant)

    # ---- nodes ----------------------------------------------------------------------------

    @rule(name=node_names, variant=node_variants)
    def add_node(self, name: str, variant: tuple[Any, ...]) -> None:
        node = build_node(name, variant)
        self.cache.add_node(node)
        self.nodes[name] = node

    @rule(name=node_names, variant=node_variants)
    def update_node(self, name: str, variant: tuple[Any, ...]) -> None:
        new = build_node(name, variant)
        self.cache.update_node(self.nodes.get(name), new)
        self.nodes[name] = new

    @rule(name=node_names)
    def remove_node(self, name: str) -> None:
        if name in self.nodes:
            self.cache.remove_node(self.nodes.pop(name))
        else:
            self.expect_error(self.cache.remove_node, build_node(name, (None, "4", frozenset())))

    # ---- pods -----------------------------------------------------------------------------

    @rule(name=pod_names, node=node_names, variant=pod_variants)
    def add_pod(self, name: str, node: str, variant: tuple[Any, ...]) -> None:
        pod = build_pod(name, node, variant)
        if name in self.pods and name not in self.assumed:
            self.expect_error(self.cache.add_pod, pod)
            return
        self.cache.add_pod(pod)
        self.pods[name] = pod
        self.assumed.discard(name)
        self.deadlines.pop(name, None)

    @rule(name=pod_names, node=node_names, variant=pod_variants)
    def assume_pod(self, name: str, node: str, variant: tuple[Any, ...]) -> None:
        pod = build_pod(name, node, variant)
        if name in self.pods:
            self.expect_error(self.cache.assume_pod, pod)
            return
        self.cache.assume_pod(pod)
        self.pods[name] = pod
        self.assumed.add(name)

    @rule(name=pod_names, other_node=node_names)
    def forget_pod(self, name: str, other_node: str) -> None:
        pod = self.pods.get(name)
        if pod is None:
            self.expect_error(self.cache.forget_pod, build_pod(name, other_node, STRAY))
            return
        if name not in self.assumed:
            self.expect_error(self.cache.forget_pod, pod)
            return
        if other_node != pod.spec.node_name:
            self.expect_error(self.cache.forget_pod, pod.with_node_name(other_node))
            return
        self.cache.forget_pod(pod)
        del self.pods[name]
        self.assumed.discard(name)
        self.deadlines.pop(name, None)

    @rule(name=pod_names)
    def finish_binding(self, name: str) -> None:
        pod = self.pods.get(name)
        if pod is None:
            return
        before = fingerprint(self.cache)
        self.cache.finish_binding(pod)
        if name in self.assumed:
            self.deadlines[name] = self.clock.now() + TTL
        else:
            assert fingerprint(self.cache) == before

    @rule(name=pod_names, variant=pod_variants, other_node=node_names)
    def update_pod(self, name: str, variant: tuple[Any, ...], other_node: str) -> None:
        old = self.pods.get(name)
        if old is None:
            stray = build_pod(name, other_node, variant)
            self.expect_error(self.cache.update_pod, stray, stray)
            return
        new = build_pod(name, old.spec.node_name, variant)
        if name in self.assumed:
            self.expect_error(self.cache.update_pod, old, new)
            return
        if other_node != old.spec.node_name:
            self.expect_error(self.cache.update_pod, old, build_pod(name, other_node, variant))
        self.cache.update_pod(old, new)
        self.pods[name] = new

    @rule(name=pod_names, other_node=node_names)
    def remove_pod(self, name: str, other_node: str) -> None:
        pod = self.pods.get(name)
        if pod is None:
            self.expect_error(self.cache.remove_pod, build_pod(name, other_node, STRAY))
            return
        if other_node != pod.spec.node_name:
            self.expect_error(self.cache.remove_pod, pod.with_node_name(other_node))
        self.cache.remove_pod(pod)
        del self.pods[name]
        self.assumed.discard(name)
        self.deadlines.pop(name, None)

    @rule(seconds=st.sampled_from((1.0, 10.0, 29.0, 31.0)))
    def expire(self, seconds: float) -> None:
        self.clock.advance(seconds)
        now = self.clock.now()
        want = {n for n, d in self.deadlines.items() if now > d}
        got = self.cache.cleanup_assumed_pods()
        assert {p.metadata.name for p in got} == want
        for n in want:
            del self.pods[n]
            self.assumed.discard(n)
            del self.deadlines[n]

    # ---- snapshots ------------------------------------------------------------------------

    @rule()
    def update_snapshot(self) -> None:
        snap = self.snap
        prev_generation = snap.generation
        held = dict(snap.node_info_map)
        self.cache.update_snapshot(snap)
        fresh = Snapshot()
        self.cache.update_snapshot(fresh)

        order = [ni.name for ni in snap.list()]
        fresh_order = [ni.name for ni in fresh.list()]
        assert sorted(order) == sorted(fresh_order) == sorted(self.nodes)
        assert set(snap.node_info_map) == set(order)
        # The node list is rebuilt in tree order exactly when the node set changed.
        if self.prev_order is None or set(self.prev_order) != set(order):
            assert order == fresh_order
        else:
            assert order == self.prev_order
        self.prev_order = order

        for name in order:
            mine, theirs = snap.node_info_map[name], fresh.node_info_map[name]
            assert mine.node is self.nodes[name]
            assert node_state(mine) == node_state(theirs)
            if name in held:
                assert mine is held[name], "snapshot NodeInfo replaced instead of updated"
            # Image counts are taken when a node is copied; others keep their last copy.
            if mine.generation > prev_generation or name not in self.image_model:
                assert mine.image_states == theirs.image_states
            else:
                assert mine.image_states == self.image_model[name]
            self.image_model[name] = dict(mine.image_states)
        for gone in set(self.image_model) - set(order):
            del self.image_model[gone]

        assert [n.name for n in snap.have_pods_with_affinity_list()] == [
            n for n in order if snap.node_info_map[n].pods_with_affinity
        ]
        assert [n.name for n in snap.have_pods_with_required_anti_affinity_list()] == [
            n for n in order if snap.node_info_map[n].pods_with_required_anti_affinity
        ]
        assert {n.name for n in snap.have_pods_with_affinity_list()} == {
            n.name for n in fresh.have_pods_with_affinity_list()
        }
        assert snap.used_pvc_set == fresh.used_pvc_set
        for ni in snap.have_pods_with_affinity_list():
            assert ni is snap.node_info_map[ni.name]

        # An independent oracle: a snapshot built directly from the objects.
        direct = Snapshot.from_objects(self.pods.values(), self.nodes.values())
        for name in order:
            d, mine = direct.node_info_map[name], fresh.node_info_map[name]
            assert sorted(p.pod.uid for p in d.pods) == sorted(p.pod.uid for p in mine.pods)
            assert node_state(d)[4:9] == node_state(mine)[4:9]
            assert d.image_states == mine.image_states
        assert direct.used_pvc_set == fresh.used_pvc_set

    # ---- invariants -----------------------------------------------------------------------

    @invariant()
    def totals_equal_the_sum_of_pods(self) -> None:
        dump = self.cache.dump()
        by_node: dict[str, set[str]] = {}
        for pod in self.pods.values():
            by_node.setdefault(pod.spec.node_name, set()).add(pod.uid)
        assert set(dump.nodes) == set(self.nodes) | set(by_node)
        for name, ni in dump.nodes.items():
            assert {p.pod.uid for p in ni.pods} == by_node.get(name, set())
            assert ni.node is self.nodes.get(name)
            cpu = mem = non0_cpu = non0_mem = 0
            pvcs: dict[str, int] = {}
            for p in ni.pods:
                res = compute_pod_resources(p.pod)
                cpu += res.requests.milli_cpu
                mem += res.requests.memory
                non0_cpu += res.non0_cpu
                non0_mem += res.non0_mem
                for v in p.pod.spec.volumes:
                    if v.persistent_volume_claim is not None:
                        key = f"{p.pod.metadata.namespace}/{v.persistent_volume_claim.claim_name}"
                        pvcs[key] = pvcs.get(key, 0) + 1
            assert (ni.requested.milli_cpu, ni.requested.memory) == (cpu, mem)
            assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (
                non0_cpu,
                non0_mem,
            )
            assert ni.pvc_ref_counts == pvcs
            ports = {
                c.ports[0].host_port
                for p in ni.pods
                for c in p.pod.spec.containers
                if c.ports and c.ports[0].host_port
            }
            assert {port for s in ni.used_ports.values() for _, port in s} == ports
        assert dump.assumed_pods == {f"uid-{n}" for n in self.assumed}
        assert self.cache.pod_count() == len(self.pods)
        assert self.cache.node_count() == len(dump.nodes)
        assert sorted(self.cache.node_names()) == sorted(self.nodes)

    @invariant()
    def list_is_ordered_by_generation(self) -> None:
        item = self.cache._head
        last = None
        count = 0
        while item is not None:
            assert last is None or item.info.generation < last
            assert item.prev is None or item.prev.next is item
            last = item.info.generation
            item = item.next
            count += 1
        assert count == self.cache.node_count()


CacheMachine.TestCase.settings = settings(
    max_examples=250,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCacheStateMachine = CacheMachine.TestCase
