"""Properties of the kubelet's memory ranking and reclaim loop over random pods."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.eviction import EvictionConfig, NodeEvictionManager, Summary
from kschedlib.eviction.kubelet import (
    PodStatsIndex,
    build_signal_to_rank_func,
    make_signal_observations,
    thresholds_met,
)
from tests.eviction.util import Gi, Mi, pod, pod_stats, summary

POD = st.tuples(
    st.sampled_from([None, "64Mi", "256Mi", "1Gi"]),     # memory request
    st.sampled_from([0, 0, 100, 1000]),                  # priority
    st.integers(min_value=0, max_value=2048),            # working set, Mi
    st.booleans(),                                       # statistics reported
)


def _cluster(specs: list[tuple[str | None, int, int, bool]]) -> tuple[list[Any], list[Any]]:
    pods = [pod(f"p{i}", mem=m, priority=prio) for i, (m, prio, _, _) in enumerate(specs)]
    stats = [pod_stats(p, mem=ws * Mi) for p, (_, _, ws, has) in zip(pods, specs, strict=True) if has]
    return pods, stats


@settings(max_examples=40, deadline=None)
@given(st.lists(POD, min_size=1, max_size=8))
def test_memory_ranking_is_ordered_by_the_kubelets_comparisons(specs: list[tuple[str | None, int, int, bool]]) -> None:
    pods, stats = _cluster(specs)
    rank = build_signal_to_rank_func("single")["memory.available"]
    ranked = rank.rank(pods, PodStatsIndex(Summary.from_dict(summary(pods=stats)).pods))
    for a, b in zip(ranked, ranked[1:], strict=False):
        for f in rank.comparisons:
            r = f(a, b)
            if r != 0:
                assert r < 0
                break


@settings(max_examples=25, deadline=None)
@given(st.lists(POD, min_size=1, max_size=6), st.integers(min_value=0, max_value=1024),
       st.sampled_from(["100Mi", "500Mi"]), st.sampled_from([None, "256Mi", "1Gi"]))
def test_reclaim_evicts_in_rank_order_until_value_plus_minimum_reclaim(
    specs: list[tuple[str | None, int, int, bool]], avail_mi: int, hard: str, reclaim: str | None
) -> None:
    pods, stats = _cluster(specs)
    doc: dict[str, object] = {"evictionHard": {"memory.available": hard}}
    if reclaim:
        doc["evictionMinimumReclaim"] = {"memory.available": reclaim}
    cfg = EvictionConfig.from_kubelet_configuration(doc)
    s = Summary.from_dict(summary(mem_avail=avail_mi * Mi, mem_ws=16 * Gi, pods=stats))
    passes = NodeEvictionManager("n1", cfg).reclaim(s, pods, 0.0)
    assert passes[-1].eviction is None
    rank = build_signal_to_rank_func("single")["memory.available"]
    remaining = list(pods)
    current = s
    for p in passes[:-1]:
        d = p.eviction
        assert d is not None
        expected = rank.rank(remaining, PodStatsIndex(current.pods))[0].pod
        assert d.pod.uid == expected.uid
        remaining = [q for q in remaining if q.uid != d.pod.uid]
        current = p.summary_after
    final = make_signal_observations(passes[-1].summary_after)
    if remaining:
        if len(passes) == 1:  # nothing evicted: the threshold was not met at all
            assert not thresholds_met(cfg.thresholds, final, False)
        else:  # evictions stopped once value + minimum reclaim was available
            assert not thresholds_met(cfg.thresholds, final, True)


TOLERATION = st.one_of(st.none(), st.integers(min_value=-5, max_value=600))


@settings(max_examples=30, deadline=None)
@given(st.lists(TOLERATION, min_size=0, max_size=3))
def test_taint_eviction_fires_at_the_smallest_toleration_seconds(seconds: list[int | None]) -> None:
    import attrs

    from kschedlib.api.node import Taint
    from tests.eviction.util import node, scheduler

    sched = scheduler(node())
    tolerations = [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                    **({"tolerationSeconds": s} if s is not None else {})} for s in seconds]
    sched.add_pod(pod("p", tolerations=tolerations or None))
    n = sched.cache.get_node("n1").node
    assert n is not None
    sched.update_node(attrs.evolve(n, spec=attrs.evolve(n.spec, taints=(Taint(key="k", effect="NoExecute"),))))
    start = sched.clock.now()
    fired_at = None
    for step in range(0, 700, 1 if not seconds else 5):
        sched.clock.set(start + step)
        if sched.eviction.tick():
            fired_at = step
            break
    if not seconds:
        expected: int | None = 0                 # not tolerated: at once
    elif all(s is None for s in seconds):
        expected = None                          # the first matching toleration holds forever
    else:
        # the first toleration matching the taint decides (GetMatchingTolerations)
        first = seconds[0]
        expected = None if first is None else max(0, first)
    if expected is None:
        assert fired_at is None
    else:
        assert fired_at is not None and expected <= fired_at < expected + 5


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=4), st.integers(min_value=1, max_value=6))
def test_a_budget_allows_exactly_its_disruptions(allowed: int, replicas: int) -> None:
    from kschedlib.api.workloads import PodDisruptionBudget
    from tests.eviction.util import node, scheduler

    sched = scheduler(node())
    for i in range(replicas):
        sched.add_pod(pod(f"w{i}", labels={"app": "w"}))
    sched.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "w"}}},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": replicas, "desiredHealthy": 1},
    }))
    codes = [sched.eviction.evict(f"default/w{i}").code for i in range(replicas)]
    assert codes.count(200) == min(allowed, replicas)
    assert all(c == 429 for c in codes[min(allowed, replicas):])
    left = sched.objects.get_object("PodDisruptionBudget", "default/w").status.disruptions_allowed
    assert left == allowed - min(allowed, replicas) >= 0
