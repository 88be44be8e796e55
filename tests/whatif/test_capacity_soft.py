"""The batched capacity loop for templates with soft rules (ScheduleAnyway spreading, the
system-default spreading of a Service, preferred pod (anti-)affinity, preferred node
affinity, PreferNoSchedule taints): the scores kept per soft key (``soft``) and the node
chosen per (local total, soft key) pair give the same replicas, node for node, as scheduling
every replica through ``schedule_pod``; and the soft-key scores equal the plugins' own
PreScore, Score and NormalizeScore on any window."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Scheduler
from kschedlib.api.objects import decode_any
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import NodeScore
from kschedlib.plugins.podtopologyspread.common import SCHEDULE_ANYWAY
from kschedlib.whatif.capacity import capacity
from tests.whatif.helpers import pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
# kschedlib.whatif binds the name ``capacity`` to the function: reach the package's modules.
batched = importlib.import_module("kschedlib.whatif.capacity.batched")
soft = importlib.import_module("kschedlib.whatif.capacity.soft")
window_mod = importlib.import_module("kschedlib.whatif.capacity.window")


def _cluster(
    n: int, zones: int, unlabelled: int, seed: int, deterministic: bool, uniform: bool,
    tainted: int, running: list[tuple[int, str, str]],
) -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=seed, deterministic=deterministic)
    for i in range(n):
        # "slot": more values than a coarse key has, some shared by two nodes.
        labels = {"disk": "ssd" if i % 3 == 0 else "hdd", "slot": f"s{i % 80}"}
        if i % 11 != 5:  # a few nodes without a hostname label
            labels[HOST] = f"n{i:03d}"
        if i >= unlabelled:
            # Zone "" on some nodes: a value of its own, which nodes without the label share
            # for spreading when every key is not required.
            labels[ZONE] = "" if i % 13 == 7 else f"z{i % zones}"
        d: dict[str, Any] = {
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            "status": {"allocatable": {"cpu": "4" if uniform else str(1 + i % 3),
                                       "memory": "8Gi", "pods": "110"}},
        }
        if i < tainted:
            d["spec"] = {"taints": [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]}
        elif tainted and i % 17 == 3:  # no replica lands here; Honor leaves it out of counts
            d["spec"] = {"taints": [{"key": "hard", "value": "x", "effect": "NoSchedule"}]}
        s.add_node(Node.from_dict(d))
    for k, (at, app, kind) in enumerate(running):
        spec: dict[str, Any] = {}
        if kind == "preferred":
            spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                   "topologyKey": ZONE}}]}}}
        if kind == "avoid":
            spec = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 60, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                   "topologyKey": HOST}}]}}}
        if kind == "hard":  # scores the replicas through hardPodAffinityWeight
            spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}}
        s.add_pod(pod(f"run{k}", cpu="300m", node_name=f"n{at % n:03d}", labels={"app": app},
                      owner=None, spec=spec, ns="other" if kind == "elsewhere" else "default"))
    return s


SEL = {"matchLabels": {"app": "web"}}


def _spread(key: str, skew: int, **extra: Any) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": SEL, **extra}


def _template(kinds: tuple[str, ...], skew: int) -> Any:
    spec: dict[str, Any] = {}
    constraints: list[dict[str, Any]] = []
    pod_aff: dict[str, Any] = {}
    anti: dict[str, Any] = {}
    for kind in kinds:
        if kind == "anyway-zone":
            constraints.append(_spread(ZONE, skew))
        if kind == "anyway-host":
            constraints.append(_spread(HOST, skew))
        if kind == "anyway-honor":  # inclusion policies: the node selector, taints
            constraints.append(_spread(ZONE, skew, nodeAffinityPolicy="Honor",
                                       nodeTaintsPolicy="Honor"))
            spec["nodeSelector"] = {"disk": "hdd"}
        if kind == "anyway-honor-taints":  # the taints only
            constraints.append(_spread(ZONE, skew, nodeTaintsPolicy="Honor"))
        if kind == "anyway-honor-selector":  # nodeAffinityPolicy Honor is the default
            constraints.append(_spread(ZONE, skew))
            spec["nodeSelector"] = {"disk": "hdd"}
        if kind == "anyway-disk":
            constraints.append(_spread("disk", skew, nodeAffinityPolicy="Ignore"))
        if kind == "preferred-anti-host":
            anti.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": 50, "podAffinityTerm": {"labelSelector": SEL, "topologyKey": HOST}})
        if kind == "preferred-anti-zone":
            anti.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": 40, "podAffinityTerm": {"labelSelector": SEL, "topologyKey": ZONE}})
        if kind == "preferred-anti-slot":
            anti.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": 70, "podAffinityTerm": {"labelSelector": SEL, "topologyKey": "slot"}})
        if kind == "preferred-affinity":
            pod_aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": 20, "podAffinityTerm": {"labelSelector": SEL, "topologyKey": ZONE}})
        if kind == "node-preferred":
            spec.setdefault("affinity", {})["nodeAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [
                        {"key": "disk", "operator": "In", "values": ["ssd"]}]}},
                    {"weight": 2, "preference": {"matchExpressions": [
                        {"key": ZONE, "operator": "In", "values": ["z1"]}]}},
                ]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if pod_aff:
        spec.setdefault("affinity", {})["podAffinity"] = pod_aff
    if anti:
        spec.setdefault("affinity", {})["podAntiAffinity"] = anti
    return pod("web", cpu="400m", labels={"app": "web"}, owner=None, spec=spec)


def _service() -> Any:
    return decode_any({"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                       "spec": {"selector": {"app": "web"}}})


KINDS = ("anyway-zone", "anyway-host", "anyway-honor", "anyway-honor-taints",
         "anyway-honor-selector", "anyway-disk", "preferred-anti-host",
         "preferred-anti-zone", "preferred-anti-slot", "preferred-affinity", "node-preferred")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([7, 12, 105]),
    zones=st.integers(1, 4),
    unlabelled=st.integers(0, 3),
    seed=st.integers(0, 1000),
    deterministic=st.booleans(),
    uniform=st.booleans(),
    tainted=st.sampled_from([0, 0, 3]),
    running=st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from(["web", "other"]),
                  st.sampled_from(["plain", "plain", "preferred", "avoid", "hard", "elsewhere"])),
        max_size=12,
    ),
    kinds=st.lists(st.sampled_from(KINDS), min_size=0, max_size=3, unique=True),
    skew=st.integers(1, 3),
    service=st.booleans(),
    keyed=st.sampled_from([0, 1, 128]),
)
def test_soft_rules_batched_equal_one_by_one(
    n: int, zones: int, unlabelled: int, seed: int, deterministic: bool, uniform: bool,
    tainted: int, running: list[tuple[int, str, str]], kinds: list[str], skew: int,
    service: bool, keyed: int,
) -> None:
    s = _cluster(n, zones, unlabelled, seed, deterministic, uniform, tainted, running)
    if service:  # system-default spreading for the templates without constraints of their own
        s.add_object(_service())
    tpl = _template(tuple(kinds), skew)
    saved = batched._KEYED
    batched._KEYED = keyed  # 0: always on columns; 1: per key only in one-key windows
    try:
        fast = capacity(s, tpl, limit=60)
    finally:
        batched._KEYED = saved
    reference = capacity(s, tpl, limit=60, batch=False)
    assert fast.replicas == reference.replicas
    assert fast.stop_reason == reference.stop_reason
    assert reference.batched == 0
    if fast.count > 1:
        assert fast.batched == fast.count  # every replica was batched


@pytest.fixture
def calls() -> Iterator[dict[str, int]]:
    """How often each soft path chose a node (keyed) or scored columns (scores)."""
    seen = {"keyed": 0, "scores": 0}
    keyed, scores = soft.SoftScores.keyed, soft.SoftScores.scores

    def count_keyed(self: Any, *a: Any) -> Any:
        out = keyed(self, *a)
        seen["keyed"] += out is not None
        return out

    def count_scores(self: Any, *a: Any) -> Any:
        seen["scores"] += 1
        return scores(self, *a)

    soft.SoftScores.keyed = count_keyed
    soft.SoftScores.scores = count_scores
    try:
        yield seen
    finally:
        soft.SoftScores.keyed = keyed
        soft.SoftScores.scores = scores


@pytest.mark.parametrize("kinds", [
    ("anyway-zone",), ("anyway-zone", "anyway-host"), ("preferred-anti-host",),
    ("anyway-zone", "preferred-anti-host"), ("preferred-affinity", "preferred-anti-zone"),
    ("node-preferred",), ("anyway-honor", "node-preferred"),
])
def test_ties_are_drawn_per_key_as_on_totals(kinds: tuple[str, ...], calls: dict[str, int]) -> None:
    # Identical nodes: many nodes tie for the best score, so the random draw picks among
    # them; the keyed choice must draw the same number and take the same node.
    s = _cluster(120, 3, 0, 5, False, True, 0, [(i, "web", "plain") for i in range(0, 120, 7)])
    tpl = _template(kinds, 1)
    fast, slow = capacity(s, tpl, limit=150), capacity(s, tpl, limit=150, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 150
    assert calls["keyed"] >= 140  # the node was chosen per key (not on columns)


def test_system_default_spreading_of_a_service_is_scored_per_key(calls: dict[str, int]) -> None:
    s = _cluster(105, 3, 2, 7, False, True, 0, [(i, "web", "plain") for i in range(0, 105, 9)])
    s.add_object(_service())
    tpl = pod("web", cpu="400m", labels={"app": "web"}, owner=None)
    fast, slow = capacity(s, tpl, limit=80), capacity(s, tpl, limit=80, batch=False)
    assert fast.replicas == slow.replicas and fast.stop_reason == slow.stop_reason
    assert fast.batched == 80  # the first replica too: it scores with its own PreScore
    assert calls["keyed"] >= 70


def test_replicas_on_a_shared_fine_value_rescore_its_other_nodes() -> None:
    # "slot" has more values than a coarse key (its weights are kept per node): a replica
    # on n000 changes the weight of n080 too, which shares its slot.
    s = _cluster(105, 3, 0, 2, False, True, 0, [])
    tpl = _template(("preferred-anti-slot",), 1)
    fast, slow = capacity(s, tpl, limit=120), capacity(s, tpl, limit=120, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 120
    per_slot: dict[int, int] = {}
    for _name, node in fast.replicas:
        slot = int(node[1:]) % 80
        per_slot[slot] = per_slot.get(slot, 0) + 1
    assert max(per_slot.values()) - min(per_slot.values()) <= 1  # spread over the slots


def test_nodes_without_the_zone_count_in_the_domain_of_empty_value() -> None:
    # System-default spreading does not require the zone: nodes without it are scored (in
    # the domain ""), and a window of such nodes and zoned ones counts one domain more.
    s = Scheduler(clock=FakeClock(), seed=3)
    for i in range(110):
        labels = {HOST: f"n{i:03d}"}
        if i % 4:
            labels[ZONE] = f"z{i % 3}"
        s.add_node(Node.from_dict({"metadata": {"name": f"n{i:03d}", "labels": labels},
                                   "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}))
    for i in range(0, 110, 3):
        s.add_pod(pod(f"run{i}", node_name=f"n{i:03d}", labels={"app": "web"}, owner=None))
    s.add_object(_service())
    tpl = pod("web", cpu="100m", labels={"app": "web"}, owner=None)
    fast, slow = capacity(s, tpl, limit=200), capacity(s, tpl, limit=200, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 200


@pytest.mark.parametrize("byte_keys", [2, 20, 23])
def test_more_keys_than_bytes_hold(byte_keys: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The combined keys are one byte each while at most 256 (here fewer): beyond, the ids are
    # given afresh, and a list holds them when the keys held are still too many.
    s = _cluster(105, 3, 2, 4, False, False, 3, [(i, "web", "avoid") for i in range(0, 105, 4)])
    tpl = _template(("anyway-zone", "preferred-anti-host", "node-preferred"), 1)
    monkeypatch.setattr(soft, "_BYTE_KEYS", byte_keys)
    fast = capacity(s, tpl, limit=90)
    monkeypatch.undo()
    slow = capacity(s, tpl, limit=90, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 90


@pytest.mark.parametrize("kind", ["anyway-honor", "anyway-honor-taints", "anyway-honor-selector"])
def test_inclusion_policies_leave_nodes_out_of_the_counts(kind: str) -> None:
    # Many matching pods run on nodes the replicas cannot use (NoSchedule taints, the other
    # disk type): with nodeTaintsPolicy and nodeAffinityPolicy Honor they do not count.
    s = _cluster(105, 2, 0, 6, False, True, 3, [])
    for i in range(105):
        # Zone z0: pods on the ssd nodes; zone z1: pods on the NoSchedule nodes.
        busy = 2 if i % 2 == 0 and i % 3 == 0 else 3 if i % 2 == 1 and i % 17 == 3 else 0
        for j in range(busy):
            s.add_pod(pod(f"busy{i}-{j}", cpu="100m", node_name=f"n{i:03d}", labels={"app": "web"},
                          owner=None))
    tpl = _template((kind,), 1)
    fast, slow = capacity(s, tpl, limit=120), capacity(s, tpl, limit=120, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 120


def test_many_distinct_keys_score_on_columns(
    calls: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nodes of different sizes: the local totals differ, and with a limit of 1 key per
    # window the columns are scored instead; the replicas are the same.
    s = _cluster(105, 3, 0, 3, False, False, 3, [(i, "web", "avoid") for i in range(0, 105, 5)])
    tpl = _template(("anyway-zone", "preferred-anti-host"), 2)
    monkeypatch.setattr(batched, "_KEYED", 1)
    fast = capacity(s, tpl, limit=100)
    monkeypatch.undo()
    slow = capacity(s, tpl, limit=100, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 100
    assert calls["scores"] >= 90


# --- the soft-key scores against the plugins on windows ---------------------------------


def _plugin_scores(
    s: Scheduler, replica: Any, names: tuple[str, ...], window: list[Any]
) -> list[int]:
    """The plugins' PreScore, Score and NormalizeScore on the window, weighted and summed."""
    fwk = s.framework_for(replica)
    assert fwk is not None
    state = CycleState()
    totals = [0] * len(window)
    for pl in fwk.pre_score_plugins:
        if pl.name not in names:
            continue
        st_ = pl.pre_score(state, replica, window)
        if st_ is not None:
            assert st_.is_skip()
            continue
        scores = [NodeScore(ni.name, pl.score(state, replica, ni)[0]) for ni in window]
        assert pl.score_extensions().normalize_score(state, replica, scores) is None
        w = fwk.score_weights[pl.name]
        totals = [t + w * ns.score for t, ns in zip(totals, scores, strict=True)]
    return totals


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.integers(1, 4),
    unlabelled=st.integers(0, 4),
    running=st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from(["web", "other"]),
                  st.sampled_from(["plain", "preferred", "avoid", "hard"])),
        max_size=15,
    ),
    kinds=st.lists(st.sampled_from(KINDS[:-1]), min_size=1, max_size=3, unique=True),
    skew=st.integers(1, 3),
    service=st.booleans(),
    windows=st.lists(st.lists(st.integers(0, 29), min_size=2, max_size=12, unique=True),
                     min_size=1, max_size=4),
)
def test_soft_key_scores_equal_the_plugins_on_any_window(
    zones: int, unlabelled: int, running: list[tuple[int, str, str]], kinds: list[str],
    skew: int, service: bool, windows: list[list[int]],
) -> None:
    s = _cluster(30, zones, unlabelled, 1, False, True, 0, running)
    if service:
        s.add_object(_service())
    replica = _template(tuple(kinds), skew)
    s.cache.update_snapshot(s.snapshot)
    nodes = s.snapshot.node_info_list
    fwk = s.framework_for(replica)
    assert fwk is not None
    keep = soft.SoftScores(nodes)
    labels = window_mod.LabelColumns(nodes)
    spread_weight = affinity_weight = 0
    aff_scores = None
    for pl in fwk.pre_score_plugins:
        if pl.name == "PodTopologySpread":
            constraints = pl.get_constraints(replica, SCHEDULE_ANYWAY)
            if constraints:
                require_all = bool(replica.spec.topology_spread_constraints) or not pl.system_defaulted
                keep.spread = soft.SpreadTerms(tuple(constraints), require_all, replica, nodes,
                                               labels)
                spread_weight = fwk.score_weights[pl.name]
        if pl.name == "InterPodAffinity":
            state = CycleState()
            if pl.pre_score(state, replica, nodes) is None:
                carried = window_mod.AffinityScores(pl, s.objects)
                carried.start(state, replica)
                aff_scores = carried.scores
                affinity_weight = fwk.score_weights[pl.name]
    for positions in windows:
        positions = sorted(set(positions))
        window = [nodes[p] for p in positions]
        want = _plugin_scores(s, replica, ("PodTopologySpread", "InterPodAffinity"), window)
        pick = itemgetter(*positions)
        got = keep.scores(aff_scores, labels, pick, len(positions), spread_weight, affinity_weight)
        if got is None:  # one soft key: every node gets the same score
            assert len(set(want)) == 1
        else:
            assert got == want
        tot = [7 * (p % 3) for p in range(len(nodes))]
        keyed = keep.keyed(aff_scores, labels, tot, pick, len(positions), spread_weight,
                           affinity_weight, [], 1000)
        assert keyed is not None
        keys, table = keyed
        totals = [table[c] for c in keys]
        # Equal up to a constant (the soft score every node shares when there is one key).
        shifted = [w + tot[p] for w, p in zip(want, positions, strict=True)]
        assert len({a - b for a, b in zip(totals, shifted, strict=True)}) == 1
