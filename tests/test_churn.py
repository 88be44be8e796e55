"""A long-running host: events by key cost O(1), nothing is kept for a deleted pod, the event
log stays bounded, and the churn benchmark workload runs."""

from __future__ import annotations

import pytest

from kschedlib.backend.cache import Cache
from kschedlib.results import Event, EventLog, Outcome
from tests.builders import new_scheduler, node, pod


def _no_dump(*_: object) -> None:
    raise AssertionError("a host event by key must not copy the cache")


def test_delete_and_update_by_key_or_uid_never_copy_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = new_scheduler()
    s.add_node(node("n1"))
    for i in range(4):
        s.add_pod(pod(f"p{i}"))
    assert all(r.outcome == Outcome.Scheduled for r in s.run())
    s.add_pod(pod("waiting", cpu="100"))  # does not fit: stays pending
    s.run()
    monkeypatch.setattr(Cache, "dump", _no_dump)
    s.delete_pod("default/p0")  # bound, by key
    s.delete_pod("uid-default-p1")  # bound, by UID
    s.delete_pod("default/waiting")  # pending, by key
    s.delete_pod("default/nope")  # unknown: ignored
    monkeypatch.undo()
    assert sorted(p.key for p in s.bound_pods()) == ["default/p2", "default/p3"]
    assert [p.key for p in s.pending_pods()] == []
    assert s.cache.find_pod("default/p0") is None and s.cache.find_pod("uid-default-p1") is None
    assert s.cache.find_pod("default/p2") is not None


def test_a_deleted_pod_leaves_no_explanation_or_failure_behind() -> None:
    s = new_scheduler()
    s.add_node(node("n1", cpu="1"))
    s.add_pod(pod("fits", cpu="500m"))
    s.add_pod(pod("too-big", cpu="2"))
    s.run()
    assert s.explain("default/fits") is not None and s.explain("default/too-big") is not None
    assert s.why_pending("default/too-big").startswith("0/1 nodes are available")
    s.delete_pod("default/fits")
    s.delete_pod("default/too-big")
    assert s.explain("default/fits") is None and s.explain("default/too-big") is None
    assert "default/too-big" not in s.events.last_failure


def test_event_log_keeps_the_newest_and_each_pending_pods_last_failure() -> None:
    log = EventLog(limit=3)
    log.append(Event("Warning", "FailedScheduling", "ns/a", "no room", 0.0))
    for i in range(10):
        log.append(Event("Normal", "Scheduled", f"ns/b{i}", "ok", float(i)))
    assert len(log) <= 6 and log[-1].pod == "ns/b9"
    assert [e.pod for e in log[-3:]] == ["ns/b7", "ns/b8", "ns/b9"]
    assert log.last_failure == {"ns/a": "no room"}  # survives the trim
    copy = log.copy()
    copy.forget("ns/a")
    assert log.last_failure == {"ns/a": "no room"} and copy.last_failure == {}
    log.append(Event("Normal", "Scheduled", "ns/a", "ok", 11.0))
    assert log.last_failure == {}


def test_long_churn_keeps_records_bounded() -> None:
    s = new_scheduler()
    s.events.limit = 50
    for i in range(5):
        s.add_node(node(f"n{i}"))
    alive: list[str] = []
    for i in range(400):
        s.add_pod(pod(f"p{i}"))
        alive.append(f"default/p{i}")
        if len(alive) > 20:
            s.delete_pod(alive.pop(0))
        s.run()
    assert len(s.explanations) <= 21
    assert len(s.events) <= 100
    assert sorted(p.key for p in s.bound_pods()) == sorted(alive)


def test_key_index_follows_savepoint_rollback() -> None:
    s = new_scheduler()
    s.add_node(node("n1"))
    s.add_pod(pod("a"))
    s.run()
    token = s.cache.savepoint()
    s.delete_pod("default/a")
    s.add_pod(pod("a", uid="uid-other"))  # same key, another pod, bound below
    s.run()
    assert s.cache.find_pod("default/a") is not None
    assert s.cache.find_pod("default/a").uid == "uid-other"  # type: ignore[union-attr]
    s.cache.rollback(token)
    found = s.cache.find_pod("default/a")
    assert found is not None and found.uid == "uid-default-a"
    assert s.cache.find_pod("uid-other") is None


def test_churn_workload_runs_in_tenths(capsys: pytest.CaptureFixture[str]) -> None:
    from kschedlib.bench.churn_bench import main, run_churn

    r = run_churn(events=400, nodes=20, alive=100, batch=20, node_every=100)
    assert len(r.events) == 10 and sum(r.events) >= 400
    assert r.scheduled == r.attempts > 250 and len(r.rss) == 10
    assert main(["--events", "200", "--nodes", "10", "--alive", "50", "--explain", "off"]) == 0
    out = capsys.readouterr().out
    assert "tenth 10:" in out and "churn rate: first tenth" in out
