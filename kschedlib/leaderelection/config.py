"""LeaderElectionConfig and its callbacks, validated as client-go's NewLeaderElector validates."""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs

from kschedlib.leaderelection.errors import LeaderElectionConfigError
from kschedlib.leaderelection.lock import ResourceLock

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "LeaderCallbacks",
    "LeaderElectionConfig",
]

JITTER_FACTOR = 1.2
"""Acquire retries wait retry_period * (1 + U[0, JITTER_FACTOR)); client-go's JitterFactor."""

DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0


@attrs.frozen(slots=True, kw_only=True)
class LeaderCallbacks:
    """Lifecycle hooks, called on the elector's thread (or task): they must return promptly.

    ``on_started_leading`` may return an awaitable under ``run_async``; it then runs as a
    task that is cancelled when leadership ends.
    """

    on_started_leading: Callable[[], object] | None = None
    on_stopped_leading: Callable[[], object] | None = None
    on_new_leader: Callable[[str], object] | None = None


@attrs.frozen(slots=True, kw_only=True)
class LeaderElectionConfig:
    """Tunables of one election; durations in seconds, defaults as kube-scheduler's flags.

    ``lease_duration`` is written to the record truncated to whole seconds, as in client-go.
    """

    lock: ResourceLock | None = None
    callbacks: LeaderCallbacks = attrs.field(factory=LeaderCallbacks)
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    release_on_cancel: bool = False
    name: str = ""

    def validate(self) -> None:
        """Raise LeaderElectionConfigError for the first problem found, in client-go's order."""
        for field in ("lease_duration", "renew_deadline", "retry_period"):
            value = getattr(self, field)
            if not math.isfinite(value):
                raise LeaderElectionConfigError(f"{field} must be a finite number, got {value!r}")
        if self.lease_duration <= self.renew_deadline:
            raise LeaderElectionConfigError(
                f"lease_duration ({self.lease_duration}) must be greater than "
                f"renew_deadline ({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise LeaderElectionConfigError(
                f"renew_deadline ({self.renew_deadline}) must be greater than "
                f"retry_period*JitterFactor ({self.retry_period}*{JITTER_FACTOR})"
            )
        if self.lease_duration <= 0:
            raise LeaderElectionConfigError("lease_duration must be greater than zero")
        if self.renew_deadline <= 0:
            raise LeaderElectionConfigError("renew_deadline must be greater than zero")
        if self.retry_period <= 0:
            raise LeaderElectionConfigError("retry_period must be greater than zero")
        if self.callbacks.on_started_leading is None:
            raise LeaderElectionConfigError("on_started_leading callback must not be None")
        if self.callbacks.on_stopped_leading is None:
            raise LeaderElectionConfigError("on_stopped_leading callback must not be None")
        if self.lock is None:
            raise LeaderElectionConfigError("lock must not be None")
        if not self.lock.identity:
            raise LeaderElectionConfigError("lock identity is empty")
