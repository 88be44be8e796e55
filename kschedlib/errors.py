"""Typed errors raised by kschedlib; every one names the object and field at fault."""

from __future__ import annotations


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


class ConfigError(KSchedError, ValueError):
    """A KubeSchedulerConfiguration is invalid; the message names the field path."""


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
