"""The bench tools: the suite's lines and the placement comparison (no timings asserted)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from kschedlib.bench import placements, suite
from kschedlib.bench.__main__ import main


def _scenario(n_nodes: int, n_pods: int) -> dict[str, Any]:
    nodes = [
        {"metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
         "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                    "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}
        for i in range(n_nodes)
    ]
    pending = [
        {"metadata": {"name": f"p{i:03d}", "namespace": "default", "uid": f"u{i}",
                      "creationTimestamp": "2025-09-08T12:00:00Z"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
        for i in range(n_pods)
    ]
    return {"name": "tiny", "config": {"percentageOfNodesToScore": 0}, "nodes": nodes,
            "pods": [], "pending": pending}


def test_compare_reports_the_first_differing_pod() -> None:
    exp = [("default/a", "n1"), ("default/b", "n2"), ("default/c", "n3")]
    assert placements.compare(exp, exp) == (3, None, "3 pods compared, identical")
    n, first, text = placements.compare([("default/a", "n1"), ("default/b", "n9")], exp)
    assert first == 1 and "default/b: expected n2, kschedlib chose n9" in text
    _, first, text = placements.compare([("default/a", "n1")], exp)
    assert first == 1 and "never attempted" in text


def test_placements_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_scenario(3, 4)))
    ours = placements.placements_of(str(path))
    # Least allocated, ties to the smallest name, one cycle per pod in file order.
    assert ours == [("default/p000", "n000"), ("default/p001", "n001"),
                    ("default/p002", "n002"), ("default/p003", "n000")]
    good = tmp_path / "good.txt"
    good.write_text("".join(f"{k} {n}\n" for k, n in ours))
    out = io.StringIO()
    assert placements.main(str(path), str(good), out=out) == 0
    assert out.getvalue() == "placements identical: 4 pods compared, identical (batching: no_hint 4)\n"
    bad = tmp_path / "bad.txt"
    bad.write_text(good.read_text().replace("default/p002 n002", "default/p002 n001"))
    out = io.StringIO()
    assert placements.main(str(path), str(bad), out=out) == 1
    assert "pod 2 default/p002: expected n001, kschedlib chose n002" in out.getvalue()


def test_suite_prints_one_line_per_workload(tmp_path: Path, capsys: Any) -> None:
    for name, pods in (("a-tiny", 5), ("b-tiny", 3)):
        (tmp_path / f"{name}.json").write_text(json.dumps({**_scenario(4, pods), "name": name}))
    (tmp_path / "README.md").write_text("not a workload")
    assert main(["--suite", str(tmp_path), "--limit", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith("workload")
    assert lines[1].startswith("a-tiny") and lines[2].startswith("b-tiny")
    for line in lines[1:]:
        assert "4 nodes      2 pods" in line and "pods/s" in line and "MB" in line
        assert "(2 attempts, 2 scheduled)" in line
    assert main(["--suite", str(tmp_path), "--only", "b-tiny", "--limit", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("b-tiny")


def test_suite_line_format() -> None:
    m = {"name": "w", "nodes": 10, "pending": 4, "attempts": 5, "scheduled": 4, "wall": 2.0,
         "pods_per_second": 2.0, "peak_mb": 50.0}
    line = suite.format_line(m)
    assert "2.0 pods/s" in line and "peak    50 MB" in line and "(5 attempts, 4 scheduled)" in line


def test_whatif_prints_one_line_per_target(tmp_path: Path, capsys: Any) -> None:
    scenario = _scenario(6, 8)
    for i, n in enumerate(scenario["nodes"]):
        n["metadata"]["labels"]["topology.kubernetes.io/zone"] = f"z{i % 3}"
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(scenario))
    assert main(["--whatif", str(path), "--replicas", "20", "--rounds", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("whatif scenario: tiny (6 nodes, 8 pods bound")
    assert [ln.split(":")[0] for ln in lines[1:]] == [
        "whatif transaction round trip (1 pod, 3/3 placed)",
        "whatif removable_nodes (pods of a ReplicaSet)",
        "whatif capacity (topology spread)", "whatif capacity (pod anti-affinity)",
        "whatif capacity (preferred spread and anti-affinity)",
        "whatif capacity (system-default spreading of a Service)",
        "whatif capacity (preferred node affinity)"]
    # The pods were given a ReplicaSet, so the least utilized nodes can go.
    assert "6 candidates (" in lines[2] and "(0 removable)" not in lines[2]
    assert "20 replicas (20 batched)" in lines[3]
    assert "6 replicas (6 batched)" in lines[4]  # one per node (hostname anti-affinity)
    assert "20 replicas (20 batched)" in lines[5]  # soft rules: scored per soft key
    assert "20 replicas (20 batched)" in lines[6]  # a Service's default spreading
    assert "20 replicas (20 batched)" in lines[7]  # preferred node affinity


def test_whatif_removable_fit_line(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_scenario(6, 8)))
    assert main(["--whatif", str(path), "--only", "removable,removable-fit"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split(":")[0] for ln in lines[1:]] == [
        "whatif removable_nodes (pods of a ReplicaSet)",
        'whatif removable_nodes (pods of a ReplicaSet, mode="fit")']
    assert all("6 candidates (" in ln and "(0 removable)" not in ln for ln in lines[1:])


def test_whatif_leaves_the_collector_as_it_found_it(tmp_path: Path, capsys: Any) -> None:
    import gc

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_scenario(6, 8)))
    before = gc.get_freeze_count()
    assert main(["--whatif", str(path), "--only", "txn", "--rounds", "2"]) == 0
    assert "transaction round trip" in capsys.readouterr().out
    assert gc.get_freeze_count() == before  # the bench's freeze is undone (or none was made)
