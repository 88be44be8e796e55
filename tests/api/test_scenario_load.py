"""Scenario.load decodes objects as it parses them: the same Scenario, or the same error, as
decoding the whole JSON first."""

from __future__ import annotations

import glob
import json
import os

import pytest

from kschedlib.api.scenario import Scenario, _stream_decode
from kschedlib.errors import InvalidObjectError

CORPUS = os.path.join(os.path.dirname(__file__), "..", "conformance", "corpus")


def _plain(path: str) -> Scenario:
    with open(path, encoding="utf-8") as fh:
        return Scenario.from_dict(json.load(fh))


def _corpus_files() -> list[str]:
    files = sorted(
        f for f in glob.glob(os.path.join(CORPUS, "*.json")) if not f.endswith(".expected.json")
    )
    return files[::10]  # a spread of the corpus: every family, a few seconds at most


@pytest.mark.parametrize("path", _corpus_files(), ids=os.path.basename)
def test_load_equals_plain_decoding(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        assert _stream_decode(fh.read()) is not None  # decoded as parsed, not the plain way
    assert Scenario.load(path) == _plain(path)


POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
}
NODE = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "pods": "110"}},
}


def _texts() -> list[str]:
    doc = {"name": "s", "config": None, "nodes": [NODE], "pending": [POD], "pods": []}
    return [
        json.dumps(doc),
        json.dumps(doc, indent=2),
        json.dumps(doc, separators=(",", ":")),
        " \n" + json.dumps(doc) + "\n\t ",
        json.dumps({"name": "s"}),
        "{}",
        " { } ",
        json.dumps({"nodes": None, "pods": [], "pending": [POD, POD]}),
        # A duplicate key: the last value wins, as with json.loads.
        '{"pending": [], "pending": ' + json.dumps([POD]) + "}",
        json.dumps({"featureGates": {"A": True}, "nodes": [NODE], "description": "d"}),
    ]


@pytest.mark.parametrize("text", _texts())
def test_stream_equals_plain(tmp_path: object, text: str) -> None:
    path = os.path.join(str(tmp_path), "s.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    assert _stream_decode(text) is not None
    assert Scenario.load(path) == Scenario.from_dict(json.loads(text))


def _error(fn: object) -> tuple[type, str]:
    try:
        fn()  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc), str(exc)
    raise AssertionError("no error")


BAD = [
    "",
    "[]",
    '{"nodes": [' + json.dumps(NODE) + ",]}",
    '{"nodes": [' + json.dumps(NODE) + "}",
    '{"nodes" ' + "[]}",
    '{"nodes": []} trailing',
    '{"nodes": []',
    '{"pending": [{"kind": "Pod", "metadata": {"name": 3}}]}',
    # Two bad objects: the plain way reports the one it decodes first (nodes before pods).
    '{"pending": [{"metadata": 5}], "nodes": [{"metadata": 7}]}',
    '{"nodes": 5}',
    "\ufeff{}",
]


@pytest.mark.parametrize("text", BAD)
def test_errors_are_those_of_plain_decoding(tmp_path: object, text: str) -> None:
    path = os.path.join(str(tmp_path), "s.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    got = _error(lambda: Scenario.load(path))
    want = _error(lambda: Scenario.from_dict(json.loads(text)))
    assert got == want


def test_bad_object_is_a_typed_error(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "s.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"nodes": 5}')
    with pytest.raises(InvalidObjectError, match="nodes"):
        Scenario.load(path)
