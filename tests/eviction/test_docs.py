"""The eviction guide's examples run, and the output it quotes is what they print."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "eviction.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(GUIDE.read_text())]


def test_guide_python_blocks_run_and_print_what_the_guide_quotes() -> None:
    blocks = _blocks()
    assert sum(1 for lang, _ in blocks if lang == "python") >= 3
    last_output = None
    for lang, body in blocks:
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, str(GUIDE), "exec"), {"__name__": "__guide__"})
            last_output = out.getvalue()
        elif lang == "text":
            assert last_output is not None
            for line in body.strip().splitlines():
                assert line in last_output, f"{line!r} not printed by the preceding example"


@pytest.mark.parametrize("script", ["eviction_walkthrough.py"])
def test_example_runs(script: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(ROOT / "examples" / script), run_name="__main__")
    assert "evict" in out.getvalue()
