"""The sweeps guide's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "sweeps.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_guide_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GUIDE.parents[2])
    exec(compile(BLOCKS[index], f"{GUIDE.name}[{index}]", "exec"), {"__name__": "docs_example"})


def test_guide_has_examples() -> None:
    assert len(BLOCKS) >= 3
