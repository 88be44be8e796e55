"""kschedlib.contrib.gpushare: per-GPU accounting, Filter/Reserve and the six policies."""

from __future__ import annotations

import pytest

from kschedlib import Scheduler
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.contrib import gpushare as g
from kschedlib.contrib.gpushare.plugins import (
    BestFitScore,
    DotProductScore,
    GpuClusteringScore,
    GpuPackingScore,
)
from kschedlib.errors import ConfigError
from kschedlib.framework.types import NodeInfo
from kschedlib.testing import make_node, make_pod


def gpu_node(name: str, gpus: int, cpu: int = 32, model: str = "T4") -> Node:
    return (make_node(name).capacity({"cpu": str(cpu), "memory": "256Gi", "pods": "110",
                                      g.GPU_COUNT: str(gpus), g.GPU_MILLI: str(gpus * 1000)})
            .label(g.GPU_MODEL, model).obj())


def gpu_pod(name: str, milli: int, count: int = 1, cpu: str = "1", model: str = "") -> Pod:
    w = make_pod(name).req(cpu=cpu).annotation(g.GPU_MILLI, str(milli)).annotation(
        g.GPU_COUNT, str(count))
    if model:
        w = w.annotation(g.GPU_MODEL, model)
    return w.obj()


def scheduler(policy: str, typical: tuple[g.TypicalPod, ...] = ()) -> Scheduler:
    return Scheduler(g.profile_config(policy, typical), plugins=g.plugins(), seed=1,
                     deterministic=True, explain=False)


def test_pod_shape_and_node_state_follow_pods() -> None:
    s = g.pod_shape(gpu_pod("a", 300, cpu="2"))
    assert (s.milli_cpu, s.milli_gpu, s.gpu_count, s.is_share, s.affinity_tag) == (
        2000, 300, 1, True, "share-gpu")
    assert g.pod_shape(make_pod("c").obj()).milli_cpu == 100  # non-zero default
    ni = NodeInfo(gpu_node("n", 2))
    a = gpu_pod("a", 300).with_node_name("n").with_annotations({g.GPU_INDEX: "1"})
    ni.add_pod(a)
    st = g.gpu_state(ni)
    assert st.milli_left == [1000, 700] and st.affinity == {"share-gpu": 1}
    ni.add_pod(gpu_pod("b", 1000).with_node_name("n").with_annotations({g.GPU_INDEX: "0"}))
    assert st.milli_left == [0, 700] and st.affinity == {"share-gpu": 1, "1-gpu": 1}
    ni.remove_pod(a)
    assert st.milli_left == [0, 1000] and st.affinity == {"1-gpu": 1}


def test_share_pods_pack_on_one_gpu_and_deletion_releases_it() -> None:
    sched = scheduler("BestFit")
    sched.add_node(gpu_node("n1", 2))
    for i in range(3):
        sched.add_pod(gpu_pod(f"p{i}", 300))
    results = sched.run()
    assert [r.node for r in results] == ["n1"] * 3
    idx = sorted(p.metadata.annotations[g.GPU_INDEX] for p in sched.bound_pods())
    assert idx == ["0", "0", "0"]  # best fit keeps filling the same GPU
    sched.add_pod(gpu_pod("big", 1000, 2))
    (r,) = sched.run()
    assert r.outcome.value == "Unschedulable"
    assert "didn't have enough free GPU" in r.message
    sched.delete_pod("default/big")
    for i in range(3):
        sched.delete_pod(f"default/p{i}")
    sched.add_pod(gpu_pod("big2", 1000, 2))
    (r,) = sched.run()
    assert r.node == "n1"
    assert [p.metadata.annotations[g.GPU_INDEX] for p in sched.bound_pods()] == ["0-1"]


def test_model_constraint_and_insufficient_gpu_are_filtered() -> None:
    sched = scheduler("GpuPacking")
    sched.add_node(gpu_node("t4", 1, model="T4"))
    sched.add_node(gpu_node("v100", 1, model="V100M16"))
    sched.add_pod(gpu_pod("want-v100", 1000, model="V100M16|V100M32"))
    sched.add_pod(gpu_pod("two", 1000, 2))
    by_key = {r.pod.metadata.name: r for r in sched.run()}
    assert by_key["want-v100"].node == "v100"
    assert by_key["two"].outcome.value == "Unschedulable"
    assert "didn't have enough free GPU" in by_key["two"].message


def view(cpu_left: int, left: tuple[int, ...], cap: int = 32000, model: str = "T4") -> g.NodeView:
    return g.NodeView(cpu_left, cap, left, model)


