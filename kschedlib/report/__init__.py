"""A self-contained HTML report of a scheduling run (``kschedlib simulate --html``).

The page embeds its data as JSON and renders it with a small vanilla script: no network
access, no external assets. Large runs stay usable because the data is aggregated (per-pod
rejections grouped by plugin and reason, score breakdowns for the top nodes only) and the
tables are paginated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from kschedlib.report.build import build_report_data, pending_order, split_reasons
from kschedlib.results import SchedulingResult

__all__ = ["Report", "build_report_data", "pending_order", "split_reasons"]


def _asset(name: str) -> str:
    return resources.files("kschedlib.report").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


class Report:
    """The report of one run: ``summary`` (the numbers on the page), ``data`` (everything
    the page shows) and ``to_html()``/``write_html()``.

    Build it from a scheduler and the results its ``run()`` returned::

        results = sched.run()
        Report.from_results(sched, results).write_html("report.html")
    """

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def from_results(
        cls,
        scheduler: Any,
        results: Iterable[SchedulingResult],
        *,
        order: Sequence[str] | None = None,
        preemptions: Iterable[SchedulingResult] | None = None,
        title: str = "kschedlib scheduling report",
        claims: Iterable[Any] | None = None,
    ) -> Report:
        """Aggregate ``results`` (the last one per pod counts) against the scheduler's cache.

        ``order`` lists the pod keys to report, in order (default: the pods in ``results``);
        ``preemptions`` the attempts that preempted (default: results with victims);
        ``claims`` ResourceClaims whose allocations to show (default: those the scheduler
        holds).
        """
        return cls(build_report_data(
            scheduler, results, order=order, preemptions=preemptions, title=title, claims=claims
        ))

    @classmethod
    def from_simulation(cls, sim: Any, *, title: str = "kschedlib scheduling report") -> Report:
        """The report of a ``kschedlib.cli.simulate.Simulation``."""
        return cls.from_results(
            sim.scheduler, sim.last.values(), order=sim.order, preemptions=sim.preemptions,
            title=title,
        )

    @property
    def summary(self) -> dict[str, int]:
        """Pods, scheduled, unschedulable, preempted (victims), preemptors, nodes, zones, ..."""
        return dict(self.data["summary"])

    def to_html(self) -> str:
        from kschedlib.version import __version__

        payload = json.dumps(self.data, separators=(",", ":"), ensure_ascii=False)
        # Nothing in the data may close the script element or open a comment in it.
        payload = payload.replace("</", "<\\/").replace("<!--", "<\\u0021--")
        page = _asset("report.html")
        page = page.replace("/*CSS*/", _asset("report.css"), 1)
        page = page.replace("/*VERSION*/", __version__, 1)
        head, tail = page.split("/*DATA*/", 1)
        tail = tail.replace("/*JS*/", _asset("report.js"), 1)
        return head + payload + tail

    def write_html(self, path: str | os.PathLike[str]) -> int:
        """Write the page; returns its size in bytes."""
        text = self.to_html().encode("utf-8")
        with open(path, "wb") as fh:
            fh.write(text)
        return len(text)
