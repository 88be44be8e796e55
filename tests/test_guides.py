"""The ```python examples of the feature-gate and gang-scheduling guides run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDES = Path(__file__).resolve().parents[1] / "docs" / "guides"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize("name", ["feature-gates.md", "gang-scheduling.md"])
def test_guide_examples_run(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = (GUIDES / name).read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert blocks, name
    for i, code in enumerate(blocks):
        # Each example is self-contained: it runs in a namespace of its own.
        namespace: dict[str, object] = {"__name__": f"guide_{name}_{i}"}
        exec(compile(code, f"{name}[{i}]", "exec"), namespace)  # noqa: S102


def test_feature_gate_guide_lists_every_gate() -> None:
    from kschedlib.features import V1_35_SCHEDULER_FEATURES

    text = (GUIDES / "feature-gates.md").read_text(encoding="utf-8")
    for name in V1_35_SCHEDULER_FEATURES:
        assert f"| `{name}` |" in text, name
