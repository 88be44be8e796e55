"""kschedlib simulate: schedule every pending pod of kubectl dumps, manifests or a scenario, offline."""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

import attrs

from kschedlib.api.cluster import load_cluster
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import KSchedError
from kschedlib.features import FeatureGateError, FeatureGates
from kschedlib.framework.handle import FakeClock
from kschedlib.results import Explanation, Outcome, SchedulingResult
from kschedlib.scheduler import Scheduler

MAX_ROUNDS = 120
PROGRESS_INTERVAL = 5.0
"""Seconds between progress lines when the progress stream is not a terminal."""


class Progress:
    """``scheduled N/M``: rewritten in place on a terminal; on anything else (a log, a pipe)
    one line every :data:`PROGRESS_INTERVAL` seconds of wall time, as rich and tqdm do."""

    def __init__(self, out: TextIO, total: int, interval: float | None = None) -> None:
        isatty = getattr(out, "isatty", None)
        self.out, self.total = out, total
        self.interval = PROGRESS_INTERVAL if interval is None else interval
        self.tty = bool(callable(isatty) and isatty())
        self._next = time.monotonic() + self.interval
        self._wrote = False

    def update(self, done: int) -> None:
        if self.tty:
            self.out.write(f"\rscheduled {done}/{self.total}")
            self._wrote = True
            return
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.interval
            self.out.write(f"scheduled {done}/{self.total}\n")

    def close(self) -> None:
        if self._wrote:
            self.out.write("\n")


def load_input(*paths: str) -> tuple[Any, list[Any]]:
    """(configuration or None, objects) from scenario files, kubectl dumps, manifest files or
    folders, or ``-`` (stdin); manifests are expanded as the API server and controllers would.
    Kept for callers of the old single-path form; see :func:`kschedlib.api.load_cluster`."""
    cluster = load_cluster(*paths)
    return cluster.config, cluster.objects


@attrs.define(slots=True)
class Simulation:
    """The outcome of a simulation: the scheduler, the last attempt per pod, the pending pods
    in input order and the attempts that preempted."""

    scheduler: Scheduler
    last: dict[str, SchedulingResult]
    order: list[str]
    preemptions: list[SchedulingResult]
    attempts: dict[str, list[SchedulingResult]] = attrs.field(factory=dict)
    """Every attempt of the pods named for explanation, in order."""


def simulate(
    config: Any,
    objects: Sequence[Any],
    *,
    seed: int | None = 0,
    progress: TextIO | None = None,
    explain: Iterable[str] | bool = (),
    held: Mapping[str, Pod] | None = None,
    feature_gates: FeatureGates | None = None,
) -> Simulation:
    """Schedule all pending pods, advancing a fake clock through backoffs until nothing moves.
    ``held`` maps a pod key to a pod created only once that pod is bound (an OrderedReady
    StatefulSet's next ordinal); such pods are not in ``objects``.

    Explanations are recorded only for the pods named in ``explain`` (every attempt of
    each): recording them for all pods would cost time and memory for nothing.
    ``explain=True`` records the last attempt of every pod (what the HTML report shows).
    Progress goes to ``progress`` (see :class:`Progress`).
    """
    from kschedlib.report.build import TOP_NODES

    clock = FakeClock()
    keys: frozenset[str] = frozenset() if isinstance(explain, bool) else frozenset(explain)
    sched = Scheduler(
        config, clock=clock, seed=seed, explain=True if explain is True else keys,
        feature_gates=feature_gates,
        # Every pod's explanation is for the HTML report, which shows the top nodes' scores.
        explain_top_nodes=TOP_NODES if explain is True else None,
    )
    sched.apply(objects)
    for after, pod in (held or {}).items():
        sched.hold(pod, after=after)
    order = [o.key for o in objects if isinstance(o, Pod) and not o.spec.node_name]
    order += [p.key for p in (held or {}).values()]
    last: dict[str, SchedulingResult] = {}
    preemptions: list[SchedulingResult] = []
    attempts: dict[str, list[SchedulingResult]] = {}
    total = len(order)
    bar = Progress(progress, total) if progress is not None and total >= 50 else None
    done = 0
    scheduled = Outcome.Scheduled
    for _ in range(MAX_ROUNDS):
        for r in sched.run():
            if r.victims:
                preemptions.append(r)
            key = r.key
            prev = last.get(key)
            if prev is not None and prev.outcome == scheduled:
                done -= 1
            if r.outcome == scheduled:
                done += 1
            last[key] = r
            if key in keys:
                attempts.setdefault(key, []).append(r)
            if bar is not None:
                bar.update(done)
        if not sched.queue.pods_in_backoff_q() and not sched.queue.pods_in_active_q():
            break
        clock.advance(1.0)
    if bar is not None:
        bar.close()
    return Simulation(sched, last, order, preemptions, attempts)


