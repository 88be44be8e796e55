"""A ResourceLock backed by a JSON file, for electors in several processes on one machine (POSIX)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs

from kschedlib.leaderelection.errors import LockConflictError, LockError, LockNotFoundError
from kschedlib.leaderelection.record import LeaderElectionRecord

__all__ = ["FileLock"]


@attrs.define(slots=True, eq=False)
class FileLock:
    """Record stored as ``{"version": n, "record": {...}}`` in ``path``.

    Every operation holds an exclusive flock on ``<path>.lock``; updates are written to a
    temporary file and renamed into place, so readers never see a torn record.
    """

    path: Path = attrs.field(converter=Path)
    identity: str

    @property
    def guard_path(self) -> Path:
        """The side file whose flock serialises all operations on this lock."""
        return self.path.with_name(self.path.name + ".lock")

    def describe(self) -> str:
        return f"file:{self.path}"

    def get(self) -> tuple[LeaderElectionRecord, object]:
        with self._guard():
            return self._read()

    def create(self, record: LeaderElectionRecord) -> object:
        payload = _encode(1, record)
        with self._guard():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if self.path.stat().st_size != 0:
                    raise LockConflictError(f"{self.describe()} already exists") from None
                # An empty file is the remnant of a creator that died before writing.
                self._replace(payload)
                return 1
            try:
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
        return 1

    def update(self, record: LeaderElectionRecord, version: object) -> object:
        with self._guard():
            _, current = self._read()
            if version != current:
                raise LockConflictError(
                    f"{self.describe()} is at version {current}, not {version!r}"
                )
            self._replace(_encode(current + 1, record))
            return current + 1

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        import fcntl  # POSIX only; imported here so the package still imports elsewhere

        fd = os.open(self.guard_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    def _read(self) -> tuple[LeaderElectionRecord, int]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raise LockNotFoundError(f"{self.describe()} not found") from None
        if not raw:
            raise LockNotFoundError(f"{self.describe()} is empty")
        try:
            data = json.loads(raw)
            version = data["version"]
            record = LeaderElectionRecord.from_dict(data["record"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LockError(f"{self.describe()} is corrupt: {exc}") from None
        if isinstance(version, bool) or not isinstance(version, int):
            raise LockError(f"{self.describe()} is corrupt: version {version!r}")
        return record, version

    def _replace(self, payload: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _encode(version: int, record: LeaderElectionRecord) -> bytes:
    return json.dumps({"version": version, "record": record.to_dict()}).encode()
