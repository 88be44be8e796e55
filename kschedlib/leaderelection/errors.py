"""Errors raised by leader election and by the resource locks it drives."""

from __future__ import annotations

from kschedlib.errors import ConfigError, KSchedError


class LeaderElectionConfigError(ConfigError):
    """A LeaderElectionConfig is rejected, as client-go's NewLeaderElector would reject it."""


class LeaderElectionError(KSchedError):
    """A leader elector is unhealthy (it holds a lease it failed to renew in time)."""


class LockError(KSchedError):
    """A resource lock operation failed; the elector treats it as a failed attempt."""


class LockNotFoundError(LockError):
    """The lock's record does not exist yet (get/update on an absent lock)."""


class LockConflictError(LockError):
    """An optimistic-concurrency write lost: the lock changed since the version read."""
