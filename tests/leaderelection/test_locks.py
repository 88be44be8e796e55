"""InMemoryLock and FileLock: create/get/update with optimistic concurrency."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kschedlib.leaderelection import (
    FileLock,
    InMemoryLeaseStore,
    InMemoryLock,
    LeaderElectionRecord,
    LockConflictError,
    LockError,
    LockNotFoundError,
    ResourceLock,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FileLock needs fcntl")

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
REC_A = LeaderElectionRecord("a", 15, T0, T0, 0)
REC_B = LeaderElectionRecord("b", 15, T0, T0, 1)

LockFactory = Callable[[str], ResourceLock]


@pytest.fixture(params=["memory", pytest.param("file", marks=posix_only)])
def make_lock(request: pytest.FixtureRequest, tmp_path: Path) -> LockFactory:
    if request.param == "memory":
        store = InMemoryLeaseStore(name="sched")
        return lambda identity: InMemoryLock(store=store, identity=identity)
    return lambda identity: FileLock(tmp_path / "sched.json", identity)


def test_get_absent_raises_not_found(make_lock: LockFactory) -> None:
    with pytest.raises(LockNotFoundError):
        make_lock("a").get()
    with pytest.raises(LockNotFoundError):
        make_lock("a").update(REC_A, 1)


def test_create_then_get(make_lock: LockFactory) -> None:
    a, b = make_lock("a"), make_lock("b")
    version = a.create(REC_A)
    assert b.get() == (REC_A, version)
    assert a.identity == "a" and b.identity == "b"
    assert a.describe()


def test_second_create_conflicts(make_lock: LockFactory) -> None:
    make_lock("a").create(REC_A)
    with pytest.raises(LockConflictError):
        make_lock("b").create(REC_B)
    assert make_lock("b").get()[0] == REC_A


def test_update_with_stale_version_conflicts(make_lock: LockFactory) -> None:
    a, b = make_lock("a"), make_lock("b")
    v1 = a.create(REC_A)
    v2 = b.update(REC_B, v1)
    assert v2 != v1
    with pytest.raises(LockConflictError):
        a.update(REC_A, v1)
    assert a.get() == (REC_B, v2)
    v3 = a.update(REC_A, v2)
    assert a.get() == (REC_A, v3)


def test_lock_errors_are_kschedlib_errors() -> None:
    from kschedlib.errors import KSchedError

    assert issubclass(LockConflictError, LockError)
    assert issubclass(LockNotFoundError, LockError)
    assert issubclass(LockError, KSchedError)


@posix_only
def test_file_layout_is_json_with_counter(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "l.json", "a")
    lock.create(REC_A)
    lock.update(REC_B, 1)
    data = json.loads((tmp_path / "l.json").read_text())
    assert data == {"version": 2, "record": REC_B.to_dict()}
    assert lock.guard_path.exists()


@posix_only
def test_file_lock_treats_empty_file_as_absent(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(b"")  # a creator died between O_EXCL and write
    lock = FileLock(path, "a")
    with pytest.raises(LockNotFoundError):
        lock.get()
    assert lock.create(REC_A) == 1
    assert lock.get() == (REC_A, 1)


@posix_only
@pytest.mark.parametrize("content", [b"{not json", b'{"version": "x", "record": {}}', b"[]"])
def test_file_lock_reports_corruption(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(content)
    with pytest.raises(LockError) as info:
        FileLock(path, "a").get()
    assert not isinstance(info.value, (LockNotFoundError, LockConflictError))


@pytest.mark.parametrize("kind", ["memory", pytest.param("file", marks=posix_only)])
def test_concurrent_updates_from_one_version_have_one_winner(kind: str, tmp_path: Path) -> None:
    store = InMemoryLeaseStore()

    def new_lock(identity: str) -> ResourceLock:
        if kind == "memory":
            return InMemoryLock(store=store, identity=identity)
        return FileLock(tmp_path / "race.json", identity)

    base = new_lock("seed").create(REC_A)
    n = 8
    barrier = threading.Barrier(n)
    results: list[str] = []
    guard = threading.Lock()

    def contender(i: int) -> None:
        lock = new_lock(f"c{i}")
        barrier.wait(timeout=30)
        try:
            lock.update(LeaderElectionRecord(f"c{i}", 15, T0, T0, 1), base)
            outcome = f"won:c{i}"
        except LockConflictError:
            outcome = "conflict"
        with guard:
            results.append(outcome)

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    winners = [r for r in results if r.startswith("won:")]
    assert len(results) == n
    assert len(winners) == 1
    record, _ = new_lock("reader").get()
    assert f"won:{record.holder_identity}" == winners[0]


@posix_only
def test_concurrent_creates_have_one_winner(tmp_path: Path) -> None:
    n = 8
    barrier = threading.Barrier(n)
    wins: list[str] = []

    def contender(i: int) -> None:
        lock = FileLock(tmp_path / "c.json", f"c{i}")
        barrier.wait(timeout=30)
        try:
            lock.create(LeaderElectionRecord(f"c{i}", 15, T0, T0, 0))
        except LockConflictError:
            return
        wins.append(f"c{i}")

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(wins) == 1
    assert FileLock(tmp_path / "c.json", "r").get()[0].holder_identity == wins[0]
