"""Where the shared conformance corpus and benchmarks live: ``../shared`` beside the repo,
or ``$KSCHEDLIB_SHARED``."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KSCHEDLIB_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "conformance"
BENCH = SHARED / "bench"
