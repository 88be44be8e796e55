"""kschedlib.replay: event replay by the FakeClock, workload inflation, records, and a small
cut of the FGD paper's experiment (policy order, determinism, local = Dask)."""

from __future__ import annotations

import json
from pathlib import Path

from kschedlib import Scheduler
from kschedlib.clock import FakeClock
from kschedlib.replay import ReplayEvent, discretize, inflate, paper, replay_events
from kschedlib.testing import make_node, make_pod
from kschedlib.traces import load_alibaba_gpu_trace

CUT = Path(__file__).resolve().parents[1] / "data" / "alibaba-gpu-v2023-cut"


def test_replay_events_follows_the_clock_and_releases_deleted_pods() -> None:
    sched = Scheduler(clock=FakeClock(), deterministic=True, explain=False)
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    a = make_pod("a").req(cpu="3").obj()
    b = make_pod("b").req(cpu="2").obj()
    events = [
        ReplayEvent(0.0, "add_node", node),
        ReplayEvent(10.0, "add_pod", a),
        ReplayEvent(20.0, "add_pod", b),  # does not fit until a leaves
        ReplayEvent(30.0, "delete_pod", a),
    ]
    res = replay_events(sched, events, sample_every=2,
                        samplers=[lambda s: {"pending": float(len(s.pending_pods()))}])
    outcomes = [(r["time"], r["outcome"]) for r in res.records]
    assert outcomes == [(0.0, ""), (10.0, "Scheduled"), (20.0, "Unschedulable"), (30.0, "")]
    assert sched.clock.now() >= 30.0
    last = res.records[-1]
    assert last["used_cpu"] == 2000 and last["alloc_ratio_cpu"] == 0.5  # b got in after a left
    assert res.records[1]["pending"] == 0.0 and res.records[3]["sampled"] is True
    rows = res.to_csv().splitlines()
    assert rows[0].startswith("event,time,outcome") and len(rows) == 5
    assert [json.loads(x)["event"] for x in res.to_jsonl().splitlines()] == [0, 1, 2, 3]


def test_inflate_shuffles_then_samples_up_to_the_target() -> None:
    pods = [make_pod(f"p{i}").req(cpu=str(i + 1)).obj() for i in range(5)]  # 15 cpus in all

    def cpus(p: object) -> int:
        return int(p.spec.containers[0].resources.requests["cpu"].value())  # type: ignore[attr-defined]

    out = inflate(pods, meter=cpus, capacity=10, ratio=3.0, seed=7)
    assert sorted(p.metadata.name for p in out[:5]) == [f"p{i}" for i in range(5)]
    assert sum(map(cpus, out)) <= 30 and all("-clone-" in p.metadata.name for p in out[5:])
    assert out == inflate(pods, meter=cpus, capacity=10, ratio=3.0, seed=7)
    assert out != inflate(pods, meter=cpus, capacity=10, ratio=3.0, seed=8)
    down = inflate(pods, meter=cpus, capacity=10, ratio=1.0, seed=7)
    assert sum(map(cpus, down)) <= 10 and len(down) < 5


def test_discretize_averages_per_arrived_percent() -> None:
    recs = [{"arrived_ratio_x": a, "alloc_ratio_x": u}
            for a, u in [(0.10, 0.10), (0.101, 0.08), (0.30, 0.25)]]
    assert discretize(recs, resource="x", points=[10, 20, 30, 31]) == {
        10: 9.0, 30: 25.0, 31: 25.0}


def test_trace_adapter_maps_fields() -> None:
    t = load_alibaba_gpu_trace(CUT)
    assert len(t.nodes) == 152 and len(t.tasks) == 400
    n0 = t.nodes[0]
    assert n0.metadata.labels["alibabacloud.com/gpu-card-model"] == "P100"
    assert n0.status.allocatable["alibabacloud.com/gpu-count"].value() == 2
    share = t.tasks[1].pod
    assert share.metadata.annotations == {"alibabacloud.com/gpu-milli": "460",
                                          "alibabacloud.com/gpu-count": "1"}
    assert share.metadata.labels["alibabacloud.com/qos"] == "LS"
    assert t.tasks[1].creation_time == 427061.0


def _cut_matrix(**kw: object) -> list[dict[str, object]]:
    return paper.paper_matrix(CUT, seeds=[42], **kw)  # type: ignore[arg-type]


def test_paper_cut_orders_the_policies_and_is_deterministic() -> None:
    records = paper.run_matrix(_cut_matrix())
    at100 = {r["policy"]: r["curve"]["100"] for r in records}
    assert set(at100) == set(paper.PAPER_POLICIES)
    others = [v for k, v in at100.items() if k not in ("FGD", "Random")]
    assert at100["FGD"] > max(others)  # FGD packs best, as in the paper
    assert at100["Random"] + 1 < min(others)  # every GPU-aware policy beats Random
    again = paper.experiment_record(_cut_matrix(policies=["FGD"])[0])
    assert again == next(r for r in records if r["policy"] == "FGD")
    rows = paper.headline_rows(records)
    assert [r["policy"] for r in rows] == list(paper.PAPER_POLICIES)
    assert all(r["paper"] is None for r in rows)  # a cut is not compared with the paper


