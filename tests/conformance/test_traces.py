"""kube-scheduler v1.35.4's recorded traces (timelines of events through the whole scheduler)
replayed through the facade, attempt by attempt, from the in-repo copy ``tests/data/traces``."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

from kschedlib.conformance.traces import TraceCase, case_names, compare, main, replay
from tests.corpus import REPO, SHARED

TRACES = REPO / "tests" / "data" / "traces"
SHARED_TRACES = SHARED / "traces"
SCRIPT = REPO / "scripts" / "refresh_corpus.py"


def test_the_copy_has_every_case() -> None:
    names = case_names(TRACES)
    assert len(names) >= 10 and (TRACES / "README.md").is_file()
    for n in names:
        assert (TRACES / f"{n}.json").is_file() and (TRACES / f"{n}.jsonl").is_file()


@pytest.mark.skipif(not SHARED_TRACES.is_dir(), reason="no ../shared/traces to compare")
def test_the_copy_is_not_stale() -> None:
    spec = importlib.util.spec_from_file_location("refresh_corpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    new, changed, removed = mod.corpus_diff(SHARED_TRACES, TRACES)
    assert not (new or changed or removed), (
        f"tests/data/traces is stale: new={new} changed={changed} removed={removed}; "
        "run scripts/refresh_corpus.py --traces"
    )


@pytest.mark.parametrize("name", case_names(TRACES))
def test_trace(name: str) -> None:
    case = TraceCase.load(TRACES, name)
    assert case.expected_attempts(), "a case records attempts"
    assert compare(case) == []


def test_a_difference_is_reported_attempt_by_attempt() -> None:
    case = TraceCase.load(TRACES, "trace-backoff-001")
    records = [copy.deepcopy(dict(r)) for r in case.records]
    attempts = [r for r in records if r["type"] == "attempt"]
    attempts[1]["nominatedNode"] = "node-a"
    attempts[1]["victims"] = []
    bad = TraceCase(case.name, case.scenario, case.steps, case.pending_at_start, tuple(records))
    problems = compare(bad)
    assert problems == [
        "attempt 2 (default/lo at t=0.5): nominatedNode: want 'node-a', got None",
    ]
    shorter = TraceCase(case.name, case.scenario, case.steps, case.pending_at_start,
                        tuple(r for r in records if r is not attempts[-1]))
    assert compare(shorter)[-1].startswith("3 attempts recorded, 4 replayed; kschedlib also ran")
    assert [a["pod"] for a in replay(case)] == [
        "default/hi", "default/lo", "default/hi", "default/hi"]


def test_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([str(TRACES), "trace-gates-001", "trace-pdb-001"]) == 0
    out = capsys.readouterr().out
    assert "ok   trace-gates-001" in out and "traces: 2 passed, 0 failed" in out
    for suffix in (".json", ".timeline.json", ".jsonl"):
        text = (TRACES / f"trace-gates-001{suffix}").read_text()
        if suffix == ".jsonl":
            text = text.replace('"node":"node-a"', '"node":"node-z"')
        (tmp_path / f"trace-gates-001{suffix}").write_text(text)
    assert main([str(tmp_path)]) == 1
    assert "FAIL trace-gates-001" in capsys.readouterr().out
