#!/usr/bin/env python3
"""Refresh the in-repo copy of the public conformance corpus from ``../shared/conformance``.

Usage: ``python scripts/refresh_corpus.py [SOURCE]`` (default ``../shared/conformance`` beside
the checkout, or ``$KSCHEDLIB_SHARED/conformance``). Copies new and changed files into
``tests/conformance/corpus/`` and removes files the source no longer has, then prints what
changed. ``--check`` only reports and exits 1 when the copy is stale (what the test does).
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
DEFAULT_SOURCE = Path(os.environ.get("KSCHEDLIB_SHARED", REPO.parent / "shared")) / "conformance"


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
    ap.add_argument("source", nargs="?", default=str(DEFAULT_SOURCE))
    ap.add_argument("--check", action="store_true", help="report only; exit 1 if stale")
    args = ap.parse_args(argv)
    source = Path(args.source)
    if not source.is_dir():
        print(f"refresh_corpus: {source}: directory not found", file=sys.stderr)
        return 2
    new, changed, removed = corpus_diff(source, DEST)
    for label, names in (("new", new), ("changed", changed), ("removed", removed)):
        for n in names:
            print(f"{label}: {n}")
    if args.check:
        return 1 if new or changed or removed else 0
    DEST.mkdir(parents=True, exist_ok=True)
    for n in new + changed:
        shutil.copyfile(source / n, DEST / n)
    for n in removed:
        (DEST / n).unlink()
    print(f"refresh_corpus: {len(new)} new, {len(changed)} changed, {len(removed)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