def test_paper_matrix_records_are_identical_on_dask() -> None:
    from distributed import Client, LocalCluster

    params = _cut_matrix(policies=["BestFit", "Random"], limit_tasks=120)
    local = paper.run_matrix(params)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        seen: list[int] = []
        remote = paper.run_matrix(params, client=client, progress=lambda d, t: seen.append(d))
    assert remote == local and sorted(seen) == [1, 2]


def test_report_html_has_a_table_and_one_line_per_policy(tmp_path: Path) -> None:
    from kschedlib.replay import report
    from kschedlib.replay.__main__ import main

    curves = {"BestFit": {0: 0.0, 50: 50.0, 100: 92.5}, "FGD": {0: 0.0, 50: 50.0, 100: 95.0}}
    page = report.html_report([("default", curves)],
                              tables=[("t", [{"policy": "FGD", "mean": 95.0}], ["policy", "mean"])])
    assert page.count("<polyline") == 2 and "<td>95.00</td>" in page
    recs = tmp_path / "r.jsonl"
    recs.write_text("\n".join(json.dumps(
        {"task_list": "default", "policy": p, "seed": 42, "total_gpus": 6212, "cut": False,
         "curve": {"100": v}, "frag": [{"arrived_ratio_gpu_milli": 1.0, "idle_gpu_milli": 10.0,
                                        "frag_gpu_milli": 4.0}]})
        for p, v in (("BestFit", 92.9), ("FGD", 95.2))) + "\n")
    out = tmp_path / "r.html"
    assert main(["report", str(recs), "--html", str(out)]) == 0
    text = out.read_text()
    assert "<td>92.86</td>" in text and "<td>40.00</td>" in text  # paper column, frag share


def test_trace_event_replay_by_creation_and_deletion_times() -> None:
    from kschedlib.contrib import gpushare
    from kschedlib.replay import events_from_tasks
    from kschedlib.replay.paper import gpu_capacity, gpu_meter

    t = load_alibaba_gpu_trace(CUT, limit_tasks=60)
    events = events_from_tasks(t.nodes, t.tasks)
    assert [e.time for e in events] == sorted(e.time for e in events)
    sched = Scheduler(gpushare.profile_config("BestFit"), plugins=gpushare.plugins(),
                      clock=FakeClock(), explain=False, deterministic=True)
    res = replay_events(sched, events, meter=gpu_meter, capacity_meter=gpu_capacity)
    deleted = sum(1 for e in events if e.action == "delete_pod")
    assert deleted > 0 and res.scheduled > 0
    last = res.records[-1]
    bound = sum(gpu_meter(p)["gpu_milli"] for p in sched.bound_pods())
    assert last["used_gpu_milli"] == bound  # deletions gave their GPUs back


def _half(x: int) -> dict[str, object]:
    from kschedlib.errors import KSchedError

    if x < 0:
        raise KSchedError("negative")
    return {"x": x, "half": x / 2}


def test_sweep_run_tasks_keeps_order_and_turns_errors_into_records() -> None:
    from kschedlib.sweep import run_tasks

    seen: list[tuple[int, object]] = []
    out = run_tasks(_half, [4, -1, 2], on_record=lambda i, r: seen.append((i, r.get("x"))))
    assert out[0] == {"x": 4, "half": 2.0} and out[2] == {"x": 2, "half": 1.0}
    assert out[1]["error"] == "KSchedError: negative"
    assert seen == [(0, 4), (1, None), (2, 2)]


def test_compare_rows_reads_the_paper_curves() -> None:
    ref = paper.paper_curves()
    assert len(ref) == 17 and ref["default"]["FGD"][100] == 95.23
    curve = {str(x): v for x, v in ref["default"]["BestFit"].items()}
    curve["70"] = ref["default"]["BestFit"][70] + 1.5
    rec = {"task_list": "default", "policy": "BestFit", "seed": 42, "cut": False,
           "total_gpus": 6212, "curve": curve}
    (row,) = paper.compare_rows([rec, {**rec, "cut": True, "policy": "FGD"}])
    assert (row["policy"], row["at"], row["max_abs_diff"], row["within_1pt"]) == (
        "BestFit", 70, 1.5, False)


def test_plot_curves_draws_one_line_per_policy(tmp_path: Path) -> None:
    """The ``plot`` extra: a PNG with one line per policy (CI installs the extra)."""
    import importlib.util
    import os

    import pytest

    if importlib.util.find_spec("matplotlib") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must test the plot extra: matplotlib is not installed")
        pytest.skip("matplotlib (kschedlib[plot]) is not installed")
    from kschedlib.replay.report import plot_curves

    out = tmp_path / "curves.png"
    fig = plot_curves({"FGD": {0: 0.0, 50: 48.0, 100: 95.2}, "Random": {0: 0.0, 100: 86.3}},
                      out, title="default")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["FGD", "Random"]
    assert list(lines[0].get_ydata()) == [0.0, 48.0, 95.2]
