"""kschedlib simulate and the benchmark entry point."""

from __future__ import annotations

import io
import json
from pathlib import Path

from kschedlib.__main__ import main
from kschedlib.bench.scheduling import run as bench_run
from kschedlib.cli.simulate import main as simulate_main
from tests.corpus import CORPUS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster.json"


def test_simulate_json_reports_placements_preemption_and_failures() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert simulate_main([str(EXAMPLE), "--json"], out, err) == 0
    data = json.loads(out.getvalue())
    by_pod = {p["pod"]: p for p in data["pods"]}
    assert by_pod["ml/trainer"]["node"] == "gpu1"  # the only node with GPUs, tolerated taint
    assert by_pod["shop/reports"]["node"] is None
    assert "didn't match Pod's node affinity/selector" in by_pod["shop/reports"]["message"]
    (pre,) = data["preemptions"]
    assert pre["pod"] == "shop/checkout-db" and pre["victims"] == ["shop/batch-1"]
    assert by_pod["shop/checkout-db"]["node"] == pre["nominatedNode"]
    api_nodes = {by_pod[f"shop/api-{i}"]["node"] for i in range(3)}
    assert len(api_nodes) == 3  # required hostname anti-affinity
    assert {n["node"] for n in data["nodes"]} == {"a1", "a2", "a3", "b1", "b2", "gpu1"}
    # The DRA inference pod gets one of gpu1's two DRA GPUs through its generated claim.
    assert by_pod["ml/inference"]["node"] == "gpu1"
    (claim,) = data["resourceClaims"]
    assert claim["pod"] == "ml/inference" and claim["claim"] == "ml/inference-gpu-q8w4z"
    assert [d["device"] for d in claim["devices"]] == ["gpu-0"]
    assert data["deviceUtilization"] == [
        {"node": "gpu1", "devicesAllocated": 1, "devicesPublished": 2}
    ]


def test_simulate_text_and_explain() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert simulate_main([str(EXAMPLE), "--explain", "shop/web-0", "--quiet"], out, err) == 0
    text = out.getvalue()
    assert "Placements (10/11 pods scheduled)" in text
    assert "ml/inference  ml/inference-gpu-q8w4z: gpu.example.com/gpu1/gpu-0 (gpu)" in text
    assert "gpu1                    1/2     50.0%" in text
    assert "Preemptions (1)" in text
    assert "Pod shop/web-0 (profile default-scheduler)" in text
    assert "NodeResourcesFit" in text and "Selected:" in text


def test_simulate_folder_of_manifests(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(
        """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: "8"}}}]}
"""
    )
    (tmp_path / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 100\n"
    )
    out = io.StringIO()
    assert simulate_main([str(tmp_path), "--json"], out, io.StringIO()) == 0
    pods = {p["pod"]: p for p in json.loads(out.getvalue())["pods"]}
    assert pods["default/small"]["node"] == "n1"
    assert pods["default/huge"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_simulate_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "nodes": [{"metadata": {"name": "n"},
                                                       "status": {"allocatable": {"cpu": "1.5.0"}}}]}))
    err = io.StringIO()
    assert simulate_main([str(bad)], io.StringIO(), err) == 2
    assert 'node n: status.allocatable.cpu: invalid quantity "1.5.0"' in err.getvalue()


def test_top_level_command_dispatch(capsys: object) -> None:
    assert main(["--help"]) == 0
    assert main(["nope"]) == 2


def test_bench_prints_pods_per_second_last() -> None:
    out = io.StringIO()
    figures = bench_run(str(CORPUS / "basics-002.json"), out=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[-1].startswith("pods/second: ")
    assert figures["scheduled"] >= 1 and figures["pods_per_second"] > 0
    assert any(line.startswith("peak memory: ") for line in lines)


def test_bench_synthetic_spread_workload_schedules_with_constraints() -> None:
    from kschedlib.bench.workloads import anti_affinity_spread_pods

    pods = anti_affinity_spread_pods(2, 3)
    assert len(pods) == 6
    spec = pods[0].spec
    assert spec.topology_spread_constraints[0].topology_key == "topology.kubernetes.io/zone"
    assert spec.affinity is not None and spec.affinity.pod_anti_affinity is not None


def test_simulate_piped_into_head_exits_quietly() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        f'"{sys.executable}" -m kschedlib simulate "{EXAMPLE}" --quiet | head -1',
        shell=True, capture_output=True, text=True, timeout=120,
    )
    assert proc.stdout.startswith("Placements (")
    assert "Traceback" not in proc.stderr


GANG_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gang-job.yaml"


def test_simulate_feature_gates_on_the_gang_example() -> None:
    out, err = io.StringIO(), io.StringIO()
    gates = "GenericWorkload=true,GangScheduling=true"
    assert simulate_main([str(GANG_EXAMPLE), "--json", "--feature-gates", gates], out, err) == 0
    pods = {p["pod"]: p for p in json.loads(out.getvalue())["pods"]}
    assert {k for k, p in pods.items() if p["outcome"] == "Scheduled"} >= {
        "ml/trial-a-0", "ml/trial-a-1", "ml/trial-b-0", "ml/trial-b-1", "ml/training-driver"
    }
    waiting = [k for k, p in pods.items() if p["outcome"] == "Waiting"]
    assert len(waiting) == 3 and all(k.startswith("ml/training-worker") for k in waiting)
    assert pods["ml/eval-0"]["outcome"] is None
    assert "waiting for minCount pods from a gang to appear in scheduling queue" in pods["ml/eval-0"]["message"]
    # Without the gates the same pods are placed one by one: no pod waits.
    out = io.StringIO()
    assert simulate_main([str(GANG_EXAMPLE), "--json"], out, io.StringIO()) == 0
    assert all(p["outcome"] != "Waiting" for p in json.loads(out.getvalue())["pods"])


def test_simulate_feature_gates_text_and_errors() -> None:
    out, err = io.StringIO(), io.StringIO()
    gates = "GenericWorkload=true,GangScheduling=true"
    assert simulate_main([str(GANG_EXAMPLE), "--quiet", "--feature-gates", gates], out, err) == 0
    text = out.getvalue()
    assert "Waiting at Permit (3)" in text
    assert "waiting for 1 more; the group times out in 300s" in text
    out = io.StringIO()
    argv = [str(GANG_EXAMPLE), "--quiet", "--feature-gates", gates, "--explain", "ml/eval-0"]
    assert simulate_main(argv, out, io.StringIO()) == 1
    assert out.getvalue().rstrip().endswith(
        "no scheduling attempt recorded for ml/eval-0: GangScheduling: waiting for minCount pods "
        "from a gang to appear in scheduling queue (gang ml/sweep/eval: quorum not met, 2 of "
        "minCount 3 pods exist, waiting for 1 more)"
    )
    err = io.StringIO()
    assert simulate_main([str(GANG_EXAMPLE), "--feature-gates", "Bogus=true"], io.StringIO(), err) == 2
    assert err.getvalue() == (
        'kschedlib simulate: invalid argument "Bogus=true" for "--feature-gates" flag: '
        "unrecognized feature gate: Bogus\n"
    )
    err = io.StringIO()
    assert simulate_main(
        [str(GANG_EXAMPLE), "--feature-gates", "SidecarContainers=false"], io.StringIO(), err
    ) == 2
    assert "feature is locked to true" in err.getvalue()
