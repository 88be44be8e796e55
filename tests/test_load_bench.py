"""The load benchmark writes Lists that load back completely (figures are printed, never
asserted)."""

from __future__ import annotations

from pathlib import Path

from kschedlib.api import load_objects
from kschedlib.bench.load_bench import main, make_list

SOURCE = Path(__file__).resolve().parent / "data" / "realdata" / "describecluster__pods.json"


def test_make_and_measure(tmp_path: Path, capsys: object) -> None:
    for name in ("pods.json", "pods.yaml"):
        out = tmp_path / name
        n = make_list(0.3, str(out), str(SOURCE))
        objs = load_objects(out)
        assert len(objs) == n > 10 and len({o.metadata.name for o in objs}) == n
    assert main([str(tmp_path / "pods.json")]) == 0
    line = capsys.readouterr().out  # type: ignore[attr-defined]
    assert line.startswith("pods.json: ") and "s CPU" in line and "peak RSS" in line
