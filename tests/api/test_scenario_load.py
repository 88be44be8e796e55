"""Scenario.load decodes object lists element by element: the same Scenario as decoding the
whole file, the same errors, and shared copies of repeated strings and timestamps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib.api.scenario import Scenario, _stream_parts
from kschedlib.errors import InvalidObjectError

CORPUS = Path(__file__).resolve().parents[1] / "conformance"


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"zone": "z1"},
                         "creationTimestamp": "2025-09-01T06:00:00Z"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str = "", phase: str = "Running") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default",
                         "creationTimestamp": "2025-09-01T06:00:00Z"},
            "spec": spec, "status": {"phase": phase}}


def _scenario() -> dict[str, Any]:
    return {
        "name": "s", "description": "d", "config": {"percentageOfNodesToScore": 0},
        "nodes": [_node("n1"), _node("n2")],
        "pods": [_pod("a", "n1"), _pod("done", "n1", "Succeeded")],
        "pending": [_pod("p", phase="Pending")],
        "featureGates": {"DRAPrioritizedList": True},
        "pdbs": [],
    }


def _old(text: str) -> Scenario | str:
    try:
        return Scenario.from_dict(json.loads(text))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _new(path: Path) -> Scenario | str:
    try:
        return Scenario.load(path)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("indent", [None, 2])
def test_load_equals_whole_file_decoding(tmp_path: Path, indent: int | None) -> None:
    text = json.dumps(_scenario(), indent=indent)
    f = tmp_path / "s.json"
    f.write_text(text)
    assert _stream_parts(text) is not None  # the streaming path is the one taken
    got = Scenario.load(f)
    assert got == Scenario.from_dict(json.loads(text))
    assert [p.metadata.name for p in got.pods] == ["a"]  # terminal pods dropped as before
    assert got.feature_gates == {"DRAPrioritizedList": True}


def test_load_equals_whole_file_decoding_on_corpus() -> None:
    files = sorted((CORPUS / "corpus").glob("*.json"))[:40]
    files += sorted((CORPUS / "corpus-dra-alpha").glob("*.json"))
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        if "nodes" not in json.loads(text):
            continue
        assert _stream_parts(text) is not None, f
        assert _new(f) == _old(text), f


@pytest.mark.parametrize("text", [
    "",                                               # empty file
    "[]",                                             # not an object
    '{"name": "s", "nodes": [{"metadata": {"name": "n"}},]}',   # trailing comma
    '{"name": "s", "nodes": [1, 2]}',                 # elements that are not objects
    '{"name": "s", "nodes": {"a": 1}}',               # a list that is not a list
    '{"name": "s", "nodes": [{"metadata": {"name": "n"}}]',     # unterminated
    '{"name": "s"} x',                                # trailing garbage
    '{"name": 3}',                                    # a bad member
    '{"name": "s", "pods": [{"metadata": {"name": "a"}, "spec": {"priority": "x"}}]}',
    '{"name": "s", "nodes": [{"metadata": {"name": "n"}}], "nodes": null}',  # last wins
    '{"name": "s", "nodes": null, "nodes": [{"metadata": {"name": "n"}}]}',
    '\ufeff{"name": "s"}',                            # a BOM
    ' { } ',
])
def test_load_reports_as_whole_file_decoding(tmp_path: Path, text: str) -> None:
    f = tmp_path / "s.json"
    f.write_text(text, encoding="utf-8")
    assert _new(f) == _old(text)


def test_load_invalid_object_names_the_field(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"name": "s", "nodes": [
        _node("n1"), {"metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "x"}}}]}))
    with pytest.raises(InvalidObjectError, match="allocatable"):
        Scenario.load(f)


def test_decoded_strings_and_timestamps_are_shared(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(_scenario()))
    sc = Scenario.load(f)
    n1, n2 = sc.nodes
    # Equal values decoded from different places of the file are one object each.
    assert n1.metadata.labels["zone"] is n2.metadata.labels["zone"]
    assert next(iter(n1.metadata.labels)) is next(iter(n2.metadata.labels))
    assert n1.metadata.creation_timestamp is n2.metadata.creation_timestamp
    assert sc.pods[0].metadata.namespace is sc.pending[0].metadata.namespace
    assert sc.pods[0].metadata.creation_timestamp == n1.metadata.creation_timestamp
