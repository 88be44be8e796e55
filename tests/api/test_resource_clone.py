"""Resource.clone fills every slot and shares no mutable state with the original."""

from __future__ import annotations

import attrs

from kschedlib.api.resource import Resource


def test_clone_copies_every_field_independently() -> None:
    r = Resource(milli_cpu=1, memory=2, ephemeral_storage=3, allowed_pod_number=4,
                 scalar_resources={"example.com/gpu": 5})
    c = r.clone()
    assert c == r and c is not r
    assert {f.name for f in attrs.fields(Resource)} == set(Resource.__slots__) - {"__weakref__"}
    for f in attrs.fields(Resource):
        assert getattr(c, f.name) == getattr(r, f.name)
    c.scalar_resources["example.com/gpu"] = 9
    assert r.scalar_resources["example.com/gpu"] == 5
    empty = Resource().clone()
    empty.scalar_resources["x/y"] = 1
    assert Resource().scalar_resources == {} and empty != Resource()
