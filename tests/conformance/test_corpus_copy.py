"""The in-repo corpus copy is complete and, when ``../shared/conformance`` exists, not stale."""

from __future__ import annotations

import filecmp
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import (
    CORPUS,
    DRA_ALPHA_CORPUS,
    REPO,
    SHARED_CORPUS,
    SHARED_DRA_ALPHA_CORPUS,
)

SCRIPT = REPO / "scripts" / "refresh_corpus.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("refresh_corpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_copy_has_format_and_every_expectation() -> None:
    assert (CORPUS / "FORMAT.md").is_file()
    scenarios = [p for p in CORPUS.glob("*.json") if not p.name.endswith(".expected.json")]
    assert len(scenarios) >= 200
    for p in scenarios:
        assert p.with_name(p.stem + ".expected.json").is_file(), p.name
    assert any(p.name.startswith("dra-") for p in scenarios)


def test_dra_alpha_copy_has_every_expectation() -> None:
    scenarios = [
        p for p in DRA_ALPHA_CORPUS.glob("*.json") if not p.name.endswith(".expected.json")
    ]
    assert len(scenarios) >= 19
    for p in scenarios:
        assert p.with_name(p.stem + ".expected.json").is_file(), p.name
    # Kept apart from the main corpus: its scenarios set featureGates.
    assert not any(CORPUS.glob("dra-alpha-*"))


@pytest.mark.skipif(
    not SHARED_DRA_ALPHA_CORPUS.is_dir(), reason="no ../shared/conformance-dra-alpha"
)
def test_dra_alpha_copy_matches_shared() -> None:
    new, changed, removed = _script().corpus_diff(SHARED_DRA_ALPHA_CORPUS, DRA_ALPHA_CORPUS)
    assert not (new or changed or removed), (
        f"tests/conformance/corpus-dra-alpha is stale: new={new} changed={changed} "
        f"removed={removed}; run scripts/refresh_corpus.py"
    )


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="no ../shared/conformance to compare")
def test_copy_matches_shared_corpus() -> None:
    new, changed, removed = _script().corpus_diff(SHARED_CORPUS, CORPUS)
    assert not (new or changed or removed), (
        f"tests/conformance/corpus is stale: new={new} changed={changed} removed={removed}; "
        "run scripts/refresh_corpus.py"
    )


def test_refresh_detects_and_repairs_new_changed_removed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    dst = tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    (src / "a.json").write_text("1")
    (src / "b.json").write_text("2")
    (dst / "b.json").write_text("old")
    (dst / "c.json").write_text("gone")
    mod = _script()
    assert mod.corpus_diff(src, dst) == (["a.json"], ["b.json"], ["c.json"])
    # the script itself, pointed at a scratch destination
    mod.DEST = dst
    assert mod.main([str(src), "--check"]) == 1
    assert mod.main([str(src)]) == 0
    assert mod.corpus_diff(src, dst) == ([], [], [])
    assert filecmp.cmp(src / "b.json", dst / "b.json", shallow=False)


def test_script_runs_as_a_command(tmp_path: Path) -> None:
    src = tmp_path / "c"
    shutil.copytree(CORPUS, src)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(src), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
