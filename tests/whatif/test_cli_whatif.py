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
    assert lines[0].startswith("17 replica(s) of default/probe fit on 5 node(s); stopped: 0/6 nodes")
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
    assert drain_main(["gpu1", "--cluster", str(EXAMPLE), "--json"], out, err) == 0
    assert json.loads(out.getvalue())["success"] is True
    out = io.StringIO()
    assert drain_main(["--cluster", str(EXAMPLE)], out, err) == 0
    assert out.getvalue().startswith("1 node(s) removable one after another")


def test_errors_are_reported_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "two.yaml"
    bad.write_text(POD + "---\n" + POD)
    out, err = io.StringIO(), io.StringIO()
    assert capacity_main([str(bad), "--cluster", str(EXAMPLE)], out, err) == 2
    assert "expected exactly one Pod" in err.getvalue()
    assert drain_main(["x", "--cluster", str(tmp_path / "missing.json")], out, err) == 2
    assert main(["drain", "gpu1", "--cluster", str(EXAMPLE), "--json"]) == 0


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
