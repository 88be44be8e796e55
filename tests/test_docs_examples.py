"""Every ```python block of README.md and docs/**/*.md runs.

A block is skipped only when it is marked: ``<!-- norun -->`` on the line before its fence,
or extra words after ``python`` on the fence line (``` ```python title="x" ```). Such blocks
are kept rare; this test counts them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kschedlib

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python(.*)$")


def _blocks() -> list[tuple[str, int, str, bool]]:
    out = []
    for path in FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m is None:
                i += 1
                continue
            start = i
            prev = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            runnable = not m.group(1).strip() and prev != "<!-- norun -->"
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((str(path.relative_to(ROOT)), start + 1, "\n".join(body) + "\n", runnable))
            i += 1
    return out


BLOCKS = _blocks()
RUNNABLE = [b for b in BLOCKS if b[3]]


@pytest.mark.parametrize(("path", "line", "code"), [b[:3] for b in RUNNABLE],
                         ids=[f"{b[0]}:{b[1]}" for b in RUNNABLE])
def test_docs_python_block_runs(path: str, line: int, code: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"{path}:{line}", "exec"), {"__name__": f"docs_{line}"})


def test_non_runnable_blocks_are_rare() -> None:
    assert len(RUNNABLE) >= 10
    skipped = [f"{b[0]}:{b[1]}" for b in BLOCKS if not b[3]]
    assert len(skipped) <= max(3, len(BLOCKS) // 4), skipped


def test_reference_lists_every_public_name() -> None:
    table = (ROOT / "docs" / "reference" / "index.md").read_text(encoding="utf-8")
    missing = [n for n in kschedlib.__all__ if f"| `{n}` |" not in table]
    assert missing == []
