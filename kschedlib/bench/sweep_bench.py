"""python -m kschedlib.bench --sweep SCENARIO [--workers N] [--limit N]: variants per minute
of a zone-failure sweep (baseline plus one variant per zone) on a scenario's cluster."""

from __future__ import annotations

import argparse
import time
from typing import Any

import attrs


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench --sweep", description=__doc__)
    ap.add_argument("scenario", help="scenario JSON (conformance format)")
    ap.add_argument("--workers", type=int, default=0,
                    help="run on a dask LocalCluster of N worker processes (default: locally)")
    ap.add_argument("--limit", type=int, help="schedule only the first N pending pods per variant")
    ap.add_argument("--repeat", type=int, default=1, help="run the zone sweep this many times")
    args = ap.parse_args(argv)
    from kschedlib.sweep import BaseCluster, Variant, baseline, run_sweep, zones_down

    t0 = time.perf_counter()
    base = BaseCluster.load(args.scenario)
    if args.limit is not None:
        base = attrs.evolve(base, pending=base.pending[: args.limit])
    load_s = time.perf_counter() - t0
    variants: list[Variant] = []
    for r in range(args.repeat):
        variants += [attrs.evolve(v, name=f"{v.name}#{r}") for v in [baseline(), *zones_down(base)]]
    engine = "local"
    t0, c0 = time.perf_counter(), time.process_time()
    if args.workers:
        import distributed

        dist: Any = distributed
        with dist.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, dist.Client(cluster) as client:
            startup_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            result = run_sweep(base, variants, client=client)
        engine = f"dask LocalCluster, {args.workers} workers (startup {startup_s:.1f} s)"
    else:
        result = run_sweep(base, variants)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    errors = [r for r in result.records if "error" in r]
    print(f"cluster: {len(base.nodes)} nodes, {len(base.pods)} running pods, "
          f"{len(base.pending)} pending pods per variant (loaded in {load_s:.1f} s)")
    print(f"engine: {engine}")
    print(f"variants: {len(variants)}, wall: {wall:.1f} s, CPU of this process: {cpu:.1f} s, "
          f"errors: {len(errors)}")
    per_cpu = f", {60.0 * len(variants) / cpu:.2f} per CPU-minute" if not args.workers else ""
    print(f"variants/minute: {60.0 * len(variants) / wall:.2f}{per_cpu}")
    return 1 if errors else 0