def test_policy_scores_on_hand_computed_states() -> None:
    share = g.PodShape(4000, 500, 1)
    whole = g.PodShape(8000, 1000, 1)
    pack = GpuPackingScore(None, None).score_view
    assert pack(share, view(32000, (1000, 1000)))[0] == 33 - 2  # idle node
    assert pack(share, view(32000, (600, 1000)))[0] == 100 - 6  # partly used GPU, 60 % free
    assert pack(whole, view(32000, (600, 1000)))[0] == 50 - 1  # takes a fresh GPU
    best = BestFitScore(None, None).score_view
    assert best(share, view(32000, (1000, 1000)))[0] == int(
        (1 - ((32000 - 4000) / 128000 * 0.5 + 1500 / 8000 * 0.5)) * 100)
    values = [40, 90, 65]
    BestFitScore(None, None).normalize_score_values(None, None, values)  # type: ignore[arg-type]
    assert values == [0, 100, 50]
    dot = DotProductScore(None, None).score_view
    assert dot(share, view(64000, (1000,)))[0] == int(
        100 * (1 - (0.5 * 4000 / 128000 + 1000 / 8000 * 500 / 8000) / 2))
    clus = GpuClusteringScore._score
    assert clus(share, {"share-gpu": 2}, 7000, "T4") == 25 * 1000 // 8000 + 75
    assert clus(share, {"share-gpu": 1, "1-gpu": 1}, 7000, "T4") == 3 + 50
    assert clus(share, {}, 8000, "T4") == 25
    assert clus(share, {"1-gpu": 1}, 7000, "T4") == 3
    assert clus(g.PodShape(1000), {}, 8000, "T4") == 0


def test_fgd_prefers_the_placement_that_reduces_fragmentation() -> None:
    typical = (g.TypicalPod(g.PodShape(1000, 1000, 1), 0.5),
               g.TypicalPod(g.PodShape(1000, 500, 1), 0.5))
    meter = g.FragMeter(typical)
    # A GPU with 500 left is fragment for whole-GPU tasks; filling it removes that fragment.
    assert meter.score(32000, (500, 1000), "T4") == pytest.approx(0.5 * 500)
    score_used, gpu_used = g.fgd_score(view(32000, (500, 1000)), g.PodShape(1000, 500, 1), meter)
    score_idle, _ = g.fgd_score(view(32000, (1000, 1000)), g.PodShape(1000, 500, 1), meter)
    assert gpu_used == 0 and score_used > score_idle
    amounts = g.node_frag_amounts(32000, (500, 1000), "T4", typical)
    assert sum(amounts) == pytest.approx(1500) and amounts[1] == pytest.approx(250)


def test_typical_pods_cover_the_popular_shapes() -> None:
    shapes = [g.PodShape(1000, 500, 1)] * 90 + [g.PodShape(2000)] * 8 + [g.PodShape(3000)] * 2
    tp = g.typical_pods(shapes)
    assert [t.shape for t in tp] == [g.PodShape(1000, 500, 1), g.PodShape(2000)]
    assert sum(t.weight for t in tp) == pytest.approx(1.0)
    assert g.TypicalPod.from_dict(tp[0].to_dict()) == tp[0]


def test_bad_configuration_is_a_typed_error() -> None:
    with pytest.raises(ConfigError, match="unknown policy"):
        g.profile_config("Nope")
    cfg = g.profile_config("BestFit")
    cfg["profiles"][0]["pluginConfig"][0]["args"]["gpuSelMethod"] = "nope"
    with pytest.raises(ConfigError, match="gpuSelMethod"):
        Scheduler(cfg, plugins=g.plugins())


@pytest.mark.parametrize("policy", ["FGD", "GpuClustering", "Random"])
def test_reuse_gives_the_decisions_of_recomputation(policy: str) -> None:
    """Node-local reuse (and the policies' memos) against a scheduler that recomputes."""
    from pathlib import Path

    from kschedlib.clock import FakeClock
    from kschedlib.replay import paper
    from kschedlib.replay.engine import replay_submissions
    from kschedlib.traces import load_alibaba_gpu_trace

    cut = Path(__file__).resolve().parents[1] / "data" / "alibaba-gpu-v2023-cut"
    trace = load_alibaba_gpu_trace(cut)
    nodes = paper.shuffled_node_names(trace.nodes[::3], 42)
    capacity = sum(g.pod_shape(p).total_milli_gpu for p in trace.pods)
    pods = paper.inflate(trace.pods, meter=lambda p: g.pod_shape(p).total_milli_gpu,
                         capacity=capacity, ratio=0.25, seed=42)
    typical = g.typical_pods(g.pod_shape(p) for p in trace.pods)
    placements = []
    for reuse in (True, False):
        sched = Scheduler(g.profile_config(policy, typical), plugins=g.plugins(), seed=42,
                          clock=FakeClock(), explain=False, deterministic=True,
                          node_local_cache=reuse)
        replay_submissions(sched, nodes, pods)
        placements.append(sorted((p.key, p.spec.node_name,
                                  p.metadata.annotations.get(g.GPU_INDEX, ""))
                                 for p in sched.bound_pods()))
    assert placements[0] == placements[1] and len(placements[0]) > 50


def test_a_rejected_gpu_pod_is_retried_when_a_gpu_pod_leaves() -> None:
    sched = scheduler("FGD", (g.TypicalPod(g.PodShape(1000, 1000, 1), 1.0),))
    sched.add_node(gpu_node("n1", 1))
    sched.add_pod(gpu_pod("a", 1000))
    sched.add_pod(gpu_pod("b", 1000))
    outcomes = {r.pod.metadata.name: r.outcome.value for r in sched.run()}
    assert outcomes == {"a": "Scheduled", "b": "Unschedulable"}
    sched.delete_pod("default/a")
    assert [(r.pod.metadata.name, r.node) for r in sched.run()] == [("b", "n1")]
