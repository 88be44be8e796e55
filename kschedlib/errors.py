"""Typed errors raised by kschedlib; every one names the object and field at fault."""

from __future__ import annotations

from collections.abc import Iterable

import attrs


class KSchedError(Exception):
    """Base class of every error kschedlib raises on purpose."""


class InvalidObjectError(KSchedError, ValueError):
    """A Kubernetes object (or one of its fields) is malformed.

    The message reads ``<kind> <namespace/name>: <field.path>: <problem>``.
    """

    def __init__(self, obj: str, field: str, problem: str) -> None:
        self.obj = obj
        self.field = field
        self.problem = problem
        where = f"{obj}: {field}: " if field else f"{obj}: "
        super().__init__(where + problem)


class QuantityError(KSchedError, ValueError):
    """A string is not a valid Kubernetes resource quantity."""


@attrs.define(slots=True, frozen=True)
class FieldIssue:
    """One problem of a configuration: the field path (``profiles[0].schedulerName``; empty
    when the problem is not about one field) and the message (``Required value``)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(KSchedError, ValueError):
    """A KubeSchedulerConfiguration is invalid; the message names the field path.

    ``errors`` lists every problem found as data (``FieldIssue(path, message)``); ``str()``
    joins them. An error raised with only a message has that message as its one issue.
    """

    def __init__(self, message: str = "", errors: Iterable[FieldIssue] = ()) -> None:
        self.errors: tuple[FieldIssue, ...] = tuple(errors) or (FieldIssue("", message),)
        super().__init__(message or "; ".join(str(e) for e in self.errors))


class CacheError(KSchedError):
    """An invalid scheduler-cache transition; the cache is left unchanged."""


class QueueError(KSchedError):
    """An invalid scheduling-queue operation; the queue is left unchanged."""


class EvictionConfigError(ConfigError):
    """An eviction setting of a KubeletConfiguration is invalid; the message names the field."""


class EvictionError(KSchedError):
    """An eviction request names an unknown pod or node, or malformed node statistics."""


class QueueingHintError(KSchedError, TypeError):
    """A queueing hint was given an object of the wrong type. kube-scheduler's hints return
    ``(Queue, err)`` then; the queue counts this error as Queue (the pod is requeued)."""
