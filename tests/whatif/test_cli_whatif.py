"""kschedlib capacity / drain on the bundled example cluster."""

from __future__ import annotations

import io
import json
from pathlib import Path

from kschedlib.__main__ import main
from kschedlib.cli.whatif import capacity_main, drain_main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster.json"

POD = """apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default, labels: {app: probe}}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: 500m, memory: 512Mi}}
"""


def test_capacity_text_and_json(tmp_path: Path) -> None:
    pod = tmp_path / "probe.yaml"
    pod.write_text(POD)
    out, err = io.StringIO(), io.StringIO()
    assert capacity_main([str(pod), "--cluster", str(EXAMPLE)], out, err) == 0
    lines = out.getvalue().splitlines()
    # The example's pending pods are scheduled first (as simulate schedules them), then the
    # replicas fill what they leave.
    assert lines[0].startswith("10 replica(s) of default/probe fit on 4 node(s); stopped: 0/6 nodes")
    assert err.getvalue().splitlines() == [
        "kschedlib capacity: scheduled the input's 11 pending pods first; "
        "1 stay pending: shop/reports"
    ]
    assert lines[2].split() == ["NODE", "REPLICAS"]
    out = io.StringIO()
    assert capacity_main([str(pod), "--cluster", str(EXAMPLE), "--limit", "3", "--json"], out, err) == 0
    data = json.loads(out.getvalue())
    assert data["count"] == 3 and data["stopReason"] == "limit" and sum(data["distribution"].values()) == 3


def test_drain_text_json_and_ranking() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert drain_main(["a1", "--cluster", str(EXAMPLE)], out, err) == 1  # a bare pod blocks
    text = out.getvalue()
    assert text.startswith("a1: cannot be drained")
    assert "NotReplicated: shop/batch-0 is not replicated" in text
    out = io.StringIO()
    # The example's pending pods are bare pods: once placed (as simulate places them), they
    # block every drain of their node.
    assert drain_main(["gpu1", "--cluster", str(EXAMPLE), "--json"], out, err) == 1
    assert json.loads(out.getvalue())["success"] is False
    out = io.StringIO()
    assert drain_main(["--cluster", str(EXAMPLE)], out, err) == 0
    assert out.getvalue().startswith("0 node(s) removable one after another")


def test_errors_are_reported_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "two.yaml"
    bad.write_text(POD + "---\n" + POD)
    out, err = io.StringIO(), io.StringIO()
    assert capacity_main([str(bad), "--cluster", str(EXAMPLE)], out, err) == 2
    assert "expected exactly one Pod" in err.getvalue()
    assert drain_main(["x", "--cluster", str(tmp_path / "missing.json")], out, err) == 2
    assert main(["drain", "gpu1", "--cluster", str(EXAMPLE), "--json"]) == 1


def test_whatif_verdict(tmp_path: Path) -> None:
    from kschedlib.cli.whatif import whatif_main

    pod = tmp_path / "probe.yaml"
    pod.write_text(POD)
    out, err = io.StringIO(), io.StringIO()
    assert whatif_main([str(pod), "--cluster", str(EXAMPLE)], out, err) == 0
    text = out.getvalue()
    assert text.startswith("default/probe: schedulable on ")
    assert "Pod default/probe (profile default-scheduler)" in text and "Selected: " in text
    big = tmp_path / "big.yaml"
    big.write_text(POD.replace("500m", "64"))
    out = io.StringIO()
    assert whatif_main([str(big), "--cluster", str(EXAMPLE), "--json"], out, err) == 1
    data = json.loads(out.getvalue())
    assert data["schedulable"] is False and data["message"].startswith("0/6 nodes are available")


def test_whatif_commands_see_the_cluster_simulate_leaves(tmp_path: Path) -> None:
    """capacity/drain/whatif and simulate answer on the same cluster: the input's pending pods
    (a Deployment's among them) are placed first, exactly where simulate places them."""
    from kschedlib.api import load_cluster as read
    from kschedlib.cli.simulate import simulate
    from kschedlib.cli.whatif import load_cluster

    sched = load_cluster(str(EXAMPLE), 0)
    cluster = read(str(EXAMPLE))
    sim = simulate(cluster.config, cluster.initial_objects(), held=cluster.held_pods())
    where = {p.key: p.spec.node_name for p in sim.scheduler.bound_pods()}
    assert {p.key: p.spec.node_name for p in sched.bound_pods()} == where
    assert "shop/web-0" in where or any(k.startswith("shop/web-") for k in where)
    assert [p.key for p in sched.pending_pods()] == ["shop/reports"]


def test_pod_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad-pod.yaml"
    bad.write_text(POD.replace("cpu: 500m", "cpu: lots"))
    for run in (capacity_main, __import__("kschedlib.cli.whatif", fromlist=["x"]).whatif_main):
        out, err = io.StringIO(), io.StringIO()
        assert run([str(bad), "--cluster", str(EXAMPLE)], out, err) == 2
        assert str(bad) in err.getvalue() and "<text>" not in err.getvalue()
