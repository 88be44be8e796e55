"""python -m kschedlib.bench SCENARIO.json [--limit N] | --workload dra-structured-500n
python -m kschedlib.bench --suite DIR [--limit N | --quick] [--only NAME,...]
python -m kschedlib.bench SCENARIO.json --placements PLACEMENTS.txt [--limit N]
    [--feature-gates OpportunisticBatching=false]
python -m kschedlib.bench --snapshot [SCENARIO.json] [snapshot options]
python -m kschedlib.bench --fork SCENARIO.json [--repeat N]
python -m kschedlib.bench --capacity SCENARIO.json [--replicas N]
python -m kschedlib.bench --whatif SCENARIO.json [--rounds N] [--candidates N] [--replicas N]
python -m kschedlib.bench --sweep SCENARIO.json [--workers N] [--limit N]
python -m kschedlib.bench --load FILE... [--make MB OUT]
python -m kschedlib.bench --churn [--events N] [--nodes N] [--alive N] [--explain on|off]
python -m kschedlib.bench --explain-cost SCENARIO.json [--limit N] [--rounds N]
python -m kschedlib.bench --html-cost SCENARIO.json"""

from __future__ import annotations

import argparse
import json
import sys

QUICK_LIMIT = 50
# Workloads generated without a scenario file.
SYNTHETIC = ("dra-structured-500n", "dra-partitionable-500n", "dra-consumable-500n")


def main(argv: list[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if "--snapshot" in args_in:
        from kschedlib.bench.snapshot_bench import main as snapshot_main

        args_in.remove("--snapshot")
        return snapshot_main(args_in)
    if "--whatif" in args_in:
        from kschedlib.bench.whatif_speed import main as whatif_speed_main

        args_in.remove("--whatif")
        return whatif_speed_main(args_in)
    for flag in ("--fork", "--capacity"):
        if flag in args_in:
            from kschedlib.bench.whatif_bench import main as whatif_main

            args_in.remove(flag)
            return whatif_main([*args_in, "--what", flag[2:]])
    for flag in ("--explain-cost", "--html-cost"):
        if flag in args_in:
            from kschedlib.bench.explain_bench import main as explain_main

            args_in.remove(flag)
            return explain_main([*args_in, "--what", flag[2:]])
    if "--churn" in args_in:
        from kschedlib.bench.churn_bench import main as churn_main

        args_in.remove("--churn")
        return churn_main(args_in)
    if "--load" in args_in:
        from kschedlib.bench.load_bench import main as load_main

        args_in.remove("--load")
        return load_main(args_in)
    if "--sweep" in args_in:
        from kschedlib.bench.sweep_bench import main as sweep_main

        args_in.remove("--sweep")
        return sweep_main(args_in)
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench", description=__doc__)
    ap.add_argument("scenario", nargs="?", help="scenario JSON (conformance format)")
    ap.add_argument("--limit", type=int, help="schedule only the first N pending pods")
    ap.add_argument("--suite", metavar="DIR", help="run every workload of DIR, one line each")
    ap.add_argument("--quick", action="store_true",
                    help=f"with --suite: only the first {QUICK_LIMIT} pending pods (smoke test)")
    ap.add_argument("--only", metavar="NAMES", help="with --suite: only these workloads "
                    "(file names without .json, comma-separated)")
    ap.add_argument("--placements", metavar="PLACEMENTS",
                    help="compare the placements with this file ('namespace/name node' lines) "
                    "and report the first differing pod")
    ap.add_argument("--feature-gates", metavar="GATES",
                    help="feature gates as kube-scheduler takes them, e.g. "
                    "OpportunisticBatching=false (placements without batching hints)")
    ap.add_argument("--no-batching", action="store_true",
                    help="the same as --feature-gates OpportunisticBatching=false")
    ap.add_argument("--gc-as-is", action="store_true",
                    help="do not gc.freeze() the loaded cluster while timing (the default "
                    "keeps it out of the collector's full passes)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--workload",
        choices=["anti-affinity-spread", *SYNTHETIC],
        help="anti-affinity-spread: 400 apps x 5 pods with hostname anti-affinity and zone "
        "spreading on the scenario's nodes instead of its pods; dra-structured-500n (no "
        "scenario file): scheduler_perf's DRA case, 500 nodes with 10 devices each, 2500 "
        "running pods with allocated claims and 2500 pods with template claims to schedule; "
        "dra-partitionable-500n: MIG partitions consuming shared counters "
        "(DRAPartitionableDevices); dra-consumable-500n: NICs shared by bandwidth "
        "(DRAConsumableCapacity)",
    )
    args = ap.parse_args(args_in)
    if args.no_batching:
        gates = [g for g in (args.feature_gates or "").split(",") if g.strip()]
        args.feature_gates = ",".join([*gates, "OpportunisticBatching=false"])
    limit = args.limit or (QUICK_LIMIT if args.quick else None)
    if args.suite:
        from kschedlib.bench.suite import main as suite_main

        return suite_main(args.suite, limit, args.only)
    if args.scenario is None and args.workload not in SYNTHETIC:
        ap.error("a scenario file (or --suite DIR, or --workload dra-structured-500n) is needed")
    if args.one and args.scenario:
        from kschedlib.bench.suite import measure

        print(json.dumps(measure(args.scenario, limit)))
        return 0
    if args.placements and args.scenario:
        from kschedlib.bench.placements import main as placements_main

        return placements_main(args.scenario, args.placements, limit,
                               feature_gates=args.feature_gates)
    from kschedlib.bench.scheduling import run

    run(args.scenario, limit, workload=args.workload, feature_gates=args.feature_gates,
        freeze_gc=not args.gc_as_is)
    return 0


if __name__ == "__main__":
    sys.exit(main())
