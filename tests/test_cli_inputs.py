"""kschedlib simulate reads what users have: kubectl dumps, several paths, stdin, manifest
folders with workloads; every ignored kind is reported."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import yaml

from kschedlib.api import load_cluster
from kschedlib.cli.simulate import main as simulate_main

DATA = Path(__file__).resolve().parent / "data"
DUMP = DATA / "kubectl-dump" / "cluster.json"
REAL = DATA / "realdata"


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = simulate_main([*args, "--quiet"], out, err)
    return code, out.getvalue(), err.getvalue()


def test_kubectl_dump_is_a_cluster_json_and_yaml_alike() -> None:
    code, out, err = _run(str(DUMP))
    assert code == 0, err
    assert "Placements (2/2 pods scheduled)" in out
    assert "shop/db-0" in out and "shop/web-7f9c6d8b4-qv8zk" in out
    assert err.startswith("kschedlib simulate: ignored: 1 CSIDriver")
    code_y, out_y, err_y = _run(str(DUMP.with_suffix(".yaml")))
    assert (code_y, out_y, err_y) == (code, out, err)


def test_dump_holds_every_kind_of_the_documented_command() -> None:
    c = load_cluster(DUMP)
    kinds = {o.kind for o in c.objects} | set(c.ignored)
    assert kinds >= {
        "Node", "Pod", "Namespace", "PodDisruptionBudget", "PersistentVolume",
        "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver", "PriorityClass",
        "Service", "ReplicaSet", "StatefulSet", "ReplicationController", "DeviceClass",
        "ResourceSlice", "ResourceClaimTemplate",
    }
    # Only kinds no scheduler code reads yet (or that DRA support adds) are ignored.
    assert set(c.ignored) <= {"CSIDriver", "DeviceClass", "ResourceSlice", "ResourceClaim",
                              "ResourceClaimTemplate"}
    # A dump is taken as stored: no pod is created from its controllers.
    from kschedlib.api import load_objects

    assert len(c.pods) == len([o for o in load_objects(DUMP) if o.kind == "Pod"])


def test_several_paths_and_stdin(tmp_path: Path) -> None:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(yaml.safe_dump_all([
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}}, "template": {
             "metadata": {"labels": {"app": "api"}},
             "spec": {"tolerations": [{"key": "type", "operator": "Exists"}],
                      "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}},
    ]))
    code, out, err = _run(str(DUMP), str(tmp_path))
    assert code == 0, err
    assert "Placements (4/4 pods scheduled)" in out
    assert out.count("default/api-") == 2
    assert "ignored: 1 CSIDriver, 1 ConfigMap" in err
    nodes = (REAL / "honeycomb-agent__testdata_nodes.json").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "kschedlib", "simulate", "-", str(tmp_path / "apps"), "--json"],
        input=nodes, capture_output=True, check=True,
    )
    data = json.loads(proc.stdout)
    assert sorted(p["node"] is not None for p in data["pods"]) == [True, True]


def test_no_nodes_and_bad_input_are_clear_errors(tmp_path: Path) -> None:
    code, _, err = _run(str(REAL / "kubectl-neat__pod1-raw.json"))
    assert code == 2 and "no nodes found" in err and "kubectl get nodes" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: "
                   "{requests: {cpu: lots}}}]}\n")
    code, _, err = _run(str(REAL / "k9s__internal_render_testdata_no.json"), str(bad))
    assert code == 2
    assert f"{bad}: pod p: spec.containers[0].resources.requests.cpu" in err
    code, _, err = _run(str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err
