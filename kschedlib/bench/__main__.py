"""python -m kschedlib.bench SCENARIO.json [--limit N] | --snapshot [SCENARIO.json]"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench")
    ap.add_argument("scenario", nargs="?", help="scenario JSON (conformance format)")
    ap.add_argument("--limit", type=int, help="schedule only the first N pending pods")
    ap.add_argument("--snapshot", action="store_true",
                    help="time incremental update_snapshot against a full rebuild")
    args, rest = ap.parse_known_args(argv)
    if args.snapshot:
        from kschedlib.bench.snapshot_bench import main as snapshot_main

        return snapshot_main(([args.scenario] if args.scenario else []) + rest)
    if not args.scenario:
        ap.error("a scenario file is required")
    from kschedlib.bench.scheduling import run

    run(args.scenario, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
