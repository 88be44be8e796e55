"""Compare kschedlib's placements on a scenario with recorded ones (``ns/name node`` lines)."""

from __future__ import annotations

import sys
from typing import Any

from kschedlib.bench.scheduling import load, schedule
from kschedlib.results import Outcome

UNSCHEDULED = "<none>"
_UNSCHEDULED_MARKS = frozenset({UNSCHEDULED, "-"})
"""How placements files write a pod left unscheduled."""


def read_placements(path: str) -> list[tuple[str, str]]:
    """The ``namespace/name node`` lines of a placements file, in order."""
    out: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2:
                raise ValueError(f"{path}:{lineno}: expected 'namespace/name node', got {line!r}")
            out.append((parts[0], parts[1]))
    return out


def placements_of(
    scenario_path: str, limit: int | None = None, feature_gates: str | None = None,
    batch_counts: dict[str, int] | None = None,
) -> list[tuple[str, str]]:
    """Each pending pod's node after one scheduling cycle per pod in file order, ties to the
    smallest node name (the recorded placements' harness). ``feature_gates``: e.g.
    ``"OpportunisticBatching=false"``; ``batch_counts`` receives the attempts per batch
    outcome."""
    b = schedule(load(scenario_path), limit, in_file_order=True, deterministic=True,
                 feature_gates=feature_gates)
    if batch_counts is not None:
        for r in b.results:
            if r.batch is not None:
                batch_counts[r.batch] = batch_counts.get(r.batch, 0) + 1
    seen: dict[str, str] = {}
    for r in b.results:
        key = r.pod.key
        if key in seen:
            continue
        seen[key] = r.node if r.outcome == Outcome.Scheduled and r.node else UNSCHEDULED
    return list(seen.items())


def compare(
    ours: list[tuple[str, str]], expected: list[tuple[str, str]]
) -> tuple[int, int | None, str]:
    """(pods compared, index of the first differing pod or None, description)."""
    mine = dict(ours)
    for i, (key, node) in enumerate(expected):
        got = mine.get(key)
        if got is None:
            return i, i, f"pod {i} {key}: expected {node}, kschedlib never attempted it"
        if got != node and not (got in _UNSCHEDULED_MARKS and node in _UNSCHEDULED_MARKS):
            return i, i, f"pod {i} {key}: expected {node}, kschedlib chose {got}"
    return len(expected), None, f"{len(expected)} pods compared, identical"


def main(
    scenario_path: str, placements_path: str, limit: int | None = None, out: Any = None,
    feature_gates: str | None = None,
) -> int:
    out = out or sys.stdout
    expected = read_placements(placements_path)
    if limit:
        expected = expected[:limit]
    counts: dict[str, int] = {}
    ours = placements_of(scenario_path, limit, feature_gates, counts)
    n, first, text = compare(ours, expected)
    verdict = "identical" if first is None else "DIFFERENT"
    batch = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "off"
    print(f"placements {verdict}: {text} (batching: {batch})", file=out)
    return 0 if first is None else 1
