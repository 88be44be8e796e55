"""DefaultPreemption against kube-scheduler v1.35's recorded decisions: every pod of every
preemption-* scenario, and every pod PostFilter ran for in the other families (victims,
nominated node, the "preemption: ..." text of FailedScheduling)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib.conformance.runner import FIELDS
from kschedlib.conformance.scenario import Scenario
from kschedlib.conformance.session import ScenarioSession
from kschedlib.results import Outcome, SchedulingResult
from tests.conformance.test_conformance import ASSERTED
from tests.corpus import CORPUS  # noqa: E402

# The families the conformance test asserts (a family joins there once it passes).
SCENARIOS = sorted(
    p
    for p in CORPUS.glob("*.json")
    if not p.name.endswith(".expected.json") and p.stem.rsplit("-", 1)[0] in ASSERTED
)


def _expected(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.with_suffix("").with_suffix(".expected.json").read_text())
    results: list[dict[str, Any]] = data["results"]
    return results


def _uses_post_filter(path: Path) -> bool:
    return path.stem.startswith("preemption-") or any(
        r["postFilter"] is not None for r in _expected(path)
    )


def _run(path: Path) -> list[tuple[dict[str, Any], str]]:
    """Each attempt's entry, with the PostFilter message it produced."""
    session = ScenarioSession(Scenario.from_dict(json.loads(path.read_text())))
    out: list[tuple[dict[str, Any], str]] = []

    def record(r: SchedulingResult, retry: bool) -> None:
        exp = r.explanation
        out.append((session.entry(r, retry=retry), exp.post_filter_message if exp else ""))

    for pod in session.scenario.pending:
        held = session.held_back(pod)
        if held is not None:
            out.append((held, ""))
            continue
        r = session.attempt(pod, add=True)
        record(r, False)
        if r.nominated_node and r.outcome != Outcome.Scheduled:
            session.scheduler.activate([r.pod])
            r = session.attempt(r.pod, add=False)
            record(r, True)
        if r.outcome != Outcome.Scheduled and not r.pod.status.nominated_node_name:
            session.scheduler.delete_pod(r.pod)
    return out


def _check_error(expected: str | None, got: str | None, post_filter_msg: str) -> None:
    """The FitError text and the PostFilter message, verbatim; FitError appends the latter
    after a space (kube-scheduler adds no period of its own)."""
    if expected is None or not post_filter_msg:
        assert got == expected
        return
    assert expected.endswith(" " + post_filter_msg)
    head = expected[: -len(post_filter_msg) - 1]
    assert got is not None and got.startswith(head + " " + post_filter_msg)


@pytest.mark.parametrize(
    "path", [p for p in SCENARIOS if _uses_post_filter(p)], ids=lambda p: p.stem
)
def test_scenario(path: Path) -> None:
    expected = _expected(path)
    got = _run(path)
    whole = path.stem.startswith("preemption-")
    assert [e["pod"] for e in expected] == [g["pod"] for g, _ in got]
    for want, (have, pf_msg) in zip(expected, got, strict=True):
        if not whole and want["postFilter"] is None:
            continue
        assert have.get("retry", False) == want.get("retry", False), want["pod"]
        assert have["postFilter"] == want["postFilter"], want["pod"]
        _check_error(want["error"], have["error"], pf_msg)
        if whole:
            for field in FIELDS:
                if field != "error":
                    assert have.get(field) == want.get(field), (want["pod"], field)
