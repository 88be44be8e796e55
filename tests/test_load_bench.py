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
    assert main([str(tmp_path / "pods.json"), str(tmp_path / "pods.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert lines[0].startswith("load pods.json [json]: ") and "s CPU" in lines[0]
    assert "peak RSS" in lines[0]
    assert lines[1].startswith("load pods.yaml [")
    # with libfyaml installed, a second line measures PyYAML
    assert lines[2:] in ([], ["load pods.yaml [pyyaml]: " + lines[2].split(": ", 1)[1]])
