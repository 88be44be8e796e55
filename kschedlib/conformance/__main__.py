"""python -m kschedlib.conformance DIR [--json OUT] [--verbose] [--family F ...]
    [--feature-gates OpportunisticBatching=false]"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

from kschedlib.conformance.runner import run_directory


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m kschedlib.conformance",
        description="Run conformance scenarios and compare with kube-scheduler's decisions.",
    )
    ap.add_argument("directory")
    ap.add_argument("--json", dest="json_out", help="write per-scenario results to this file")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every mismatch")
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    ap.add_argument("--feature-gates", metavar="GATES",
                    help="e.g. OpportunisticBatching=false (then <name>.expected.json is "
                    "used even where <name>.batching.expected.json exists)")
    args = ap.parse_args(argv)

    results = run_directory(args.directory, set(args.family) if args.family else None,
                            args.feature_gates)
    by_family: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_family[r.family].append(r.passed)
        if args.verbose and not r.passed:
            if r.error:
                print(f"{r.name}: ERROR {r.error}")
            for m in r.mismatches:
                print(f"  {m}")
    for fam in sorted(by_family):
        ok = sum(by_family[fam])
        print(f"{fam}: {ok}/{len(by_family[fam])} passed")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(
                [
                    {
                        "scenario": r.name,
                        "family": r.family,
                        "passed": r.passed,
                        "error": r.error,
                        "mismatches": [str(m) for m in r.mismatches],
                    }
                    for r in results
                ],
                fh,
                indent=2,
            )
    passed = sum(r.passed for r in results)
    print(f"conformance: {passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
