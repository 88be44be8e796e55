"""The codec shares what it decodes: equal strings are one interned object, equal timestamps
one datetime; the decoded objects are equal to what they were."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kschedlib.api import codec
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.scenario import Scenario
from kschedlib.errors import InvalidObjectError


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"zone": "z1"},
                         "creationTimestamp": "2025-09-01T06:00:00Z"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a",
                         "creationTimestamp": "2025-09-01T06:00:00Z"},
            "spec": {"containers": [{"name": "c", "image": "pause"}], "nodeName": "n1"}}


def test_equal_strings_and_timestamps_decoded_apart_are_shared(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"name": "s", "nodes": [_node("n1"), _node("n2")],
                             "pods": [_pod("a"), _pod("b")]}))
    sc = Scenario.load(f)
    n1, n2 = sc.nodes
    a, b = sc.pods
    assert n1.metadata.labels["zone"] is n2.metadata.labels["zone"]  # map values
    assert next(iter(n1.metadata.labels)) is next(iter(n2.metadata.labels))  # map keys
    assert a.metadata.namespace is b.metadata.namespace
    assert a.spec.node_name is n1.metadata.name
    assert a.metadata.creation_timestamp is n1.metadata.creation_timestamp
    assert a.metadata.creation_timestamp == dt.datetime(2025, 9, 1, 6, tzinfo=dt.timezone.utc)


def test_shared_timestamps_keep_their_values() -> None:
    texts = ["2025-09-01T06:00:00Z", "2025-09-01T06:00:00.5+02:00", "2025-09-01T06:00:00z",
             "2025-09-01T06:00:00Z"]
    got = [Pod.from_dict({"metadata": {"name": "p", "creationTimestamp": t}})
           .metadata.creation_timestamp for t in texts]
    assert got == [codec.parse_time(t) for t in texts]
    assert got[0] is got[3]
    assert got[1] == dt.datetime(2025, 9, 1, 4, 0, 0, 500000, tzinfo=dt.timezone.utc)
    with pytest.raises(InvalidObjectError, match="creationTimestamp"):
        Pod.from_dict({"metadata": {"name": "p", "creationTimestamp": "2025-13-01T00:00:00Z"}})


def test_timestamp_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_TIMES_MAX", 3)
    codec._TIMES.clear()
    for s in range(10):
        Node.from_dict({"metadata": {"name": "n",
                                     "creationTimestamp": f"2025-09-01T06:00:{s:02d}Z"}})
        assert len(codec._TIMES) <= 3
    codec._TIMES.clear()


def test_string_subclasses_and_bad_types() -> None:
    class Name(str):
        pass

    n = Node.from_dict({"metadata": {"name": Name("n1"), "labels": {Name("k"): Name("v")}}})
    assert n.metadata.name == "n1" and n.metadata.labels == {"k": "v"}
    with pytest.raises(InvalidObjectError, match="metadata.name"):
        Node.from_dict({"metadata": {"name": 3}})
    with pytest.raises(InvalidObjectError, match="labels"):
        Node.from_dict({"metadata": {"name": "n", "labels": {"k": 1}}})


def test_interning_never_keeps_a_string_alive() -> None:
    """Where interned strings are immortal (CPython 3.12) the codec shares through a bounded
    memo instead: decoding many distinct names must not keep them all."""
    if sys.implementation.name == "cpython":
        assert codec._interning_is_mortal() == (sys.version_info[:2] != (3, 12))
    assert (codec._intern is sys.intern) == codec._interning_is_mortal()


def test_bounded_memo_shares_and_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_STRS_MAX", 8)
    monkeypatch.setattr(codec, "_STRS", {})
    monkeypatch.setattr(codec, "_intern", codec._memo_str)
    a = Node.from_dict({"metadata": {"name": "".join(["n", "1"]), "labels": {"k": "v"}}})
    b = Node.from_dict({"metadata": {"name": "".join(["n", "1"]), "labels": {"k": "v"}}})
    assert a.metadata.name is b.metadata.name and a == b
    for i in range(100):
        Node.from_dict({"metadata": {"name": f"node-{i}"}})
        assert len(codec._STRS) <= 8