def foreign_note(sched: Scheduler) -> str:
    """``not scheduled: 2 pods with no profile for their schedulerName ("x": 2)`` or ""."""
    names = Counter(p.spec.scheduler_name for p in sched.foreign_pods())
    if not names:
        return ""
    total = sum(names.values())
    detail = ", ".join(f'"{n}": {c}' for n, c in sorted(names.items()))
    return f"not scheduled: {total} pods with no profile for their schedulerName ({detail})"


def _utilization(sched: Scheduler) -> list[dict[str, Any]]:
    sched.cache.update_snapshot(sched.snapshot)
    rows = []
    for ni in sorted(sched.snapshot.list(), key=lambda n: n.name):
        a, r = ni.allocatable, ni.requested
        rows.append({
            "node": ni.name,
            "pods": len(ni.pods),
            "cpuRequestedMilli": r.milli_cpu,
            "cpuAllocatableMilli": a.milli_cpu,
            "memoryRequested": r.memory,
            "memoryAllocatable": a.memory,
        })
    return rows


def _pct(used: int, total: int) -> str:
    return f"{100 * used / total:5.1f}%" if total else "   n/a"


def _never_attempted(sched: Scheduler, key: str) -> str:
    why = sched.why_pending(key)
    return f"never attempted: {why}" if why else "never attempted"


def report_text(sim: Simulation, out: TextIO) -> None:
    sched, last, order = sim.scheduler, sim.last, sim.order
    placed = [(k, last[k]) for k in order if k in last and last[k].outcome == Outcome.Scheduled]
    waiting = [(k, last[k]) for k in order if k in last and last[k].outcome == Outcome.Waiting]
    failed = [
        (k, last.get(k))
        for k in order
        if k not in last or last[k].outcome not in (Outcome.Scheduled, Outcome.Waiting)
    ]
    width = max([len(k) for k in order] + [3])
    out.write(f"Placements ({len(placed)}/{len(order)} pods scheduled)\n")
    out.write(f"  {'POD':<{width}}  NODE\n")
    for k, r in placed:
        out.write(f"  {k:<{width}}  {r.node}\n")
    if waiting:
        out.write(f"\nWaiting at Permit ({len(waiting)})\n")
        for k, wr in waiting:
            out.write(f"  {k} on {wr.node}: {sched.why_pending(k) or wr.message}\n")
    if failed:
        out.write(f"\nUnschedulable ({len(failed)})\n")
        for k, fr in failed:
            msg = fr.message if fr is not None else _never_attempted(sched, k)
            nom = f" [nominated: {fr.nominated_node}]" if fr is not None and fr.nominated_node else ""
            out.write(f"  {k}: {msg}{nom}\n")
    preemptions = sim.preemptions
    if preemptions:
        out.write(f"\nPreemptions ({len(preemptions)})\n")
        for r in preemptions:
            victims = ", ".join(sorted(v.key for v in r.victims))
            out.write(f"  {r.key} nominated to {r.nominated_node}, evicting {victims}\n")
    out.write("\nNode utilization (requests / allocatable)\n")
    out.write(f"  {'NODE':<20} {'PODS':>5} {'CPU':>8} {'MEMORY':>8}\n")
    for row in _utilization(sched):
        out.write(
            f"  {row['node']:<20} {row['pods']:>5} "
            f"{_pct(row['cpuRequestedMilli'], row['cpuAllocatableMilli']):>8} "
            f"{_pct(row['memoryRequested'], row['memoryAllocatable']):>8}\n"
        )
    from kschedlib.report import dra as dra_report

    dra_report.write_text(sched.objects, sched.bound_pods(), out)


_REASON = re.compile(r"^(\d+) (.+)$")


def failure_reasons(message: str) -> list[str]:
    """The reasons of a FailedScheduling message without their node counts:
    ``0/5 nodes are available: 3 Insufficient cpu, 2 node(s) ... . preemption: ...`` gives
    ``["Insufficient cpu", "node(s) ..."]``; another message is its own reason."""
    head, sep, rest = message.partition(" nodes are available: ")
    if not sep:
        return [message]
    body = rest.split(". ", 1)[0].rstrip(".")
    reasons = []
    for part in body.split(", "):
        m = _REASON.match(part)
        reasons.append(m.group(2) if m else part)
    return reasons


