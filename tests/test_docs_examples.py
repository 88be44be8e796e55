"""Every ```python block of README.md and docs/**/*.md runs.

A block is skipped only when it is marked: ``<!-- norun -->`` on the line before its fence,
or extra words after ``python`` on the fence line (``` ```python title="x" ```). Such blocks
are kept rare; this test counts them.

Printed output shown in the docs is checked too: a ```text block marked ``<!-- output -->``
on the line before its fence must be what the closest ```python block above it prints, and
one marked ``<!-- output of: kschedlib ARGS -->`` what that command prints (run from the
repository root), so the figures in the docs come from the commands they show.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import kschedlib

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python(.*)$")
OUTPUT = re.compile(r"^<!-- output(?: of: (.+?))? -->$")


def _outputs() -> tuple[dict[tuple[str, int], str], list[tuple[str, int, str, str]]]:
    """Expected printed output: by the (file, line) of the python block that prints it, and
    the ``output of:`` commands as (file, line, command, text)."""
    by_block: dict[tuple[str, int], str] = {}
    commands: list[tuple[str, int, str, str]] = []
    for path in FILES:
        rel = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").splitlines()
        last_python = 0
        for i, line in enumerate(lines):
            if FENCE.match(line):
                last_python = i + 1
            m = OUTPUT.match(line.strip())
            if m is None or i + 1 >= len(lines) or not lines[i + 1].startswith("```text"):
                continue
            j = i + 2
            body = []
            while j < len(lines) and not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            text = "\n".join(body) + "\n"
            if m.group(1):
                commands.append((rel, i + 1, m.group(1), text))
            else:
                assert last_python, f"{rel}:{i + 1}: <!-- output --> with no python block above"
                by_block[(rel, last_python)] = text
    return by_block, commands


def _same(got: str, want: str) -> bool:
    def norm(t: str) -> list[str]:
        return [line.rstrip() for line in t.strip("\n").splitlines()]

    return norm(got) == norm(want)


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
EXPECTED, COMMANDS = _outputs()


@pytest.mark.parametrize(("path", "line", "code"), [b[:3] for b in RUNNABLE],
                         ids=[f"{b[0]}:{b[1]}" for b in RUNNABLE])
def test_docs_python_block_runs(path: str, line: int, code: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"{path}:{line}", "exec"), {"__name__": f"docs_{line}"})
    want = EXPECTED.get((path, line))
    if want is not None:
        assert _same(printed.getvalue(), want), (
            f"{path}:{line} printed:\n{printed.getvalue()}\nthe docs show:\n{want}"
        )


def test_shown_outputs_belong_to_runnable_blocks() -> None:
    runnable = {(b[0], b[1]) for b in RUNNABLE}
    assert set(EXPECTED) <= runnable
    assert len(EXPECTED) + len(COMMANDS) >= 3


@pytest.mark.parametrize(("path", "line", "command", "want"), COMMANDS,
                         ids=[f"{c[0]}:{c[1]}" for c in COMMANDS])
def test_docs_command_output(path: str, line: int, command: str, want: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "kschedlib", f"{path}:{line}: only kschedlib commands are run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "kschedlib", *argv[1:]], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert _same(done.stdout, want), (
        f"{path}:{line} `{command}` printed:\n{done.stdout}{done.stderr}\nthe docs show:\n{want}"
    )


def test_non_runnable_blocks_are_rare() -> None:
    assert len(RUNNABLE) >= 10
    skipped = [f"{b[0]}:{b[1]}" for b in BLOCKS if not b[3]]
    assert len(skipped) <= max(3, len(BLOCKS) // 4), skipped


def test_reference_lists_every_public_name() -> None:
    table = (ROOT / "docs" / "reference" / "index.md").read_text(encoding="utf-8")
    missing = [n for n in kschedlib.__all__ if f"| `{n}` |" not in table]
    assert missing == []
