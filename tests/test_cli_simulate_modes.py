"""kschedlib simulate: explanations only for the pods asked about, every attempt of a
preempting pod, a --summary mode, an O(1) progress line."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from kschedlib.cli.simulate import failure_reasons, load_input, simulate
from kschedlib.cli.simulate import main as simulate_main
from tests.builders import node_dict, pod_dict

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster.json"


def _cluster(n_nodes: int, n_pods: int, cpu: str = "1") -> list[object]:
    from kschedlib import Node, Pod

    nodes = [Node.from_dict(node_dict(f"n{i}", cpu="4")) for i in range(n_nodes)]
    pods = [Pod.from_dict(pod_dict(f"p{i}", cpu=cpu)) for i in range(n_pods)]
    return [*nodes, *pods]


def test_no_explanation_is_recorded_unless_asked() -> None:
    sim = simulate(None, _cluster(5, 30))
    assert sim.scheduler.explanations == {}
    assert all(r.explanation is None for r in sim.last.values())
    sim = simulate(None, _cluster(5, 30), explain=["default/p3"])
    assert set(sim.scheduler.explanations) == {"default/p3"}
    assert sim.last["default/p3"].explanation is not None
    assert sim.last["default/p4"].explanation is None


def test_memory_does_not_grow_with_explanations() -> None:
    # 200 pods over 50 nodes: with a breakdown per attempt this held megabytes.
    objs = _cluster(50, 200, cpu="100m")
    tracemalloc.start()
    sim = simulate(None, objs)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(sim.last) == 200
    assert current < 8_000_000, current




class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_constant_work_per_update() -> None:
    out = _Tty()
    sim = simulate(None, _cluster(3, 60), progress=out)
    lines = out.getvalue().split("\r")
    assert lines[-1].strip() == f"scheduled {sum(1 for r in sim.last.values() if r.node)}/60"
    # one update per attempt, each a single short line
    assert len(lines) - 1 == 60 and max(len(x) for x in lines) < 40


def test_progress_off_a_terminal_is_a_line_every_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log or a pipe gets no carriage returns: a line per interval, none on a short run."""
    out = io.StringIO()
    simulate(None, _cluster(3, 60), progress=out)
    assert out.getvalue() == ""
    from kschedlib.cli import simulate as mod

    monkeypatch.setattr(mod, "PROGRESS_INTERVAL", 0.0)
    out = io.StringIO()
    simulate(None, _cluster(3, 60), progress=out)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 60
    assert lines[-1].startswith("scheduled ") and lines[-1].endswith("/60")


def test_explain_of_a_preempting_pod_shows_every_attempt() -> None:
    out = io.StringIO()
    assert simulate_main([str(EXAMPLE), "--explain", "shop/checkout-db", "--quiet"],
                         out, io.StringIO()) == 0
    text = out.getvalue()
    assert "Attempt 1/2: Unschedulable, nominated to a2, preempting shop/batch-1" in text
    assert "Attempt 2/2: Scheduled on a2" in text
    assert text.count("Pod shop/checkout-db (profile default-scheduler)") == 2


def test_explain_json_has_every_attempt() -> None:
    out = io.StringIO()
    assert simulate_main([str(EXAMPLE), "--json", "--explain", "shop/checkout-db"],
                         out, io.StringIO()) == 0
    data = json.loads(out.getvalue())
    assert len(data["explanations"]["shop/checkout-db"]["attempts"]) == 2
    assert data["explanation"]["selected"] == "a2"


def test_summary_groups_unschedulable_pods_by_reason(tmp_path: Path) -> None:
    objs = [node_dict("n1", cpu="2"),
            *[pod_dict(f"big{i}", cpu="8") for i in range(3)],
            pod_dict("ok", cpu="1"),
            pod_dict("picky", cpu="1", nodeSelector={"disk": "ssd"})]
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": objs}))
    out = io.StringIO()
    assert simulate_main([str(tmp_path), "--summary", "--quiet"], out, io.StringIO()) == 0
    text = out.getvalue()
    assert "Scheduled 1/5 pods; 4 unschedulable" in text
    assert "     3  Insufficient cpu" in text
    assert "     1  node(s) didn't match Pod's node affinity/selector" in text
    assert "Placements" not in text
    out = io.StringIO()
    assert simulate_main([str(tmp_path), "--summary", "--json"], out, io.StringIO()) == 0
    data = json.loads(out.getvalue())
    assert data["reasons"][0] == {"reason": "Insufficient cpu", "pods": 3}


def test_failure_reasons_parse_the_fit_error() -> None:
    msg = ("0/6 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. "
           "preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")
    assert failure_reasons(msg) == ["node(s) had untolerated taint(s)", "Insufficient cpu"]
    assert failure_reasons("running PreBind plugin \"X\": boom") == [
        'running PreBind plugin "X": boom']


def test_load_input_still_reads_a_scenario() -> None:
    config, objects = load_input(str(EXAMPLE))
    assert objects
