"""Where the conformance corpus lives: the in-repo copy ``tests/conformance/corpus`` (so a
fresh clone runs the whole suite), refreshed from ``../shared/conformance`` (or
``$KSCHEDLIB_SHARED/conformance``) by ``scripts/refresh_corpus.py``."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KSCHEDLIB_SHARED", REPO.parent / "shared"))
CORPUS = REPO / "tests" / "conformance" / "corpus"
SHARED_CORPUS = SHARED / "conformance"
DRA_ALPHA_CORPUS = REPO / "tests" / "conformance" / "corpus-dra-alpha"
"""Scenarios recorded with DRA's alpha feature gates on (each names its ``featureGates``)."""
SHARED_DRA_ALPHA_CORPUS = SHARED / "conformance-dra-alpha"
BENCH = SHARED / "bench"
"""The shared benchmark workloads (large; no test needs them: tests generate their inputs)."""
