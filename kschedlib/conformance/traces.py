"""Replay kube-scheduler traces: timelines of creates, updates, deletes, clock advances and
settles driven through the Scheduler facade, compared attempt by attempt with what the whole
kube-scheduler v1.35.4 did (``<name>.json`` scenario, ``<name>.timeline.json`` steps,
``<name>.jsonl`` records; the format is described in the traces' README).

``python -m kschedlib.conformance.traces DIR [NAME...]`` prints one line per case and exits 1
when any case differs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.objects import decode_any
from kschedlib.api.pod import Pod
from kschedlib.api.scenario import Scenario
from kschedlib.clock import FakeClock
from kschedlib.results import Outcome, SchedulingResult
from kschedlib.scheduler import Scheduler

__all__ = [
    "ATTEMPT_FIELDS",
    "TraceCase",
    "attempt_record",
    "case_names",
    "compare",
    "main",
    "replay",
]

ATTEMPT_FIELDS = (
    "pod", "clock", "result", "node", "message", "nominatedNode", "victims", "batch",
)
"""The fields of an attempt record that are compared (``batch``: the opportunistic batch's
outcome, ``no_hint`` when the gate is off or the attempt was no scheduling cycle)."""

_RESULTS = {
    Outcome.Scheduled: "scheduled",
    Outcome.Unschedulable: "unschedulable",
    Outcome.Error: "error",
    Outcome.BindFailed: "error",
    Outcome.Waiting: "waiting",
}


@attrs.define(frozen=True, slots=True)
class TraceCase:
    """One recorded case: the scenario (raw JSON), the steps and kube-scheduler's records."""

    name: str
    scenario: Mapping[str, Any]
    steps: tuple[Mapping[str, Any], ...]
    pending_at_start: bool
    records: tuple[Mapping[str, Any], ...]

    @classmethod
    def load(cls, directory: str | Path, name: str) -> TraceCase:
        base = Path(directory)
        scenario = json.loads((base / f"{name}.json").read_text(encoding="utf-8"))
        timeline = json.loads((base / f"{name}.timeline.json").read_text(encoding="utf-8"))
        pending_at_start = True
        if isinstance(timeline, Mapping):
            pending_at_start = bool(timeline.get("pendingAtStart", True))
            timeline = timeline.get("steps", [])
        lines = (base / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        records = tuple(json.loads(line) for line in lines if line.strip())
        return cls(name, scenario, tuple(timeline), pending_at_start, records)

    def expected_attempts(self) -> list[dict[str, Any]]:
        """kube-scheduler's attempt records, reduced to ``ATTEMPT_FIELDS`` and ``clock``."""
        return [_reduce(r) for r in self.records if r.get("type") == "attempt"]


def case_names(directory: str | Path) -> list[str]:
    """The cases of a traces directory (every ``<name>.timeline.json``), sorted."""
    suffix = ".timeline.json"
    return sorted(p.name[: -len(suffix)] for p in Path(directory).glob(f"*{suffix}"))


def _reduce(record: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: record.get(k) for k in ATTEMPT_FIELDS}
    out["victims"] = sorted(out["victims"] or [])
    return out


def attempt_record(result: SchedulingResult, clock: float) -> dict[str, Any]:
    """A kschedlib scheduling result as a trace attempt record (the compared fields)."""
    scheduled = result.outcome == Outcome.Scheduled
    return {
        "pod": result.pod.key,
        "result": _RESULTS.get(result.outcome, result.outcome.value.lower()),
        "node": result.node if scheduled else None,
        "message": None if scheduled else (result.message or None),
        "nominatedNode": None if scheduled else (result.nominated_node or None),
        "victims": sorted(v.key for v in result.victims),
        "batch": result.batch or "no_hint",
        "clock": clock,
    }


class _Replay:
    """A scheduler fed the case's objects and steps as kube-scheduler's informers feed it."""

    def __init__(self, case: TraceCase) -> None:
        data = dict(case.scenario)
        pending = list(data.get("pending") or [])
        data["pending"] = []
        scenario = Scenario.from_dict(data)
        self.clock = FakeClock()
        self.start_ns = self.clock.now_ns()
        self.sched = Scheduler(scenario.config, clock=self.clock, deterministic=True)
        self.profile = next(iter(self.sched.frameworks))
        s = self.sched
        for node in scenario.nodes:
            s.add_node(node)
        for obj in scenario.other_objects():
            s.add_object(obj)
        for pod in scenario.pods:
            s.add_pod(pod)
        self.attempts: list[dict[str, Any]] = []
        if case.pending_at_start:
            for raw in pending:
                s.add_pod(self._pod(raw))

    def now(self) -> float:
        """Seconds since the start of the trace (exact: the clock counts nanoseconds)."""
        return (self.clock.now_ns() - self.start_ns) / 1_000_000_000

    def _pod(self, raw: Mapping[str, Any]) -> Pod:
        """The API server's defaults: namespace, scheduler name, creation timestamp."""
        d = copy.deepcopy(dict(raw))
        meta = d.setdefault("metadata", {})
        meta.setdefault("namespace", "default")
        meta.setdefault("creationTimestamp", self.clock.wall_time().strftime("%Y-%m-%dT%H:%M:%SZ"))
        spec = d.setdefault("spec", {})
        if not spec.get("schedulerName"):
            spec["schedulerName"] = self.profile
        return Pod.from_dict(d)

    def _decode(self, raw: Mapping[str, Any]) -> Any:
        if raw.get("kind") == "Pod":
            return self._pod(raw)
        return decode_any(dict(raw))

    def step(self, step: Mapping[str, Any]) -> None:
        s = self.sched
        ((op, arg),) = step.items()
        if op == "create":
            for raw in arg:
                obj = self._decode(raw)
                if isinstance(obj, Node):
                    s.add_node(obj)
                elif isinstance(obj, Pod):
                    s.add_pod(obj)
                else:
                    s.add_object(obj)
        elif op == "update":
            for raw in arg:
                obj = self._decode(raw)
                if isinstance(obj, Node):
                    s.update_node(obj)
                elif isinstance(obj, Pod):
                    s.update_pod(obj)
                else:
                    s.update_object(obj)
        elif op == "delete":
            for ref in arg:
                kind, name = ref.get("kind"), ref.get("name", "")
                if kind == "Node":
                    s.delete_node(name)
                elif kind == "Pod":
                    s.delete_pod(f"{ref.get('namespace') or 'default'}/{name}")
                else:
                    obj = decode_any({"kind": kind, "metadata": {
                        "name": name, "namespace": ref.get("namespace", "")}})
                    s.delete_object(obj)
        elif op == "advance":
            self.clock.advance(float(arg))
            s.tick()
        elif op == "settle":
            for r in s.run():
                self.attempts.append(attempt_record(r, self.now()))
        else:
            raise ValueError(f"unknown trace step {op!r}")


def replay(case: TraceCase) -> list[dict[str, Any]]:
    """kschedlib's attempts on the case's timeline, as reduced attempt records."""
    r = _Replay(case)
    for step in case.steps:
        r.step(step)
    return r.attempts


def compare(case: TraceCase, fields: Sequence[str] = ATTEMPT_FIELDS) -> list[str]:
    """The differences between kube-scheduler's attempts and kschedlib's, attempt by
    attempt (empty when they agree)."""
    want = case.expected_attempts()
    got = replay(case)
    problems: list[str] = []
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        diff = [f"{f}: want {w.get(f)!r}, got {g.get(f)!r}" for f in fields if w.get(f) != g.get(f)]
        if diff:
            problems.append(f"attempt {i + 1} ({w.get('pod')} at t={w.get('clock')}): " + "; ".join(diff))
    if len(want) != len(got):
        extra = got[len(want):] if len(got) > len(want) else want[len(got):]
        who = "kschedlib also ran" if len(got) > len(want) else "kschedlib did not run"
        problems.append(
            f"{len(want)} attempts recorded, {len(got)} replayed; {who}: "
            + ", ".join(f"{a.get('pod')} ({a.get('result')})" for a in extra)
        )
    return problems


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kschedlib.conformance.traces",
        description="Replay kube-scheduler traces through kschedlib and compare the attempts.",
    )
    parser.add_argument("directory", help="a traces directory (<name>.json, .timeline.json, .jsonl)")
    parser.add_argument("names", nargs="*", help="cases to run (default: all)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    names = args.names or case_names(args.directory)
    failed = 0
    for name in names:
        problems = compare(TraceCase.load(args.directory, name))
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"  {p}")
        else:
            print(f"ok   {name}")
    print(f"traces: {len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
