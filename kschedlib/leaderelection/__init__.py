"""Leader election among scheduler replicas, reproducing client-go's semantics without I/O.

The host supplies a ResourceLock (or uses InMemoryLock / FileLock) and runs a LeaderElector.
"""

from __future__ import annotations

from kschedlib.leaderelection.clock import Clock, FakeClock, SystemClock
from kschedlib.leaderelection.config import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
)
from kschedlib.leaderelection.elector import AsyncStopEvent, LeaderElector, StopEvent
from kschedlib.leaderelection.errors import (
    LeaderElectionConfigError,
    LeaderElectionError,
    LockConflictError,
    LockError,
    LockNotFoundError,
)
from kschedlib.leaderelection.filelock import FileLock
from kschedlib.leaderelection.lock import InMemoryLeaseStore, InMemoryLock, ResourceLock
from kschedlib.leaderelection.record import LeaderElectionRecord, format_time, parse_time

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "AsyncStopEvent",
    "Clock",
    "FakeClock",
    "FileLock",
    "InMemoryLeaseStore",
    "InMemoryLock",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionConfigError",
    "LeaderElectionError",
    "LeaderElectionRecord",
    "LeaderElector",
    "LockConflictError",
    "LockError",
    "LockNotFoundError",
    "ResourceLock",
    "StopEvent",
    "SystemClock",
    "format_time",
    "parse_time",
]
