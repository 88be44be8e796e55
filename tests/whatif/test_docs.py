"""The what-if guide's and the README section's Python examples run as written."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## What-if simulation")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


GUIDE = _blocks((ROOT / "docs/guides/whatif.md").read_text(encoding="utf-8"))
README = _blocks(_readme_section())


def test_there_are_examples() -> None:
    assert len(GUIDE) >= 5 and len(README) >= 1


@pytest.mark.parametrize("code", GUIDE + README, ids=[f"guide{i}" for i in range(len(GUIDE))] + [
    f"readme{i}" for i in range(len(README))])
def test_example_runs(code: str) -> None:
    exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})
