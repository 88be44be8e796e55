"""The filter loop's lookup of a plugin's rejections by node name (FilterRejectionsPlugin)
decides as calling its Filter node by node: same placements, messages, explanations (the
per-node statuses, in order) and round-robin start index."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib import schedule_one as schedule_one_module
from tests.framework.test_node_local_cache import make_node, run, workloads


def _without_rejections() -> Any:
    return mock.patch.object(schedule_one_module, "_filter_rejections", lambda *a: None)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_rejections_decide_as_filter_calls(w: dict[str, Any]) -> None:
    with _without_rejections():
        want = run(w, cache=True, explain=True)
    assert run(w, cache=True, explain=True) == want


def _anti_pod(i: int) -> Pod:
    return Pod.from_dict({
        "metadata": {"name": f"p{i:03d}", "namespace": "default", "uid": f"u{i}",
                     "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}},
                 "topologyKey": "kubernetes.io/hostname"}]}},
        },
    })


def _fill(n_nodes: int, n_pods: int) -> tuple[list[Any], int]:
    """One anti-affine pod per node until the nodes run out: every cycle but the first
    rejects the nodes taken so far; the last pods fit nowhere."""
    sched = Scheduler(clock=FakeClock(), seed=3, explain=True)
    for i in range(n_nodes):
        sched.add_node(make_node(i, 4, ("z1", "z2", "z3")[i % 3], None, False))
    out: list[Any] = []
    for i in range(n_pods):
        sched.add_pod(_anti_pod(i))
        for r in sched.run():
            out.append((r.pod.key, r.outcome.value, r.node, r.message,
                        r.explanation.to_dict() if r.explanation is not None else None))
    return out, sched.algorithm.next_start_node_index


def test_filling_every_node_decides_as_filter_calls() -> None:
    calls = []
    real = schedule_one_module._filter_with_rejections

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    with mock.patch.object(schedule_one_module, "_filter_with_rejections", counted):
        got = _fill(120, 124)
    assert len(calls) >= 100  # the lookup path ran
    with _without_rejections():
        want = _fill(120, 124)
    assert got == want
    assert sum(1 for r in got[0] if r[1] == "Scheduled") == 120
    assert "didn't match pod anti-affinity rules" in got[0][-1][3]
