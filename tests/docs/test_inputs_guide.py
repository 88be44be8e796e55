"""Every ```python block of docs/guides/inputs.md runs, each in a fresh namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "inputs.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(), flags=re.S | re.M)


def test_guide_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_guide_example_runs(index: int) -> None:
    code = compile(BLOCKS[index], f"{GUIDE.name} example {index + 1}", "exec")
    exec(code, {"__name__": f"guide_example_{index + 1}"})
