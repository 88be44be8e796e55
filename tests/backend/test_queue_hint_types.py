"""Every queueing hint given an object of the wrong type behaves the same: a typed
QueueingHintError (Go's ``(Queue, err)``), which the queue counts as Queue."""

from __future__ import annotations

import pytest

from kschedlib.backend.queue.hints import build_queueing_hints
from kschedlib.backend.queue.metrics import QUEUEING_HINT_ERROR
from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from kschedlib.errors import QueueingHintError
from kschedlib.framework.events import EventResource, QueueingHint
from tests.builders import new_scheduler, node, pod

CHECKED = {
    EventResource.Pod, EventResource.AssignedPod, EventResource.UnscheduledPod,
    EventResource.Node, EventResource.PersistentVolume, EventResource.PersistentVolumeClaim,
    EventResource.StorageClass, EventResource.CSINode,
}


def _registrations() -> list[tuple[str, object, object]]:
    s = new_scheduler()
    fwk = next(iter(s.frameworks.values()))
    return [
        (f"{plugin}:{ev.label}", ev, fn)
        for ev, plugin, fn in build_queueing_hints(fwk.plugins.values())
        if fn is not None and ev.resource in CHECKED
    ]


REGS = _registrations()


def test_there_are_hints_to_check() -> None:
    assert len(REGS) >= 10


@pytest.mark.parametrize("reg", REGS, ids=[r[0] for r in REGS])
@pytest.mark.parametrize("wrong", ["str", "other-kind"])
def test_wrong_typed_object_is_a_queueing_hint_error(reg: tuple[str, object, object],
                                                     wrong: str) -> None:
    _, ev, fn = reg
    bad: object = "not an object"
    if wrong == "other-kind":  # a real object of another kind
        bad = pod("x") if ev.resource == EventResource.Node else node("x")  # type: ignore[attr-defined]
    for old, new in ((None, bad), (bad, None), (bad, bad)):
        with pytest.raises(QueueingHintError):
            fn(pod("p"), old, new)  # type: ignore[operator]
        hint, label = PriorityQueue._call_hint(fn, pod("p"), old, new)  # type: ignore[arg-type]
        assert (hint, label) == (QueueingHint.Queue, QUEUEING_HINT_ERROR)
