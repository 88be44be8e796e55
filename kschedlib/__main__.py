"""``kschedlib`` / ``python -m kschedlib``: command-line entry point."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

USAGE = """usage: kschedlib COMMAND [ARGS]

commands:
  simulate PATH...  schedule kubectl dumps, manifests (files, folders, - for stdin) or a
                    scenario (JSON) and report placements
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] == "simulate":
        from kschedlib.cli.simulate import main as simulate_main

        try:
            return simulate_main(args[1:])
        except BrokenPipeError:
            # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    sys.stderr.write(f"kschedlib: unknown command {args[0]!r}\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
