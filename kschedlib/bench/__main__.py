"""python -m kschedlib.bench SCENARIO.json [--limit N] | --workload dra-structured-500n
python -m kschedlib.bench --snapshot [SCENARIO.json] [snapshot options]"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if "--snapshot" in args_in:
        from kschedlib.bench.snapshot_bench import main as snapshot_main

        args_in.remove("--snapshot")
        return snapshot_main(args_in)
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench", description=__doc__)
    ap.add_argument("scenario", nargs="?", help="scenario JSON (conformance format)")
    ap.add_argument("--limit", type=int, help="schedule only the first N pending pods")
    ap.add_argument(
        "--workload",
        choices=["anti-affinity-spread", "dra-structured-500n"],
        help="anti-affinity-spread: 400 apps x 5 pods with hostname anti-affinity and zone "
        "spreading on the scenario's nodes instead of its pods; dra-structured-500n (no "
        "scenario file): scheduler_perf's DRA case, 500 nodes with 10 devices each, 2500 "
        "running pods with allocated claims and 2500 pods with template claims to schedule",
    )
    args = ap.parse_args(args_in)
    if args.scenario is None and args.workload != "dra-structured-500n":
        ap.error("a scenario file is needed unless --workload dra-structured-500n")
    from kschedlib.bench.scheduling import run

    run(args.scenario, args.limit, workload=args.workload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
