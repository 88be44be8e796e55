"""util.As for queueing hints: old and new objects of the expected type, or QueueingHintError
(kube-scheduler's hint then returns Queue with the error)."""

from __future__ import annotations

from typing import Any, TypeVar

from kschedlib.errors import QueueingHintError

T = TypeVar("T")


def as_objects(cls: type[T], old_obj: Any, new_obj: Any) -> tuple[T | None, T | None]:
    """Both objects checked (None passes, as a nil object does in Go)."""
    for obj in (old_obj, new_obj):
        if obj is not None and not isinstance(obj, cls):
            raise QueueingHintError(
                f"unexpected object type {type(obj).__name__}: want {cls.__name__}"
            )
    return old_obj, new_obj
