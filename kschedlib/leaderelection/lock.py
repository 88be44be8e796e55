"""The ResourceLock protocol hosts implement, and an in-process lock for shared-memory electors."""

from __future__ import annotations

import threading
from typing import Protocol

import attrs

from kschedlib.leaderelection.errors import LockConflictError, LockNotFoundError
from kschedlib.leaderelection.record import LeaderElectionRecord

__all__ = ["InMemoryLeaseStore", "InMemoryLock", "ResourceLock"]


class ResourceLock(Protocol):
    """Storage for one LeaderElectionRecord with optimistic concurrency.

    Versions are opaque to the elector, compared only with ``==``. Any exception other
    than the lock errors is treated like a failed attempt, as client-go does.
    """

    @property
    def identity(self) -> str:
        """This participant's unique identity across the election."""
        ...

    def describe(self) -> str:
        """Human-readable name of the lock, for logs."""
        ...

    def get(self) -> tuple[LeaderElectionRecord, object]:
        """Return the stored record and its version; raise LockNotFoundError if absent."""
        ...

    def create(self, record: LeaderElectionRecord) -> object:
        """Store the first record and return its version; LockConflictError if one exists."""
        ...

    def update(self, record: LeaderElectionRecord, version: object) -> object:
        """Replace the record if still at ``version`` and return the new version.

        Raises LockConflictError on a stale version, LockNotFoundError if absent.
        """
        ...


@attrs.define(slots=True, eq=False)
class InMemoryLeaseStore:
    """One thread-safe lease slot that several InMemoryLocks (electors) share."""

    name: str = "lease"
    _mutex: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    _record: LeaderElectionRecord | None = attrs.field(init=False, default=None)
    _version: int = attrs.field(init=False, default=0)

    def get(self) -> tuple[LeaderElectionRecord, int]:
        with self._mutex:
            if self._record is None:
                raise LockNotFoundError(f"lease {self.name!r} not found")
            return self._record, self._version

    def create(self, record: LeaderElectionRecord) -> int:
        with self._mutex:
            if self._record is not None:
                raise LockConflictError(f"lease {self.name!r} already exists")
            self._record = record
            self._version += 1
            return self._version

    def update(self, record: LeaderElectionRecord, version: object) -> int:
        with self._mutex:
            if self._record is None:
                raise LockNotFoundError(f"lease {self.name!r} not found")
            if version != self._version:
                raise LockConflictError(
                    f"lease {self.name!r} is at version {self._version}, not {version!r}"
                )
            self._record = record
            self._version += 1
            return self._version


@attrs.define(slots=True, eq=False)
class InMemoryLock:
    """A participant's handle on an InMemoryLeaseStore."""

    store: InMemoryLeaseStore
    identity: str

    def describe(self) -> str:
        return f"memory/{self.store.name}"

    def get(self) -> tuple[LeaderElectionRecord, object]:
        return self.store.get()

    def create(self, record: LeaderElectionRecord) -> object:
        return self.store.create(record)

    def update(self, record: LeaderElectionRecord, version: object) -> object:
        return self.store.update(record, version)
