"""The kept Filter pass that rejected every node (schedule_one._RejectedPass) decides as the
usual pass does: random preemption workloads and one shaped like preemption-basic scheduled
with and without it, every decision, victim, nomination and message compared. Stored dry
runs taken on trust (their nominated pods unchanged by the queue's log) are checked
against the nominated pods a fresh lookup gives."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.plugins.defaultpreemption.dry_run_cache import DryRunMemo
from kschedlib.schedule_one import SchedulingAlgorithm

from .test_dry_run_cache import run as run_workload
from .test_dry_run_cache import workloads


def _counting(sched: Scheduler, keep: bool) -> list[int]:
    """Count the passes answered from the kept pass; without ``keep`` none is."""
    algo = sched.algorithm
    assert isinstance(algo, SchedulingAlgorithm)
    used = [0]
    again = algo._rejected_again

    def counted(*args: Any) -> Any:
        got = again(*args) if keep else None
        used[0] += got is not None
        return got

    algo._rejected_again = counted  # type: ignore[method-assign,assignment]
    return used


def _node(i: int, cpu: str = "4") -> Node:
    name = f"n{i:02d}"
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}},
    })


def _pod(name: str, cpu: str, priority: int, node: str = "") -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        "priority": priority,
    }
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
        "spec": spec,
        "status": {"startTime": "2025-09-08T12:00:00Z"} if node else {},
    })


def _preemption_basic(keep: bool, n_nodes: int = 24) -> tuple[list[Any], int]:
    """PreemptionBasic in small: four 900m pods per node, preemptors of 3 cpu (some of
    another priority), a node growing and one deleted pod in between."""
    sched = Scheduler(clock=FakeClock(), seed=1, explain=False)
    used = _counting(sched, keep)
    for i in range(n_nodes):
        sched.add_node(_node(i))
        for k in range(4):
            sched.add_pod(_pod(f"low-{i}-{k}", "900m", 0, node=f"n{i:02d}"))
    out: list[Any] = []
    for j in range(3 * n_nodes // 2):
        sched.add_pod(_pod(f"hi-{j:02d}", "3", 11 if j % 7 == 6 else 10))
        if j == 9:
            sched.update_node(_node(3, "5"))
        if j == 14:
            sched.delete_pod("default/low-5-0")
    for r in sched.run():
        out.append((r.pod.key, r.outcome.value, r.node, r.message, r.nominated_node,
                    tuple(v.key for v in r.victims)))
    return out, used[0]


def test_preemption_basic_in_small_decides_as_the_usual_pass() -> None:
    kept, used = _preemption_basic(True)
    plain, unused = _preemption_basic(False)
    assert kept == plain
    assert unused == 0
    assert used > 10  # the kept pass answered most failing passes
    assert any(msg.startswith("0/24 nodes are available") for _, _, _, msg, _, _ in kept)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_random_workloads_decide_as_the_usual_pass(w: dict[str, Any]) -> None:
    original = SchedulingAlgorithm._rejected_again
    try:
        SchedulingAlgorithm._rejected_again = (  # type: ignore[method-assign]
            lambda self, *args: None
        )
        plain = run_workload(w, reuse=True)
    finally:
        SchedulingAlgorithm._rejected_again = original  # type: ignore[method-assign]
    assert run_workload(w, reuse=True) == plain


# --- dry runs trusted by generation (DryRunMemo's nodes whose nominated pods are unchanged)


class _CheckedNames(set):  # type: ignore[type-arg]
    """The dry run's trusted node names; every trust is checked against the nominated pods
    a fresh lookup gives the preemptor (what the stored outcome was computed with)."""

    def __init__(self, base: set[str], table: Any, keyer: Any, nominated_at: Any) -> None:
        super().__init__()
        self.base, self.table, self.keyer, self.nominated_at = base, table, keyer, nominated_at
        self.checked = 0
        self.mismatches: list[str] = []

    def __contains__(self, name: object) -> bool:
        got = name in self.base
        if got:
            assert isinstance(name, str)
            at = self.nominated_at
            key = self.keyer(name) if at is None or at(name) else ()
            self.checked += 1
            if self.table[name][1] != key:
                self.mismatches.append(name)
        return got

    def add(self, name: str) -> None:
        self.base.add(name)


class _CheckTrust:
    def __init__(self) -> None:
        self.checked = 0
        self.mismatches: list[str] = []
        self._saved = DryRunMemo.parts

    def __enter__(self) -> _CheckTrust:
        saved = self._saved

        def parts(memo: DryRunMemo) -> Any:
            got = saved(memo)
            if got is None or got[3] is None:
                return got
            table, keyer, nominated_at, names = got
            assert names is not None
            checked = _CheckedNames(names, table, keyer, nominated_at)
            self._sets.append(checked)
            return table, keyer, nominated_at, checked

        self._sets: list[_CheckedNames] = []
        DryRunMemo.parts = parts  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        DryRunMemo.parts = self._saved  # type: ignore[method-assign]
        self.checked = sum(s.checked for s in self._sets)
        self.mismatches = [m for s in self._sets for m in s.mismatches]


def test_trusted_dry_runs_hold_in_preemption_basic_in_small() -> None:
    with _CheckTrust() as check:
        trusted, _ = _preemption_basic(True)
    assert check.mismatches == []
    assert check.checked > 100  # most stored outcomes were taken on trust
    assert trusted == _preemption_basic(True)[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_trusted_dry_runs_hold_in_random_workloads(w: dict[str, Any]) -> None:
    with _CheckTrust() as check:
        run_workload(w, reuse=True)
    assert check.mismatches == []
