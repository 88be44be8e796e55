"""``kschedlib`` / ``python -m kschedlib``: command-line entry point."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

USAGE = """usage: kschedlib [--version] COMMAND [ARGS]

commands:
  simulate PATH...  schedule kubectl dumps, manifests (files, folders, - for stdin) or a
                    scenario (JSON) and report placements
  capacity POD.yaml --cluster PATH [--limit N] [--json]
                    how many replicas of a pod fit (cluster-capacity)
  drain [NODE...] --cluster PATH [--json]
                    can these nodes be removed (cluster-autoscaler rules); no NODE: rank
                    the nodes removable one after another
  whatif POD.yaml --cluster PATH [--json]
                    would the pod be scheduled now, where, or why not and what
                    preemption would do
  sweep CLUSTER     run many what-if variants (zones down, growth, failures) locally or
                    on Dask
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] in ("--version", "-V"):
        from kschedlib import __version__

        sys.stdout.write(f"kschedlib {__version__} (kube-scheduler v1.35)\n")
        return 0
    if args[0] == "simulate":
        from kschedlib.cli.simulate import main as simulate_main

        try:
            # Run as a program (not called with arguments): the collector may skip what
            # lives until the process ends.
            return simulate_main(args[1:], freeze_gc=argv is None)
        except BrokenPipeError:
            # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    if args[0] in ("capacity", "drain", "whatif"):
        from kschedlib.cli.whatif import capacity_main, drain_main, whatif_main

        run = {"capacity": capacity_main, "drain": drain_main, "whatif": whatif_main}[args[0]]
        try:
            return run(args[1:])
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    if args[0] == "sweep":
        from kschedlib.cli.sweep import main as sweep_main

        return sweep_main(args[1:])
    sys.stderr.write(f"kschedlib: unknown command {args[0]!r}\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
