"""kschedlib capacity / drain / whatif: what-if questions about a cluster dump, answered in a
fork."""

from __future__ import annotations

import argparse
import io
import json
import pathlib
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from kschedlib.api.loader import load_objects
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import KSchedError
from kschedlib.scheduler import Scheduler


def load_cluster(
    path: str, seed: int, feature_gates: str = "", err: TextIO | None = None,
    prog: str = "kschedlib",
) -> Scheduler:
    """A scheduler holding a cluster read as ``kschedlib simulate`` reads it (kubectl dumps,
    manifests or a scenario JSON), with the input's pending pods scheduled first exactly as
    ``simulate`` schedules them (cluster-autoscaler, too, works on the cluster as it will
    be). The input's notes, and the pods left pending, are written to ``err``."""
    from kschedlib.api.cluster import load_cluster as read_cluster
    from kschedlib.cli.simulate import foreign_note, simulate
    from kschedlib.features import FeatureGates

    cluster = read_cluster(path)
    objects = cluster.initial_objects()
    if not any(isinstance(o, Node) for o in objects):
        raise KSchedError(f"{path}: no nodes found")
    sim = simulate(
        cluster.config, objects, seed=seed, held=cluster.held_pods(),
        feature_gates=FeatureGates.parse(feature_gates),
    )
    sched = sim.scheduler
    sched.explain_enabled = False
    if err is not None:
        notes = cluster.notes()
        left = [k for k in sim.order if k not in {p.key for p in sched.bound_pods()}]
        if sim.order:
            line = f"scheduled the input's {len(sim.order)} pending pods first"
            if left:
                shown = ", ".join(left[:5]) + (", ..." if len(left) > 5 else "")
                line += f"; {len(left)} stay pending: {shown}"
            notes.append(line)
        note = foreign_note(sched)
        if note:
            notes.append(note)
        for n in notes:
            err.write(f"{prog}: {n}\n")
    return sched


def load_pod(path: str) -> Pod:
    """The one Pod in a YAML or JSON file (``-``: standard input); errors name the file."""
    source: Any = path if path == "-" else pathlib.Path(path)
    pods = [o for o in load_objects(source) if isinstance(o, Pod)]
    if len(pods) != 1:
        raise KSchedError(f"{path}: expected exactly one Pod, found {len(pods)}")
    return pods[0]


def _cluster_args(ap: argparse.ArgumentParser) -> None:
    """The options every what-if command shares: the cluster to read, output and scheduler."""
    ap.add_argument("--cluster", required=True, help="scenario JSON or folder of manifests")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--seed", type=int, default=0, help="seed for tie-breaking (default 0)")
    ap.add_argument("--feature-gates", metavar="A=true,B=false", default="",
                    help="kube-scheduler v1.35 feature gates to set")


def _emit(data: Any, text: str, as_json: bool, out: TextIO) -> None:
    if as_json:
        json.dump(data, out, indent=2)
        out.write("\n")
    else:
        out.write(text + "\n")


def capacity_main(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    ap = argparse.ArgumentParser(
        prog="kschedlib capacity",
        description="How many replicas of a pod fit, created one after another (cluster-capacity).",
    )
    ap.add_argument("pod", help="a Pod manifest (YAML or JSON)")
    ap.add_argument("--limit", type=int, help="stop after N replicas")
    _cluster_args(ap)
    args = ap.parse_args(list(argv))
    try:
        pod = load_pod(args.pod)
        sched = load_cluster(args.cluster, args.seed, args.feature_gates, err, "kschedlib capacity")
        report = sched.capacity(pod, limit=args.limit)
    except (KSchedError, OSError, json.JSONDecodeError) as exc:
        err.write(f"kschedlib capacity: {type(exc).__name__}: {exc}\n")
        return 2
    _emit(report.to_dict(), str(report), args.json, out)
    return 0


def drain_main(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    ap = argparse.ArgumentParser(
        prog="kschedlib drain",
        description="Can these nodes be removed? cluster-autoscaler's drainability rules, then "
        "the movable pods scheduled on the remaining nodes. Without NODE: rank the nodes "
        "removable one after another.",
    )
    ap.add_argument("nodes", nargs="*", metavar="NODE", help="nodes to drain together")
    _cluster_args(ap)
    args = ap.parse_args(list(argv))
    try:
        sched = load_cluster(args.cluster, args.seed, args.feature_gates, err, "kschedlib drain")
        if args.nodes:
            report = sched.simulate_drain(args.nodes)
            _emit(report.to_dict(), str(report), args.json, out)
            return 0 if report.success else 1
        ranking = sched.removable_nodes()
    except (KSchedError, OSError, json.JSONDecodeError) as exc:
        err.write(f"kschedlib drain: {type(exc).__name__}: {exc}\n")
        return 2
    _emit(ranking.to_dict(), str(ranking), args.json, out)
    return 0


def whatif_main(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    ap = argparse.ArgumentParser(
        prog="kschedlib whatif",
        description="Would this pod be scheduled now, where and why; if not, the "
        "FailedScheduling text and what preemption would do (nothing is changed).",
    )
    ap.add_argument("pod", help="a Pod manifest (YAML or JSON)")
    _cluster_args(ap)
    args = ap.parse_args(list(argv))
    try:
        pod = load_pod(args.pod)
        sched = load_cluster(args.cluster, args.seed, args.feature_gates, err, "kschedlib whatif")
        verdict = sched.can_schedule(pod)
    except (KSchedError, OSError, json.JSONDecodeError) as exc:
        err.write(f"kschedlib whatif: {type(exc).__name__}: {exc}\n")
        return 2
    text = str(verdict)
    if verdict.explanation is not None:
        from kschedlib.cli.simulate import explain_text

        buf = io.StringIO()
        explain_text(verdict.explanation, buf)
        text += "\n\n" + buf.getvalue().rstrip("\n")
    _emit(verdict.to_dict(), text, args.json, out)
    return 0 if verdict.schedulable else 1
