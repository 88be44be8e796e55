"""The ```python examples of docs/guides/dra.md run as written, in order, in one namespace
(later examples use the cluster builder an earlier one defines)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "dra.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
_NS: dict[str, Any] = {"__name__": "__guide__"}
_RAN: list[int] = []


def test_guide_has_examples() -> None:
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(len(_RAN), index + 1):
        _RAN.append(i)
        exec(compile(BLOCKS[i], f"{GUIDE.name}[{i}]", "exec"), _NS)  # noqa: S102
