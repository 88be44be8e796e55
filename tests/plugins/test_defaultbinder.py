"""DefaultBinder: binding through the host's binder."""

from __future__ import annotations

from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code
from kschedlib.plugins import defaultbinder


@attrs.define
class RecordingBinder:
    calls: list[tuple[str, str]] = attrs.Factory(list)
    fail: Exception | None = None

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.fail is not None:
            raise self.fail
        self.calls.append((pod.key, node_name))


@attrs.define
class Handle:
    binder: Any = None


POD = Pod.from_dict({"metadata": {"name": "p", "namespace": "ns"}})


def test_bind_delegates_to_binder() -> None:
    binder = RecordingBinder()
    pl = defaultbinder.new(None, Handle(binder))
    assert pl.name == "DefaultBinder"
    assert isinstance(binder, defaultbinder.Binder)
    assert pl.bind(CycleState(), POD, "node-1") is None
    assert binder.calls == [("ns/p", "node-1")]


def test_bind_failure_is_an_error_status() -> None:
    pl = defaultbinder.new(None, Handle(RecordingBinder(fail=RuntimeError("conflict"))))
    st = pl.bind(CycleState(), POD, "node-1")
    assert st is not None
    assert st.code == Code.Error
    assert st.reasons == ("conflict",)
    assert isinstance(st.err, RuntimeError)


def test_binder_read_at_bind_time() -> None:
    handle = Handle()
    pl = defaultbinder.new(None, handle)
    assert pl.bind(CycleState(), POD, "n") is None  # no binder: the host records the binding
    handle.binder = RecordingBinder()
    assert pl.bind(CycleState(), POD, "n") is None
    assert handle.binder.calls == [("ns/p", "n")]


def test_handle_without_binder_attribute() -> None:
    assert defaultbinder.new(None, object()).bind(CycleState(), POD, "n") is None
