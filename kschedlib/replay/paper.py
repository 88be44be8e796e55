"""The FGD paper's experiment (Weng et al., USENIX ATC '23): the Alibaba GPU trace's nodes,
one task list inflated to ``ratio`` x the cluster's GPU capacity with ``seed``, one policy
of ``kschedlib.contrib.gpushare``; GPU allocation ratio against arrived workload."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.clock import FakeClock
from kschedlib.contrib import gpushare
from kschedlib.contrib.gpushare.frag import FRAG_CLASSES, node_frag_amounts
from kschedlib.contrib.gpushare.resources import MILLI, gpu_state, node_gpu_count, pod_shape
from kschedlib.replay.engine import ReplayResult, discretize, inflate, replay_submissions
from kschedlib.scheduler import Scheduler
from kschedlib.traces.alibaba import AlibabaGpuTrace, load_alibaba_gpu_trace

PAPER_SEEDS = tuple(range(42, 52))
PAPER_RATIO = 1.3
PAPER_POLICIES = tuple(gpushare.POLICIES)
PAPER_GPUS = 6212

#: The paper's published means (10 seeds) of the GPU allocation ratio (%) at 100 % arrived
#: workload on the default task list (its artifact's analysis_allo_discrete.csv).
PAPER_HEADLINE = {"Random": 86.30, "DotProd": 90.62, "GpuClustering": 91.65,
                  "GpuPacking": 91.78, "BestFit": 92.86, "FGD": 95.23}


def gpu_meter(pod: Pod) -> dict[str, int]:
    """milli-CPU and total milli-GPU a task asks for (the paper's two dimensions)."""
    s = pod_shape(pod)
    return {"gpu_milli": s.total_milli_gpu, "cpu": s.milli_cpu}


def gpu_capacity(node: Node) -> dict[str, int]:
    cpu = node.status.allocatable.get("cpu")
    return {"gpu_milli": node_gpu_count(node) * MILLI,
            "cpu": cpu.milli_value() if cpu is not None else 0}


class FragSampler:
    """The cluster's fragmentation breakdown (milli-GPU per class, and ``frag_gpu_milli``:
    idle GPU outside q3_satisfied) against the typical pods, read from the NodeInfos."""

    def __init__(self, typical: Sequence[gpushare.TypicalPod]) -> None:
        self.typical = tuple(typical)

    def __call__(self, scheduler: Scheduler) -> dict[str, float]:
        snap = scheduler.snapshot
        scheduler.cache.update_snapshot(snap)
        total = [0.0] * len(FRAG_CLASSES)
        for ni in snap.node_info_list:
            st = gpu_state(ni)
            cpu_left = ni.allocatable.milli_cpu - ni.requested.milli_cpu
            for i, v in enumerate(node_frag_amounts(cpu_left, st.milli_left, st.model,
                                                    self.typical)):
                total[i] += v
        out = {f"frag_{k}": round(v, 3) for k, v in zip(FRAG_CLASSES, total, strict=True)}
        out["idle_gpu_milli"] = round(sum(total), 3)
        out["frag_gpu_milli"] = round(sum(total) - total[2], 3)
        return out


@functools.lru_cache(maxsize=4)
def _trace(directory: str, task_list: str, node_names: tuple[str, ...] | None,
           limit_tasks: int | None) -> AlibabaGpuTrace:
    return load_alibaba_gpu_trace(directory, task_list, node_names=node_names,
                                  limit_tasks=limit_tasks)


def shuffled_node_names(nodes: Sequence[Node], seed: int) -> list[Node]:
    """The nodes renamed ``<k>-<name>`` with ``k`` a seeded random permutation: with ties
    broken by the smallest name (the simulator's kube-scheduler fork does so, for
    reproducibility), tied nodes are then taken in a random but fixed order."""
    ordered = sorted(nodes, key=lambda n: n.metadata.name)
    perm = list(range(len(ordered)))
    random.Random(f"nodes-{seed}").shuffle(perm)
    out = []
    for k, n in zip(perm, ordered, strict=True):
        name = f"{k:04d}-{n.metadata.name}"
        labels = {**n.metadata.labels, "kubernetes.io/hostname": name}
        meta = attrs.evolve(n.metadata, name=name, uid=name, labels=labels)
        out.append(attrs.evolve(n, metadata=meta))
    return out


def experiment_pods(trace: AlibabaGpuTrace, seed: int, ratio: float) -> list[Pod]:
    """The submissions of one experiment: the task list shuffled with ``seed`` and inflated
    to ``ratio`` x the GPU capacity."""
    return inflate(trace.pods, meter=lambda p: pod_shape(p).total_milli_gpu,
                   capacity=trace.gpu_capacity_milli, ratio=ratio, seed=seed)


def run_experiment(
    trace_dir: str | Path,
    task_list: str = "default",
    policy: str = "FGD",
    seed: int = 42,
    ratio: float = PAPER_RATIO,
    *,
    node_names: Iterable[str] | None = None,
    limit_tasks: int | None = None,
    frag_samples: Sequence[float] = (),
) -> ReplayResult:
    """One experiment; records per submitted task with GPU and CPU arrived/alloc ratios
    (fragmentation sampled where the arrived GPU share crosses ``frag_samples``)."""
    trace = _trace(str(trace_dir), task_list,
                   tuple(sorted(node_names)) if node_names is not None else None, limit_tasks)
    typical = gpushare.typical_pods(pod_shape(p) for p in trace.pods)
    sched = Scheduler(gpushare.profile_config(policy, typical), plugins=gpushare.plugins(),
                      seed=seed, explain=False, clock=FakeClock(), deterministic=True)
    for fwk in sched.frameworks.values():
        if fwk.node_local_cache is not None:
            fwk.node_local_cache.max_tables = 1024
    pods = experiment_pods(trace, seed, ratio)
    samplers = [FragSampler(typical)] if frag_samples else []
    meta = {"task_list": trace.task_list, "policy": policy, "seed": seed, "ratio": ratio,
            "total_gpus": trace.gpu_capacity_milli // MILLI,
            "cut": node_names is not None or limit_tasks is not None}
    nodes = shuffled_node_names(trace.nodes, seed)
    return replay_submissions(sched, nodes, pods, meter=gpu_meter,
                              capacity_meter=gpu_capacity, samplers=samplers,
                              sample_ratios=frag_samples, ratio_resource="gpu_milli",
                              meta=meta)


def summarize(result: ReplayResult, points: Iterable[int] | None = None) -> dict[str, Any]:
    """A compact record of one experiment: the discrete GPU allocation curve (percent at
    each percent of arrived workload), totals and the sampled fragmentation."""
    ratio = float(result.meta.get("ratio", PAPER_RATIO))
    pts = points if points is not None else range(0, int(round(ratio * 100)) + 1)
    curve = discretize(result.records, resource="gpu_milli", points=pts)
    frag = [
        {k: v for k, v in r.items() if k.startswith(("frag_", "idle_", "arrived_ratio_gpu"))}
        for r in result.records if r.get("sampled")
    ]
    return {**result.meta, "submitted": len(result.records), "scheduled": result.scheduled,
            "failed": result.failed, "curve": {str(k): v for k, v in curve.items()},
            "frag": frag}


def experiment_record(params: Mapping[str, Any]) -> dict[str, Any]:
    """``run_experiment(**params)`` summarised: what one matrix task returns."""
    p = dict(params)
    return summarize(run_experiment(**p))


def paper_matrix(
    trace_dir: str | Path,
    *,
    task_lists: Sequence[str] = ("default",),
    policies: Sequence[str] = PAPER_POLICIES,
    seeds: Sequence[int] = PAPER_SEEDS,
    ratio: float = PAPER_RATIO,
    node_names: Iterable[str] | None = None,
    limit_tasks: int | None = None,
    frag_samples: Sequence[float] = (),
) -> list[dict[str, Any]]:
    """The experiments of a matrix (task lists x policies x seeds) as parameter dicts for
    ``experiment_record``; the paper's is 17 task lists x 6 policies x 10 seeds = 1,020."""
    names = tuple(sorted(node_names)) if node_names is not None else None
    return [
        {"trace_dir": str(trace_dir), "task_list": t, "policy": p, "seed": s, "ratio": ratio,
         "node_names": names, "limit_tasks": limit_tasks, "frag_samples": tuple(frag_samples)}
        for t in task_lists for s in seeds for p in policies
    ]


def run_matrix(
    params: Sequence[Mapping[str, Any]],
    *,
    client: Any = None,
    address: str | None = None,
    progress: Any = None,
    on_record: Any = None,
) -> list[dict[str, Any]]:
    """Run the experiments through ``kschedlib.sweep.run_tasks``: locally, or on Dask with
    ``client``/``address``; the records are identical either way. ``on_record(i, record)``
    sees each record as it arrives."""
    from kschedlib.sweep.execute import run_tasks

    return run_tasks(experiment_record, list(params), client=client, address=address,
                     progress=progress, name="kschedlib-replay", on_record=on_record)


def mean_curves(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[int, float]]:
    """(task list, policy) -> mean allocation ratio (%) per arrived percent over seeds."""
    acc: dict[tuple[str, str], dict[int, list[float]]] = {}
    for r in records:
        if "curve" not in r:
            continue
        d = acc.setdefault((r["task_list"], r["policy"]), {})
        for k, v in r["curve"].items():
            d.setdefault(int(k), []).append(float(v))
    return {key: {x: round(sum(v) / len(v), 2) for x, v in sorted(d.items())}
            for key, d in acc.items()}


def headline_rows(
    records: Iterable[Mapping[str, Any]], *, task_list: str = "default", at: int = 100
) -> list[dict[str, Any]]:
    """Per policy: the mean GPU allocation at ``at`` % arrived, the seeds it averages and,
    on the default task list at 100 %, the paper's figure."""
    recs = [r for r in records if r.get("task_list") == task_list and "curve" in r]
    curves = mean_curves(recs)
    rows = []
    for policy in PAPER_POLICIES:
        c = curves.get((task_list, policy))
        if c is None or at not in c:
            continue
        seeds = sorted({int(r["seed"]) for r in recs if r["policy"] == policy})
        full = all(not r.get("cut") and r.get("total_gpus") == PAPER_GPUS
                   for r in recs if r["policy"] == policy)
        paper = (PAPER_HEADLINE.get(policy)
                 if (task_list == "default" and at == 100 and full) else None)
        rows.append({"policy": policy, "mean": c[at], "seeds": seeds, "paper": paper,
                     "diff": None if paper is None else round(c[at] - paper, 2)})
    return rows


def frag_rows(
    records: Iterable[Mapping[str, Any]], *, task_list: str = "default", at: float = 1.0
) -> list[dict[str, Any]]:
    """Per policy: the mean fragmentation breakdown (milli-GPU per class, and the fragmented
    share of idle GPU in %) at the first sample where the arrived GPU share reached ``at``."""
    acc: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("task_list") != task_list:
            continue
        hit = next((f for f in r.get("frag", ()) if f.get("arrived_ratio_gpu_milli", 0) >= at),
                   None)
        if hit is not None:
            acc.setdefault(r["policy"], []).append(hit)
    rows = []
    for policy in PAPER_POLICIES:
        samples = acc.get(policy)
        if not samples:
            continue
        row: dict[str, Any] = {"policy": policy}
        for k in ("idle_gpu_milli", "frag_gpu_milli", *(f"frag_{c}" for c in FRAG_CLASSES)):
            row[k] = round(sum(float(f.get(k, 0.0)) for f in samples) / len(samples), 1)
        idle = row["idle_gpu_milli"]
        row["frag_pct"] = round(100.0 * row["frag_gpu_milli"] / idle, 2) if idle else 0.0
        rows.append(row)
    return rows


def paper_curves() -> dict[str, dict[str, dict[int, float]]]:
    """The paper artifact's mean curves (10 seeds): task list -> policy -> arrived % (every
    10 %) -> GPU allocation ratio %, from its expected results."""
    path = Path(__file__).resolve().parent / "data" / "fgd_atc23_curves.json"
    raw = json.loads(path.read_text())["curves"]
    return {t: {p: {int(x): float(v) for x, v in c.items()} for p, c in ps.items()}
            for t, ps in raw.items()}


def compare_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (task list, policy) of full-size runs: the largest |kschedlib - paper| over the
    paper's points (every 10 % of arrived workload) and where it is."""
    recs = [r for r in records if "curve" in r and not r.get("cut")
            and r.get("total_gpus") == PAPER_GPUS]
    ours = mean_curves(recs)
    ref = paper_curves()
    rows = []
    for (t, p), c in sorted(ours.items(), key=lambda kv: (kv[0][0] != "default", kv[0])):
        theirs = ref.get(t, {}).get(p)
        if theirs is None:
            continue
        diffs = {x: round(c[x] - v, 2) for x, v in theirs.items() if x in c}
        if not diffs:
            continue
        worst = max(diffs, key=lambda x: abs(diffs[x]))
        seeds = sorted({int(r["seed"]) for r in recs if r["task_list"] == t and r["policy"] == p})
        rows.append({"task_list": t, "policy": p, "seeds": seeds, "max_abs_diff": abs(diffs[worst]),
                     "at": worst, "within_1pt": abs(diffs[worst]) <= 1.0})
    return rows
