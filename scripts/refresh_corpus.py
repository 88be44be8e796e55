#!/usr/bin/env python3
"""Refresh the in-repo copies of the public conformance corpora from ``../shared``.

Usage: ``python scripts/refresh_corpus.py [SOURCE]``. Without SOURCE, both corpora are
refreshed: ``../shared/conformance`` (or ``$KSCHEDLIB_SHARED/conformance``) into
``tests/conformance/corpus/`` and ``../shared/conformance-dra-alpha`` (the DRA alpha-gate
scenarios, recorded with their feature gates on) into ``tests/conformance/corpus-dra-alpha/``;
a SOURCE is copied into ``tests/conformance/corpus/``. Copies new and changed files, removes
files the source no longer has, then prints what changed. ``--check`` only reports and exits 1
when a copy is stale (what the test does). ``--traces`` does the same for the kube-scheduler
traces: ``../shared/traces`` into ``tests/data/traces/``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEST = REPO / "tests" / "conformance" / "corpus"
SHARED = Path(os.environ.get("KSCHEDLIB_SHARED", REPO.parent / "shared"))
DEFAULT_SOURCE = SHARED / "conformance"
TRACES_DEST = REPO / "tests" / "data" / "traces"
TRACES_SOURCE = SHARED / "traces"
# Further corpora: (shared source folder, in-repo copy), refreshed when no SOURCE is given.
EXTRA: list[tuple[Path, Path]] = [
    (SHARED / "conformance-dra-alpha", REPO / "tests" / "conformance" / "corpus-dra-alpha"),
]


def corpus_diff(source: Path, dest: Path) -> tuple[list[str], list[str], list[str]]:
    """(new, changed, removed) file names of ``source`` against ``dest``."""
    src = {p.name for p in source.iterdir() if p.is_file()}
    dst = {p.name for p in dest.iterdir() if p.is_file()} if dest.is_dir() else set()
    new = sorted(src - dst)
    removed = sorted(dst - src)
    changed = sorted(
        n for n in src & dst if not filecmp.cmp(source / n, dest / n, shallow=False)
    )
    return new, changed, removed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", default=None)
    ap.add_argument("--check", action="store_true", help="report only; exit 1 if stale")
    ap.add_argument("--traces", action="store_true", help="the traces instead of the corpus")
    args = ap.parse_args(argv)
    if args.traces:
        return refresh(Path(args.source or TRACES_SOURCE), TRACES_DEST, args.check)
    if args.source is not None:
        return refresh(Path(args.source), DEST, args.check)
    rc = refresh(DEFAULT_SOURCE, DEST, args.check)
    for source, dest in EXTRA:
        if source.is_dir():
            rc = max(rc, refresh(source, dest, args.check))
    return rc


def refresh(source: Path, dest: Path, check: bool) -> int:
    """Bring ``dest`` in line with ``source`` (or only report with ``check``)."""
    if not source.is_dir():
        print(f"refresh_corpus: {source}: directory not found", file=sys.stderr)
        return 2
    new, changed, removed = corpus_diff(source, dest)
    for label, names in (("new", new), ("changed", changed), ("removed", removed)):
        for n in names:
            print(f"{label}: {n}")
    if check:
        return 1 if new or changed or removed else 0
    dest.mkdir(parents=True, exist_ok=True)
    for n in new + changed:
        shutil.copyfile(source / n, dest / n)
    for n in removed:
        (dest / n).unlink()
    print(
        f"refresh_corpus: {dest.name}: {len(new)} new, {len(changed)} changed, "
        f"{len(removed)} removed"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
