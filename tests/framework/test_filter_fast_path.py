"""The node-local filter's fast path (every node of the window fits, by stored verdict or
freshly computed) and the table filter with nominated pods find what the plain loop over
every filter finds, from every start index, with and without infeasible nodes."""

from __future__ import annotations

from itertools import chain, islice

import pytest

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.framework.cycle_state import CycleState
from kschedlib.schedule_one import _filter_each, _filter_node_local
from tests.framework.test_node_local_cache import make_node


@pytest.mark.parametrize(("tainted", "to_find"), [((), 100), ((), 120), ((5, 60, 119), 100),
                                                   ((0, 1, 2), 7)])
def test_fast_path_matches_the_plain_loop(tainted: tuple[int, ...], to_find: int) -> None:
    sched = Scheduler(clock=FakeClock(), explain=False)
    for i in range(120):
        sched.add_node(make_node(i, 4, "z1", "NoSchedule" if i in tainted else None, False))
    sched.cache.update_snapshot(sched.snapshot)
    nodes = sched.snapshot.node_infos().list()
    fwk = sched.frameworks["default-scheduler"]
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "img:1"}]}})
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod)
    filters = fwk.filter_functions(state)
    k, table = fwk.node_local_filter_table(pod, filters)
    assert table is not None and k == len(filters)
    for start in range(len(nodes)):
        order = chain(islice(nodes, start, None), islice(nodes, 0, start))
        want = _filter_each(fwk, state, pod, order, to_find, filters, False)
        for _ in range(2):  # verdicts computed and stored, then all read back
            got = _filter_node_local(fwk, state, pod, nodes, start, to_find, filters, table)
            assert [ni.name for ni in got[0]] == [ni.name for ni in want[0]]
            assert [(n, s.reasons) for n, s in got[1]] == [(n, s.reasons) for n, s in want[1]]


@pytest.mark.parametrize(("to_find", "nominated", "full"), [
    (100, (3, 50, 119), ()), (7, (0, 1), (2, 3, 4)), (120, (), (10,)), (100, (60,), (59, 61)),
])
def test_runs_with_nominated_pods_match_the_plain_loop(
    to_find: int, nominated: tuple[int, ...], full: tuple[int, ...]
) -> None:
    """The table filter (stored verdicts, nominated pods around) equals the plain two-pass
    loop from every start index: nodes holding nominated pods, full nodes, nodes whose
    verdict is not stored yet."""
    from kschedlib.schedule_one import _filter_with_table

    sched = Scheduler(clock=FakeClock(), explain=False)
    for i in range(120):
        sched.add_node(make_node(i, 2, "z1", None, False))
    for i in full:
        sched.add_pod({"metadata": {"name": f"full-{i}", "namespace": "default"},
                       "spec": {"nodeName": f"n{i:03d}", "containers": [
                           {"name": "c", "resources": {"requests": {"cpu": "2"}}}]}})
    for i in nominated:  # high-priority pods nominated there, pending
        sched.add_pod({"metadata": {"name": f"nom-{i}", "namespace": "default"},
                       "spec": {"priority": 100, "containers": [
                           {"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]},
                       "status": {"nominatedNodeName": f"n{i:03d}"}})
    sched.cache.update_snapshot(sched.snapshot)
    nodes = sched.snapshot.node_infos().list()
    fwk = sched.frameworks["default-scheduler"]
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "img:1",
                                                  "resources": {"requests": {"cpu": "1"}}}]}})
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod)
    filters = fwk.filter_functions(state)
    k, table = fwk.node_local_filter_table(pod, filters)
    assert table is not None and k == len(filters)
    names = fwk.nominated_node_names() or ()
    assert set(names) == {f"n{i:03d}" for i in nominated}
    for start in range(0, len(nodes), 7):
        order = chain(islice(nodes, start, None), islice(nodes, 0, start))
        want = _filter_each(fwk, state, pod, order, to_find, filters, True)
        for _ in range(2):  # verdicts computed and stored, then read back
            order = chain(islice(nodes, start, None), islice(nodes, 0, start))
            got = _filter_with_table(fwk, state, pod, order, to_find, filters, k, table, names)
            assert [ni.name for ni in got[0]] == [ni.name for ni in want[0]]
            assert [(n, s.reasons) for n, s in got[1]] == [(n, s.reasons) for n, s in want[1]]
