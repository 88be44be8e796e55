"""PodTopologySpread's PreScore from Score's per-generation readings (pre_score_state) gives
the state init_pre_score_state and a direct count give (domains in the same order, the same
weights and counts), and score_nodes over the readings gives score_node's results, across
pod additions and node removals (the counter's totals kept from the snapshot's log)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code
from kschedlib.plugins import podtopologyspread
from kschedlib.plugins.podtopologyspread.common import SCHEDULE_ANYWAY
from kschedlib.plugins.podtopologyspread.scoring import (
    PreScoreState,
    _score_key,
    count_domains,
    init_pre_score_state,
    score_node,
)
from tests.plugins.podtopologyspread.test_fast_paths import (
    HOST,
    added_pod,
    apply_op,
    counted_plugin,
    incoming_pods,
    workloads,
)


def _reference(pl: Any, pod: Pod, filtered: Any, all_nodes: Any) -> PreScoreState:
    require_all = bool(pod.spec.topology_spread_constraints) or not pl.system_defaulted
    constraints = pl.get_constraints(pod, SCHEDULE_ANYWAY)
    ref = init_pre_score_state(constraints, filtered, require_all)
    count_domains(ref, pod, all_nodes, require_all)  # no counter: every node counted
    return ref


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workloads(),
    st.lists(st.tuples(st.sampled_from(["add", "add", "remove_node"]), st.integers(0, 30)),
             max_size=6),
    st.booleans(),
    st.data(),
)
def test_pre_score_from_readings_equals_the_straightforward_state(
    w: dict[str, Any], ops: list[tuple[str, int]], defaulted: bool, data: Any
) -> None:
    cache, snap, pl = counted_plugin(w)
    incoming = w["incoming"]
    if defaulted:  # the System defaults (hostname and zone): the readings' case
        incoming = data.draw(incoming_pods().filter(
            lambda p: not p.spec.topology_spread_constraints
            and p.metadata.owner_references and p.metadata.labels.get("app") == "web"
        ))
    live = [n.metadata.name for n in w["nodes"]]
    for step in range(len(ops) + 2):  # twice first: the counter keeps a key seen again
        if step >= 2:
            apply_op(cache, snap, live, step, *ops[step - 2])
        nodes = snap.list()
        filtered = [ni for ni in nodes if ni.name in w["filtered"]] or list(nodes)
        state = CycleState()
        st_ = pl.pre_score(state, incoming, filtered)
        if st_ is not None:
            assert st_.code == Code.Skip
            return
        s = state.read(podtopologyspread.PRE_SCORE_STATE_KEY)
        assert isinstance(s, PreScoreState)
        ref = _reference(pl, incoming, filtered, nodes)
        assert s.constraints == ref.constraints
        assert s.ignored_nodes == ref.ignored_nodes
        assert [list(m.items()) for m in s.tp_value_to_pod_counts] == [
            list(m.items()) for m in ref.tp_value_to_pod_counts
        ]
        assert s.weights == ref.weights
        if defaulted and step >= 1 and all(ni.node is not None for ni in filtered):
            assert any(c.topology_key == HOST for c in s.constraints)
            assert s.readings is not None and s.readings[0] is filtered  # the fast path ran
        batch, bst = pl.score_nodes(state, incoming, filtered)
        assert bst is None
        assert batch == [score_node(ref, incoming, ni) for ni in filtered]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workloads(),
    st.lists(
        st.tuples(st.sampled_from(["add", "add", "remove_node", "remove_pod"]), st.integers(0, 30)),
        max_size=8,
    ),
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 12)), min_size=10, max_size=10),
)
def test_readings_kept_by_position_equal_fresh_readings(
    w: dict[str, Any], ops: list[tuple[str, int]], windows: list[tuple[int, int]]
) -> None:
    """Round-robin windows of the node list (as the Filter hands them on) take their readings
    from the marks kept by position: each is what _score_key reads of the node now, and the
    state and scores equal the straightforward ones, across pod additions and deletions and
    node removals."""
    cache, snap, pl = counted_plugin(w)
    incoming = Pod.from_dict({  # System-default spreading (hostname and zone)
        "metadata": {"name": "in", "namespace": "default", "uid": "in", "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "rs", "uid": "rs", "controller": True}]},
        "spec": {"containers": [{"name": "c"}]},
    })
    live = [n.metadata.name for n in w["nodes"]]
    added: list[Pod] = []
    used_marks = False
    for step in range(len(ops) + 2):
        if step >= 2:
            op, a = ops[step - 2]
            if op == "add":
                p = added_pod(step, a, live)
                cache.add_pod(p)
                added.append(p)
            elif op == "remove_pod" and added:
                cache.remove_pod(added.pop(a % len(added)))
            elif op == "remove_node" and len(live) > 1:
                gone = live.pop(a % len(live))
                for p in [p for p in added if p.spec.node_name == gone]:
                    cache.remove_pod(p)
                    added.remove(p)
                cache.remove_node(gone)
            cache.update_snapshot(snap)
        nodes = snap.list()
        for start, count in windows[step % 3::3]:
            start %= len(nodes)
            count = min(count, len(nodes))
            filtered = [*nodes[start:], *nodes[:start]][:count]
            state = CycleState()
            st_ = pl.pre_score(state, incoming, filtered)
            if st_ is not None:
                assert st_.code == Code.Skip
                return
            s = state.read(podtopologyspread.PRE_SCORE_STATE_KEY)
            ref = _reference(pl, incoming, filtered, nodes)
            assert [list(m.items()) for m in s.tp_value_to_pod_counts] == [
                list(m.items()) for m in ref.tp_value_to_pod_counts
            ]
            assert s.weights == ref.weights and s.ignored_nodes == ref.ignored_nodes
            batch, bst = pl.score_nodes(state, incoming, filtered)
            assert bst is None
            assert batch == [score_node(ref, incoming, ni) for ni in filtered]
            if s.readings is not None and s.score_keys is not None:
                marks = getattr(s.score_keys, "marks", None)
                if marks is not None and marks.nodes is nodes:
                    used_marks = True
                    plan = [
                        (c.topology_key, None, 0.0,
                         c.selector if c.topology_key == HOST else None, 0.0, 0.0, i)
                        for i, c in enumerate(s.constraints)
                    ]
                    for p, ni in enumerate(nodes):
                        if p not in marks.dirty:
                            assert marks.readings[p] == _score_key(ni, plan, None, "default")
    assert used_marks  # the windows took the kept readings at least once
