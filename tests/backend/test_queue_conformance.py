"""The queue fed with the conformance corpus' pending pods (informer Add events)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.backend.queue import PriorityQueue
from kschedlib.framework.handle import FakeClock
from tests.corpus import CORPUS

SCENARIOS = sorted(p for p in CORPUS.glob("*.json") if not p.name.endswith(".expected.json"))


def _pending(path: Path) -> list[Pod]:
    data = json.loads(path.read_text())
    return [Pod.from_dict(p) for p in data.get("pending", [])]


def test_corpus_is_present() -> None:
    assert len(SCENARIOS) > 100


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_pending_pods_are_queued_nominated_and_popped_by_priority(path: Path) -> None:
    """Every pending pod enters activeQ; one carrying status.nominatedNodeName is nominated
    there on Add (basics-009 relies on it: the nominated pod counts on its node while an
    earlier pod is filtered); pops follow PrioritySort."""
    pods = _pending(path)
    clock = FakeClock(1_700_000_000.0)
    q = PriorityQueue(clock=clock)
    for pod in pods:
        q.add(pod)
        clock.advance(0.001)
    assert q.pending_pods_count()["active"] == len({p.key for p in pods})
    nominated: dict[str, list[str]] = {}
    for pod in pods:
        if pod.status.nominated_node_name:
            nominated.setdefault(pod.status.nominated_node_name, []).append(pod.uid)
    for node, uids in nominated.items():
        assert [pi.pod.uid for pi in q.nominated_pods_for_node(node)] == uids
    order = sorted(range(len(pods)), key=lambda i: (-pod_priority(pods[i]), i))
    popped = []
    while (p := q.pop()) is not None:
        popped.append(p.pod.key)
    assert popped == [pods[i].key for i in order]


def test_basics_009_reserved_pod_is_nominated_to_n1() -> None:
    pods = {p.metadata.name: p for p in _pending(CORPUS / "basics-009.json")}
    q = PriorityQueue(clock=FakeClock(0.0))
    for pod in pods.values():
        q.add(pod)
    assert [pi.pod.metadata.name for pi in q.nominated_pods_for_node("n1")] == ["reserved"]
    assert q.nominated_pods_for_node("n2") == []
    # The nominated pod is returned with its full spec (its requests count on n1).
    (info,) = q.nominated_pods_for_node("n1")
    assert info.pod.spec.containers[0].resources.requests["cpu"].milli_value() == 2000
