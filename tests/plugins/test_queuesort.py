"""PrioritySort.less: priority first, then queue timestamp."""

from __future__ import annotations

import attrs
import pytest

from kschedlib.api.pod import Pod
from kschedlib.plugins import queuesort


@attrs.define
class Queued:
    pod: Pod
    timestamp: float


def _q(priority: int | None, ts: float) -> Queued:
    spec: dict[str, object] = {"containers": [{"name": "c"}]}
    if priority is not None:
        spec["priority"] = priority
    return Queued(Pod.from_dict({"metadata": {"name": "p", "namespace": "d"}, "spec": spec}), ts)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (_q(100, 2.0), _q(50, 1.0), True),  # higher priority wins despite later timestamp
        (_q(50, 1.0), _q(100, 2.0), False),
        (_q(10, 1.0), _q(10, 2.0), True),  # same priority: earlier first
        (_q(10, 2.0), _q(10, 1.0), False),
        (_q(10, 1.0), _q(10, 1.0), False),  # strict ordering
        (_q(None, 1.0), _q(-1, 2.0), True),  # unset priority counts as 0
        (_q(None, 2.0), _q(0, 1.0), False),
    ],
)
def test_less(a: Queued, b: Queued, want: bool) -> None:
    assert queuesort.new(None, None).less(a, b) is want


def test_exports() -> None:
    pl = queuesort.new(None, None)
    assert pl.name == queuesort.NAME == "PrioritySort"
    assert len(queuesort.PLUGINS) == 1
    spec = queuesort.PLUGINS[0]
    assert (spec.name, spec.factory, spec.args_type) == ("PrioritySort", queuesort.new, None)
