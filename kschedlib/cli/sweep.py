"""kschedlib sweep: many what-if variants of one cluster, locally or on a Dask cluster."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import attrs

from kschedlib.cli.whatif import load_pod
from kschedlib.errors import InvalidObjectError, KSchedError
from kschedlib.sweep import (
    BaseCluster,
    CapacityQuestion,
    Variant,
    baseline,
    growth,
    load_variants,
    nodes_down,
    random_failures,
    run_sweep,
    text_progress,
    zones_down,
)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _pod_template(path: str) -> dict[str, Any]:
    return load_pod(path).to_dict()


def build_variants(args: Any, base: BaseCluster) -> list[Variant]:
    variants: list[Variant] = []
    if args.baseline:
        variants.append(baseline())
    if args.zones_down:
        variants += zones_down(base)
    if args.nodes_down is not None:
        variants += nodes_down(base, args.nodes_down or None)
    if args.growth:
        pod = _pod_template(args.pod) if args.pod else None
        variants += growth(args.growth, pod=pod, replicas=args.replicas)
    elif args.pod:
        raise InvalidObjectError("sweep", "--pod", "goes with --growth")
    if args.failures:
        variants += random_failures(base, samples=args.failures, nodes=args.failure_nodes,
                                    seed=args.seed)
    if args.variants:
        variants += load_variants(_read(args.variants))
    if args.capacity:
        question = CapacityQuestion(template=_pod_template(args.capacity),
                                    limit=args.capacity_limit)
        variants = [attrs.evolve(v, capacity=question) for v in variants]
    return variants


def main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    import argparse

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err

    ap = argparse.ArgumentParser(prog="kschedlib sweep", description=__doc__)
    ap.add_argument("cluster", nargs="+", metavar="CLUSTER",
                    help="kubectl dumps, manifest files or folders, scenario JSON (as simulate "
                         "reads them; several are merged)")
    ap.add_argument("--baseline", action="store_true", help="add the unchanged cluster as a row")
    ap.add_argument("--zones-down", action="store_true", help="one variant per zone lost")
    ap.add_argument("--nodes-down", nargs="*", metavar="NODE",
                    help="one variant per node lost (all nodes, or those named)")
    ap.add_argument("--growth", metavar="START:STOP:STEP",
                    help="scale the pending pods (or --pod replicas) by each factor")
    ap.add_argument("--pod", metavar="POD.yaml", help="with --growth: the pod to replicate")
    ap.add_argument("--replicas", type=int, default=1, help="with --pod: replicas at factor 1")
    ap.add_argument("--failures", type=int, default=0, metavar="N",
                    help="N random failure samples (seeded by --seed)")
    ap.add_argument("--failure-nodes", type=int, default=1, metavar="K",
                    help="nodes lost per failure sample (default 1)")
    ap.add_argument("--variants", metavar="FILE", help="variants as JSON/YAML (a list)")
    ap.add_argument("--capacity", metavar="POD.yaml",
                    help="in every variant, after scheduling: how many more of this pod fit")
    ap.add_argument("--capacity-limit", type=int, metavar="N", help="stop counting at N")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="run on this Dask scheduler (tcp://host:8786), or local:N for a "
                         "LocalCluster of N worker processes")
    ap.add_argument("--out", metavar="FILE", help="write records: .csv, else JSON Lines")
    ap.add_argument("--json", action="store_true", help="print the records as JSON")
    ap.add_argument("--seed", type=int, default=0, help="tie-break and sampling seed")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(list(argv))
    try:
        base = BaseCluster.load(*args.cluster)
        if not base.nodes:
            err.write(f"kschedlib sweep: {', '.join(args.cluster)}: no nodes found\n")
            return 2
        variants = build_variants(args, base)
        if not variants:
            err.write("kschedlib sweep: no variants: give --zones-down, --nodes-down, --growth, "
                      "--failures, --variants or --baseline\n")
            return 2
        progress = None if args.quiet or args.json else text_progress(err)
        if args.dask and args.dask.startswith("local:"):
            result = _run_local_cluster(base, variants, args.dask, args.seed, progress)
        else:
            result = run_sweep(base, variants, address=args.dask, seed=args.seed,
                               progress=progress)
    except (KSchedError, OSError, json.JSONDecodeError) as exc:
        err.write(f"kschedlib sweep: {type(exc).__name__}: {exc}\n")
        return 2
    if args.out:
        result.save(args.out)
    if args.json:
        json.dump(result.to_dicts(), out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        out.write(result.summary_table())
    return 1 if any("error" in r for r in result.records) else 0


def _run_local_cluster(
    base: BaseCluster, variants: list[Variant], spec: str, seed: int, progress: Any
) -> Any:
    try:
        workers = int(spec.split(":", 1)[1])
        import distributed
    except ValueError:
        raise InvalidObjectError("sweep", "--dask", f"expected local:N, got {spec!r}") from None
    except ImportError:
        raise KSchedError("sweep: --dask needs the dask extra: pip install 'kschedlib[dask]'") from None
    dist: Any = distributed
    with dist.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None) as cluster, dist.Client(cluster) as client:
        return run_sweep(base, variants, client=client, seed=seed, progress=progress)
