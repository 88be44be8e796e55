from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from kschedlib.__main__ import main as kschedlib_main
from kschedlib.cli.sweep import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "cluster.json")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_zones_down_table_and_csv(tmp_path: Path) -> None:
    target = tmp_path / "r.csv"
    code, out, err = run(EXAMPLE, "--zones-down", "--baseline", "--out", str(target), "--quiet")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[0] == "VARIANT" and len(lines) == 4
    rows = list(csv.DictReader(target.open()))
    assert [r["variant"] for r in rows] == ["baseline", "zone-down:eu-west-1a", "zone-down:eu-west-1b"]
    assert int(rows[1]["nodes"]) == 3


def test_growth_with_pod_and_json(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: extra, namespace: shop}\n"
                   "spec:\n  containers:\n  - name: c\n    image: i\n"
                   "    resources: {requests: {cpu: 500m, memory: 64Mi}}\n")
    code, out, err = run(EXAMPLE, "--growth", "1:2:1", "--pod", str(pod), "--replicas", "4", "--json")
    assert code == 0, err
    recs = json.loads(out)
    assert [r["pods_to_schedule"] for r in recs] == [4, 8]


def test_variants_file_and_errors(tmp_path: Path) -> None:
    vf = tmp_path / "v.yaml"
    vf.write_text("- name: lose-a1\n  removeNodes: [a1]\n- name: more\n  pendingScale: 2\n")
    code, out, err = run(EXAMPLE, "--variants", str(vf), "--json")
    assert code == 0, err
    assert [r["variant"] for r in json.loads(out)] == ["lose-a1", "more"]
    code, out, err = run(EXAMPLE)
    assert code == 2 and "no variants" in err
    code, out, err = run(EXAMPLE, "--growth", "2:1:1")
    assert code == 2 and "STEP" in err
    vf.write_text("- name: bad\n  removeNodes: [zz]\n")
    code, out, err = run(EXAMPLE, "--variants", str(vf), "--json")
    assert code == 1 and "'zz' is not in the cluster" in json.loads(out)[0]["error"]


def test_dispatched_from_the_main_entry_point(capsys) -> None:  # type: ignore[no-untyped-def]
    assert kschedlib_main(["sweep", EXAMPLE, "--baseline", "--quiet"]) == 0
    assert "baseline" in capsys.readouterr().out


def test_capacity_per_variant(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: shop}\n"
                   "spec:\n  containers:\n  - name: c\n    image: i\n"
                   "    resources: {requests: {cpu: 250m, memory: 64Mi}}\n")
    code, out, err = run(EXAMPLE, "--baseline", "--zones-down", "--capacity", str(pod), "--json")
    assert code == 0, err
    recs = json.loads(out)
    assert all(isinstance(r["capacity"], int) and r["capacity_stop_reason"] for r in recs)
    assert recs[0]["capacity"] > max(r["capacity"] for r in recs[1:])
    code, out, err = run(EXAMPLE, "--baseline", "--capacity", str(pod), "--capacity-limit", "2",
                         "--json")
    assert json.loads(out)[0]["capacity"] == 2
