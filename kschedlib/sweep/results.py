"""Sweep results: plain records, CSV / JSON Lines writers and a summary table."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import IO, Any

import attrs

#: Columns of the summary table and of CSV, in order; nested values are JSON in CSV.
COLUMNS = (
    "index", "variant", "description", "nodes", "nodes_removed", "nodes_added",
    "pods_to_schedule", "scheduled", "unschedulable", "preemptions", "victims", "lost_pods",
    "capacity", "capacity_stop_reason", "reasons", "utilization",
)


@attrs.define(slots=True, frozen=True)
class SweepResult:
    """One record per variant, in the order the variants were given."""

    records: tuple[dict[str, Any], ...]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.records]

    def write_jsonl(self, fh: IO[str]) -> None:
        for r in self.records:
            fh.write(json.dumps(r, sort_keys=True) + "\n")

    def write_csv(self, fh: IO[str]) -> None:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in self.records:
            w.writerow([_cell(r.get(c)) for c in COLUMNS])

    def save(self, path: str) -> None:
        """Write ``.csv`` as CSV, anything else as JSON Lines."""
        with open(path, "w", encoding="utf-8", newline="") as fh:
            if path.endswith(".csv"):
                self.write_csv(fh)
            else:
                self.write_jsonl(fh)

    def summary_table(self) -> str:
        """A fixed-width table: one row per variant, its worst zone utilization and top reason."""
        head = ("VARIANT", "NODES", "PODS", "SCHEDULED", "UNSCHED", "PREEMPT", "LOST",
                "CAPACITY", "MAX CPU%", "TOP REASON")
        rows = [head]
        for r in self.records:
            util = r.get("utilization") or {}
            max_cpu = max((z["cpu"] for z in util.values()), default=0.0)
            reasons = r.get("reasons") or {}
            top = next(iter(reasons), "")
            cap = r.get("capacity")
            rows.append((
                str(r["variant"]), str(r["nodes"]), str(r["pods_to_schedule"]),
                str(r["scheduled"]), str(r["unschedulable"]), str(r["preemptions"]),
                str(r["lost_pods"]), "-" if cap is None else str(cap), f"{max_cpu:.1f}",
                _shorten(top, 60),
            ))
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        out = io.StringIO()
        for row in rows:
            out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
        return out.getvalue()

    def __str__(self) -> str:
        return self.summary_table()


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else value


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def records_equal(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> bool:
    """Whether two runs gave the same records (JSON-equal, order included)."""
    return json.dumps(list(a), sort_keys=True) == json.dumps(list(b), sort_keys=True)
