"""Two real processes elect one leader through a FileLock; the survivor takes over a kill."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kschedlib.leaderelection import FileLock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FileLock needs fcntl")

REPO_ROOT = Path(__file__).resolve().parents[2]
LEASE, RENEW, RETRY = 2.0, 1.2, 0.3  # real seconds; a standby needs LEASE of silence

CHILD = f"""
import os, sys, threading
from kschedlib.leaderelection import (
    FileLock, LeaderCallbacks, LeaderElectionConfig, LeaderElector,
)

path, identity, log_path = sys.argv[1:4]
leading = False

def emit(event):
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (identity + " " + event + "\\n").encode())
    finally:
        os.close(fd)

def started():
    global leading
    leading = True
    emit("started")

def stopped():
    global leading
    if leading:
        leading = False
        emit("stopped")

config = LeaderElectionConfig(
    lock=FileLock(path, identity),
    callbacks=LeaderCallbacks(on_started_leading=started, on_stopped_leading=stopped),
    lease_duration={LEASE}, renew_deadline={RENEW}, retry_period={RETRY},
)
emit("ready")
while True:  # like a restarted replica: campaign again after losing the lease
    LeaderElector(config).run(threading.Event())
"""


def read_events(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    lines = log.read_text().splitlines()
    return [(who, event) for who, event in (line.split(" ", 1) for line in lines)]


def current_leaders(events: list[tuple[str, str]]) -> list[str]:
    """Replay the log, asserting no process starts leading while another one leads."""
    leading: list[str] = []
    for who, event in events:
        if event == "started":
            assert not leading, f"{who} started leading while {leading} led: {events}"
            leading.append(who)
        elif event in ("stopped", "killed") and who in leading:
            leading.remove(who)
    return leading


def poll(condition: Callable[[], bool], until: float) -> bool:
    while time.monotonic() < until:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_one_leader_across_processes_and_takeover_after_kill(tmp_path: Path) -> None:
    budget = time.monotonic() + 14.0
    lock_path, log = tmp_path / "lease.json", tmp_path / "events.log"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
    )
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in ("p1", "p2"):
            with open(tmp_path / f"{name}.stderr", "wb") as stderr:
                procs[name] = subprocess.Popen(
                    [sys.executable, "-c", CHILD, str(lock_path), name, str(log)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )

        def diagnostics() -> str:
            errs = {n: (tmp_path / f"{n}.stderr").read_text()[-2000:] for n in procs}
            return f"events={read_events(log)} stderr={errs}"

        assert poll(
            lambda: bool(current_leaders(read_events(log))), min(budget, time.monotonic() + 8)
        ), diagnostics()
        assert poll(lambda: len([e for e in read_events(log) if e[1] == "ready"]) == 2, budget), (
            diagnostics()
        )

        # Both campaign; for longer than a lease the leader keeps renewing and the standby waits.
        time.sleep(LEASE + 0.5)
        leaders = current_leaders(read_events(log))
        assert len(leaders) == 1, diagnostics()
        leader = leaders[0]
        survivor = "p2" if leader == "p1" else "p1"
        assert FileLock(lock_path, "test").get()[0].holder_identity == leader
        assert procs[survivor].poll() is None and procs[leader].poll() is None, diagnostics()

        procs[leader].kill()
        procs[leader].wait(timeout=10)
        with open(log, "a") as marker:
            marker.write(f"{leader} killed\n")

        assert poll(lambda: current_leaders(read_events(log)) == [survivor], budget), diagnostics()
        current_leaders(read_events(log))  # the whole history had one leader at a time
        record, _ = FileLock(lock_path, "test").get()
        assert record.holder_identity == survivor
        assert record.leader_transitions >= 1
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
