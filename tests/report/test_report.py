"""Report data and HTML: the numbers match the run, the page is self-contained."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from kschedlib import Report
from kschedlib.cli.simulate import load_input, main, simulate
from kschedlib.report.build import split_reasons
from kschedlib.results import Outcome
from tests.report.cluster_gen import generated_simulation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster.json"


def _page_data(html: str) -> dict:  # type: ignore[type-arg]
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_summary_matches_the_simulation() -> None:
    sim = generated_simulation()
    rep = Report.from_simulation(sim)
    outcomes = [sim.last[k].outcome for k in sim.order]
    s = rep.summary
    assert s["pods"] == len(sim.order) == 241
    assert s["scheduled"] == outcomes.count(Outcome.Scheduled)
    assert s["unschedulable"] == outcomes.count(Outcome.Unschedulable)
    assert s["unschedulable"] == 6 + 5  # 64-cpu pods and the ssd-selector pods
    assert s["preempted"] == 2 and s["preemptors"] == 1
    assert s["nodes"] == 90 and s["zones"] == 3
    reasons = {r[0]: (r[1], r[2]) for r in rep.data["reasons"]}
    assert reasons["Insufficient cpu"][0] == 6
    # The 6 tainted GPU nodes fail TaintToleration first (Filter order), the other 84 the selector.
    assert reasons["node(s) didn't match Pod's node affinity/selector"] == (5, 5 * 84)
    assert rep.data["resources"] == ["cpu", "memory", "pods", "nvidia.com/gpu"]
    # The page carries the same data it was built from.
    assert _page_data(rep.to_html()) == json.loads(json.dumps(rep.data))


def test_explanations_are_aggregated() -> None:
    sim = generated_simulation()
    rep = Report.from_simulation(sim)
    names = rep.data["pods"]["name"]
    exp = rep.data["explanations"][names.index("shop/web-00000")]  # 64 cpu: fits nowhere
    (group,) = [g for g in exp["rejected"] if g[2] == "Insufficient cpu"]
    assert group[0] == "NodeResourcesFit" and group[3] == 84 and len(group[4]) == 8  # 6 tainted
    ok = rep.data["explanations"][names.index("shop/web-00001")]
    assert 1 <= len(ok["scores"]) <= 5
    node, total, parts = ok["scores"][0]
    plugins = [rep.data["plugins"][p[0]] for p in parts]
    assert "NodeResourcesFit" in plugins
    assert total == sum(p[2] * p[3] for p in parts)
    sel = sim.last["shop/web-00001"].node
    assert sel in [s[0] for s in ok["scores"]]


def test_html_is_self_contained_and_escapes_data() -> None:
    sim = generated_simulation(12, 10)
    rep = Report.from_simulation(sim, title="</script><!-- x")
    html = rep.to_html()
    assert "<link" not in html and " src=" not in html
    assert not re.search(r"(href|src)\s*=\s*[\"']?https?:", html)
    assert html.count("</script>") == 2  # the data block and the script, nothing injected
    assert _page_data(html)["title"] == "</script><!-- x"


def test_device_allocations_come_from_resource_claims() -> None:
    sim = generated_simulation(12, 10)
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "gpu-claim", "namespace": "ml"},
        "status": {
            "allocation": {
                "devices": {"results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-0000",
                     "device": "gpu-0"},
                ]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-0000"]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "u1"}],
        },
    }
    unallocated = {"kind": "ResourceClaim", "metadata": {"name": "c2", "namespace": "ml"}}
    rep = Report.from_results(sim.scheduler, sim.last.values(), claims=[claim, unallocated])
    assert rep.data["devices"] == [{
        "claim": "ml/gpu-claim", "request": "gpu", "driver": "gpu.example.com",
        "pool": "node-0000", "device": "gpu-0", "node": "node-0000", "reservedFor": ["ml/trainer"],
    }]
    assert Report.from_simulation(sim).data["devices"] == []


def test_split_reasons() -> None:
    parts, post = split_reasons(
        "0/6 nodes are available: 1 node(s) had untolerated taint(s), 5 node(s) didn't match "
        "Pod's node affinity/selector. no new claims to deallocate, preemption: 0/6 nodes are "
        "available: 6 Preemption is not helpful for scheduling."
    )
    assert parts == [("node(s) had untolerated taint(s)", 1),
                     ("node(s) didn't match Pod's node affinity/selector", 5)]
    assert post.startswith("no new claims to deallocate, preemption: 0/6")
    assert split_reasons("0/4 nodes are available: pod has unbound immediate "
                         "PersistentVolumeClaims. preemption: x")[0] == [
        ("pod has unbound immediate PersistentVolumeClaims", 4)]
    assert split_reasons("0/2 nodes are available: 2 Insufficient cpu.") == (
        [("Insufficient cpu", 2)], "")


def test_simulate_html_flag(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "report.html"
    assert main([str(EXAMPLE), "--quiet", "--html", str(target)], out, err) == 0
    data = _page_data(target.read_text(encoding="utf-8"))
    cfg, objs = load_input(str(EXAMPLE))
    sim = simulate(cfg, objs)
    assert data["summary"] == Report.from_simulation(sim).summary
    assert data["summary"]["scheduled"] == 10 and data["summary"]["preempted"] == 1
    # The example's DRA pod got a GPU through its generated claim: the device section.
    (dev,) = data["devices"]
    assert (dev["claim"], dev["device"], dev["node"]) == ("ml/inference-gpu-q8w4z", "gpu-0", "gpu1")
    assert dev["reservedFor"] == ["ml/inference"]
    assert data["deviceUtilization"] == [
        {"node": "gpu1", "devicesAllocated": 1, "devicesPublished": 2}
    ]
    bad = tmp_path / "missing-dir" / "r.html"
    assert main([str(EXAMPLE), "--quiet", "--html", str(bad)], out, err) == 2
    assert "FileNotFoundError" in err.getvalue()


def test_report_without_explanations() -> None:
    from kschedlib.testing import Cluster, make_node, make_pod

    c = Cluster(nodes=[make_node("n1").capacity(cpu="1")], explain=False)
    results = c.run(make_pod("a").req(cpu="600m"), make_pod("b").req(cpu="600m"))
    rep = Report.from_results(c.scheduler, results)
    assert rep.summary["scheduled"] == 1 and rep.summary["unschedulable"] == 1
    assert rep.data["explanations"] == [None, None]
    assert rep.data["reasons"] == [["Insufficient cpu", 1, 1]]


def test_report_mode_keeps_only_the_top_scores_and_the_same_report() -> None:
    from kschedlib.report.build import TOP_NODES
    from tests.report.cluster_gen import generated_objects

    sim = generated_simulation()
    # Only the top nodes' scores are recorded while scheduling (explain_top_nodes).
    exps = [r.explanation for r in sim.last.values() if r.explanation is not None]
    assert exps and all(len(e.scores) <= TOP_NODES for e in exps)
    assert all(e.selected in e.scores for e in exps if e.scores and e.selected)
    # The same run recording full explanations gives the same report.
    keys = [o.key for o in generated_objects() if hasattr(o, "spec")]
    full = simulate(None, generated_objects(), explain=keys)
    big = [r for r in full.last.values() if r.explanation and len(r.explanation.scores) > TOP_NODES]
    assert big, "the full run must record more than the top nodes"
    for r in big:
        small = sim.last[r.key].explanation
        assert small is not None
        assert small.scores == {n: r.explanation.scores[n] for n in small.scores}
    trimmed_report, full_report = Report.from_simulation(sim), Report.from_simulation(full)
    assert trimmed_report.summary == full_report.summary
    assert trimmed_report.data["explanations"] == full_report.data["explanations"]
