"""The optional libfyaml reader (``kschedlib[fastyaml]``) gives exactly the documents and the
objects PyYAML gives, on the real dumps and on the plain scalars where YAML 1.1 readers differ,
and hands whatever it reads differently to PyYAML."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.api import load_objects, loader
from kschedlib.api.loader import (
    _libfyaml_differs,
    _yaml_documents,
    _yaml_documents_libfyaml,
    _yaml_documents_pyyaml,
)

DATA = Path(__file__).resolve().parent.parent / "data"
# CI installs the extra (dev depends on it): there a missing libfyaml fails instead of skipping.
pytestmark = pytest.mark.skipif(
    loader._libfyaml is None and not os.environ.get("CI"),
    reason="libfyaml not installed (pip install kschedlib[fastyaml])",
)


@functools.lru_cache(maxsize=2)
def _real_yaml_texts(big: bool) -> list[tuple[str, str]]:
    """The YAML dumps as they are, and the JSON dumps written as YAML (the two of over 1 MB
    only if ``big``)."""
    out = [(f.name, f.read_text()) for f in sorted((DATA / "realdata").glob("*.yaml"))]
    out.append(("cluster.yaml", (DATA / "kubectl-dump" / "cluster.yaml").read_text()))
    for f in sorted((DATA / "realdata").glob("*.json")):
        if big or f.stat().st_size < 1_000_000:
            text = yaml.dump(json.loads(f.read_text()), Dumper=yaml.CSafeDumper)
            out.append((f.name + ".yaml", text))
    return out


@pytest.mark.parametrize("shared", [False, True])
def test_real_dumps_give_the_same_documents(shared: bool) -> None:
    texts = _real_yaml_texts(big=shared)
    assert len(texts) >= 25
    for name, text in texts:
        got = _yaml_documents_libfyaml(text, shared)
        assert got is not None, name  # real dumps take the fast reader
        assert got == _yaml_documents_pyyaml(text), name


def test_real_dumps_give_the_same_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in _real_yaml_texts(big=False):
        path = tmp_path / name
        path.write_text(text)
        fast = load_objects(str(path))
        monkeypatch.setattr(loader, "_libfyaml", None)
        slow = load_objects(str(path))
        monkeypatch.undo()
        assert list(fast) == list(slow), name
        assert fast.ignored == slow.ignored and fast.ignored_objects == slow.ignored_objects


DIFFERING = [
    "a: 12:30\n", "12:30: x\n", "a: [1, 1:20:30]\n", "- 1:2.5\n", "a: -1:30\n", "a: 0:30.5\n",
    "a: =\n", "a: [=]\n", ": k\n", "a:\n  : k\n", "- : k\n",
    "a: 123456789012345678901234567890\n", "- 0x1234567890abcdef12\n",
    'a: "\\ud83d\\ude00"\n',
]
SAME = [
    "a: 00:01:00\n", "image: redis:6\n", "t: 2025-01-01T10:00:00+00:00\n", "a: b=\n",
    "id: docker://0b1234567890123456789012\n", "a: yes\nb: off\nc: 0755\nd: 1_000\ne: 1e3\n",
    "on: x\nn: N\ny: y\nf: .5\ng: 0b101\nh: 0x1F\ni: ~\nj:\nk: 2025-09-01\n",
]


@pytest.mark.parametrize("text", DIFFERING)
def test_differing_scalars_go_to_pyyaml(text: str) -> None:
    assert _libfyaml_differs(text)
    assert _yaml_documents_libfyaml(text) is None
    try:
        expected: object = _yaml_documents_pyyaml(text)
    except yaml.YAMLError as exc:
        expected = type(exc)
    try:
        got: object = _yaml_documents(text)
    except yaml.YAMLError as exc:
        got = type(exc)
    assert got == expected


@pytest.mark.parametrize("text", SAME)
def test_ordinary_scalars_stay_fast(text: str) -> None:
    assert not _libfyaml_differs(text)
    assert _yaml_documents_libfyaml(text) == _yaml_documents_pyyaml(text)


def test_bad_yaml_is_reported_by_pyyaml() -> None:
    for text in ("a: [1, 2\n", "a: b: c\n", "v:\n- \n  a: [\n"):
        with pytest.raises(yaml.YAMLError):
            _yaml_documents(text)


def test_shared_subtrees_never_reach_kept_objects(tmp_path: Path) -> None:
    # two equal ConfigMaps: libfyaml's deduplication reads their data as one dict
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
    path = tmp_path / "cms.yaml"
    path.write_text(yaml.safe_dump_all([{**cm, "metadata": {"name": n}} for n in "ab"]))
    objs = load_objects(str(path))
    first, second = objs.ignored_objects
    assert first["data"] == second["data"] and first["data"] is not second["data"]
    first["data"]["k"] = "changed"
    assert second["data"] == {"k": "v"}


def test_environment_selects_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KSCHEDLIB_YAML", "pyyaml")
    assert loader._load_libfyaml() is None
    monkeypatch.delenv("KSCHEDLIB_YAML")
    assert loader._load_libfyaml() is not None


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=12),
    st.floats(allow_nan=False),
    st.sampled_from(["yes", "0755", "1e3", "~", "2025-01-01", "", "12:30", "=", "on", "0x1F"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(values, st.booleans())
def test_random_documents_match(value: object, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    for plain in (text, text.replace("'", "")):  # unquoted too: what PyYAML had to quote
        try:
            expected: object = _yaml_documents_pyyaml(plain)
        except yaml.YAMLError:
            continue
        assert _yaml_documents(plain) == expected