def summary(sim: Simulation) -> dict[str, Any]:
    """Counts of scheduled and unschedulable pods, and unschedulable pods grouped by reason
    (a pod counts once under each reason its last FailedScheduling message gives)."""
    last, order = sim.last, sim.order
    by_reason: dict[str, int] = {}
    failed = 0
    for k in order:
        r = last.get(k)
        if r is not None and r.outcome == Outcome.Scheduled:
            continue
        failed += 1
        for reason in dict.fromkeys(failure_reasons(r.message if r else "never attempted")):
            by_reason[reason] = by_reason.get(reason, 0) + 1
    return {
        "pods": len(order),
        "scheduled": len(order) - failed,
        "unschedulable": failed,
        "preemptions": len(sim.preemptions),
        "reasons": [
            {"reason": k, "pods": n}
            for k, n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    }


def summary_text(sim: Simulation, out: TextIO) -> None:
    data = summary(sim)
    out.write(
        f"Scheduled {data['scheduled']}/{data['pods']} pods; {data['unschedulable']} "
        f"unschedulable; {data['preemptions']} preemption(s)\n"
    )
    if data["reasons"]:
        out.write("\nUnschedulable pods by reason\n")
        out.write(f"  {'PODS':>6}  REASON\n")
        for row in data["reasons"]:
            out.write(f"  {row['pods']:>6}  {row['reason']}\n")


def attempts_text(sim: Simulation, key: str, out: TextIO) -> bool:
    """Every recorded attempt of ``key`` (a preempting pod: the failed attempt with its
    preemption, then the retry); False when none was recorded."""
    attempts = [r for r in sim.attempts.get(key, []) if r.explanation is not None]
    if not attempts:
        exp = sim.scheduler.explain(key)
        if exp is None:
            return False
        explain_text(exp, out)
        return True
    for i, r in enumerate(attempts, 1):
        line = f"Attempt {i}/{len(attempts)}: {r.outcome.value}"
        if r.node:
            line += f" on {r.node}"
        if r.nominated_node:
            line += f", nominated to {r.nominated_node}"
        if r.victims:
            line += f", preempting {', '.join(sorted(v.key for v in r.victims))}"
        out.write(line + "\n")
        if r.outcome != Outcome.Scheduled and r.message:
            out.write(f"  {r.message}\n")
        assert r.explanation is not None
        explain_text(r.explanation, out)
        if i < len(attempts):
            out.write("\n")
    return True


def explain_text(exp: Explanation, out: TextIO) -> None:
    out.write(f"Pod {exp.pod} (profile {exp.profile})\n")
    if exp.pre_filter is not None:
        pf = exp.pre_filter
        out.write(f"  PreFilter rejected the pod: {pf.plugin}: {pf.code}: {', '.join(pf.reasons)}\n")
    if exp.rejected:
        out.write("  Filtered out:\n")
        for node, v in sorted(exp.rejected.items()):
            out.write(f"    {node}: {v.plugin or '-'} ({v.code}): {', '.join(v.reasons)}\n")
    out.write(f"  Feasible: {', '.join(exp.feasible) or '(none)'}\n")
    if exp.scores:
        plugins = sorted({p for s in exp.scores.values() for p in s.plugins})
        out.write("  Scores (raw -> normalized x weight = weighted):\n")
        for node, s in sorted(exp.scores.items(), key=lambda kv: (-kv[1].total, kv[0])):
            parts = [
                f"{p} {d.raw}->{d.normalized}x{d.weight}={d.weighted}"
                for p in plugins
                if (d := s.plugins.get(p)) is not None
            ]
            parts += [f"{e} {v}" for e, v in s.extenders.items()]
            out.write(f"    {node}: total {s.total}: {'; '.join(parts)}\n")
    if exp.selected:
        out.write(f"  Selected: {exp.selected}\n")
    if exp.post_filter_message:
        out.write(f"  PostFilter: {exp.post_filter_message}\n")


def report_json(sim: Simulation) -> dict[str, Any]:
    sched, last, order = sim.scheduler, sim.last, sim.order
    pods = []
    for k in order:
        r = last.get(k)
        pods.append({
            "pod": k,
            "node": r.node if r is not None and r.outcome == Outcome.Scheduled else None,
            "outcome": r.outcome.value if r is not None else None,
            "message": r.message if r is not None else _never_attempted(sched, k),
            "nominatedNode": r.nominated_node if r is not None else None,
        })
    preempted = [
        {"pod": r.key, "nominatedNode": r.nominated_node,
         "victims": sorted(v.key for v in r.victims)}
        for r in sim.preemptions
    ]
    from kschedlib.report import dra as dra_report

    return {
        "pods": pods, "preemptions": preempted, "nodes": _utilization(sched),
        "resourceClaims": dra_report.pod_devices(sched.objects, sched.bound_pods()),
        "deviceUtilization": dra_report.device_utilization(sched.objects),
    }


def main(
    argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr,
    *, freeze_gc: bool = False,
) -> int:
    """``freeze_gc``: this process ends with the command, so the loaded objects and the run's
    results are frozen for the collector (``gc.freeze``) instead of walked by every full
    pass."""
    import argparse

    ap = argparse.ArgumentParser(prog="kschedlib simulate", description=__doc__)
    ap.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="kubectl dump (JSON/YAML, Lists included), manifest file or folder (recursive), "
        "scenario JSON (conformance format), or - for stdin; several are merged",
    )
    ap.add_argument(
        "--explain", metavar="NS/POD", action="append",
        help="print the scheduling breakdown of every attempt of a pod (repeatable); "
        "explanations are recorded only for these pods",
    )
    ap.add_argument(
        "--summary", action="store_true",
        help="counts only: unschedulable pods grouped by reason (no per-pod listing)",
    )
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--seed", type=int, default=0, help="seed for tie-breaking (default 0)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    ap.add_argument(
        "--feature-gates",
        metavar="A=true,B=false",
        default="",
        help="kube-scheduler v1.35 feature gates to set (see docs/guides/feature-gates.md)",
    )
    args = ap.parse_args(list(argv))
    try:
        gates = FeatureGates.parse(args.feature_gates)
    except FeatureGateError as exc:
        err.write(
            f'kschedlib simulate: invalid argument "{args.feature_gates}" for "--feature-gates" '
            f"flag: {exc}\n"
        )
        return 2
    for warning in gates.warnings:
        err.write(f"kschedlib simulate: warning: {warning}\n")
    try:
        cluster = load_cluster(*args.paths)
        if freeze_gc:  # the loaded objects live as long as this process
            gc.freeze()
        for note in cluster.notes():
            err.write(f"kschedlib simulate: {note}\n")
        if not any(isinstance(o, Node) for o in cluster.objects):
            where = ", ".join(args.paths)
            err.write(
                f"kschedlib simulate: {where}: no nodes found (add a node dump, e.g. "
                "kubectl get nodes -o json > nodes.json)\n"
            )
            return 2
        known = {o.key for o in cluster.objects if isinstance(o, Pod)}
        missing = [k for k in args.explain or () if k not in known]
        if missing:
            err.write(
                f"kschedlib simulate: --explain {', '.join(missing)}: no such pod in the input "
                "(namespace/name)\n"
            )
            return 2
        sim = simulate(
            cluster.config,
            cluster.initial_objects(),
            seed=args.seed,
            progress=None if args.quiet or args.json else err,
            explain=True if args.html else (args.explain or ()),
            held=cluster.held_pods(),
            feature_gates=gates,
        )
    except (KSchedError, OSError, json.JSONDecodeError) as exc:
        err.write(f"kschedlib simulate: {type(exc).__name__}: {exc}\n")
        return 2
    except RecursionError:
        where = ", ".join(args.paths)
        err.write(f"kschedlib simulate: InvalidObjectError: {where}: nested too deeply\n")
        return 2
    note = foreign_note(sim.scheduler)
    if note:
        err.write(f"kschedlib simulate: {note}\n")
    if args.html:
        from kschedlib.report import Report

        if freeze_gc:  # so do the run's results
            gc.freeze()
        try:
            title = ", ".join(os.path.basename(p.rstrip("/")) for p in args.paths)
            Report.from_simulation(sim, title=title).write_html(args.html)
        except OSError as exc:
            err.write(f"kschedlib simulate: {type(exc).__name__}: {exc}\n")
            return 2
    if args.json:
        data = summary(sim) if args.summary else report_json(sim)
        if args.explain:
            exps: dict[str, Any] = {}
            for key in args.explain:
                exp = sim.scheduler.explain(key)
                exps[key] = {
                    "last": exp.to_dict() if exp is not None else None,
                    "attempts": [
                        r.explanation.to_dict() for r in sim.attempts.get(key, [])
                        if r.explanation is not None
                    ],
                }
            if len(args.explain) == 1:
                data["explanation"] = exps[args.explain[0]]["last"]
            data["explanations"] = exps
        json.dump(data, out, indent=2)
        out.write("\n")
        return 0
    if args.summary:
        summary_text(sim, out)
    else:
        report_text(sim, out)
    status = 0
    for key in args.explain or ():
        out.write("\n")
        if not attempts_text(sim, key, out):
            why = sim.scheduler.why_pending(key)
            out.write(f"no scheduling attempt recorded for {key}")
            out.write(f": {why}\n" if why else "\n")
            status = 1
            continue
        why = sim.scheduler.why_pending(key)
        if why:
            out.write(f"  Now: {why}\n")
    return status
