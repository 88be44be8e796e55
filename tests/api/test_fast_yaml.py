"""The fast YAML path (libyaml events straight to Python values) gives exactly what the full
C loader gives, and hands anything unusual to it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.api.loader import (
    _CParser,
    _Fallback,
    _KubeYamlLoader,
    _yaml_documents,
    _yaml_documents_fast,
)

pytestmark = pytest.mark.skipif(_CParser is None, reason="PyYAML built without libyaml")
DATA = Path(__file__).resolve().parent.parent / "data"


def _full(text: str) -> list[object]:
    return [d for d in yaml.load_all(text, Loader=_KubeYamlLoader) if d is not None]


TRICKY = """
a: yes
b: No
c: on
d: OFF
e: 0755
f: 0x1F
g: 1_000
h: -12
i: 3.5e3
j: .inf
k: ~
l: null
m:
n: 2025-09-01T06:00:00Z
o: 2025-09-01
p: '0755'
q: "tab\\there"
r: |
  line one
  line two
s: >-
  folded
  text
t: {x: 1, y: [a, "b", 'c']}
u: []
v: {}
1: int key
true: bool key
w: 1:30
x: 12.5Gi
z: "-"
dup: 1
dup: 2
---
- plain
- 10
- - nested
  - [deep, {k: v}]
---
---
# only a comment
"""


def test_tricky_scalars_match_the_full_loader() -> None:
    assert _yaml_documents_fast(TRICKY) == _full(TRICKY)
    doc = _yaml_documents_fast(TRICKY)[0]
    assert doc["n"] == "2025-09-01T06:00:00Z" and doc["e"] == 493 and doc["m"] is None


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {k: v}\nb: *x\n",
        "base: &b {k: v}\nd:\n  <<: *b\n",
        "a: !!str 10\n",
        "? [complex, key]\n: v\n",
    ],
)
def test_unusual_yaml_goes_to_the_full_loader(text: str) -> None:
    with pytest.raises(_Fallback):
        _yaml_documents_fast(text)
    try:
        expected: object = _full(text)
    except yaml.YAMLError as exc:  # e.g. an unhashable key: the full loader's own error
        expected = type(exc)
    try:
        got: object = _yaml_documents(text)
    except yaml.YAMLError as exc:
        got = type(exc)
    assert got == expected


def test_real_files_match() -> None:
    files = [*sorted((DATA / "realdata").glob("*.yaml")), DATA / "kubectl-dump" / "cluster.yaml"]
    assert len(files) >= 10
    for f in files:
        text = f.read_text()
        assert _yaml_documents_fast(text) == _full(text), f.name


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=12),
    st.floats(allow_nan=False), st.sampled_from(["yes", "0755", "1e3", "~", "2025-01-01", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(values, st.booleans())
def test_random_documents_match(value: object, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    assert _yaml_documents_fast(text) == _full(text)
