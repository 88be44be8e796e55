"""PodTopologySpread's PreScore from Score's per-generation readings (pre_score_state) gives
the state init_pre_score_state and a direct count give (domains in the same order, the same
weights and counts), and score_nodes over the readings gives score_node's results, across
pod additions and node removals (the counter's totals kept from the snapshot's log)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.api.pod import Pod
from kschedlib.backend.cache.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.status import Code
from kschedlib.plugins import podtopologyspread
from kschedlib.plugins.podtopologyspread.common import SCHEDULE_ANYWAY
from kschedlib.plugins.podtopologyspread.scoring import (
    PreScoreState,
    count_domains,
    init_pre_score_state,
    score_node,
)
from tests.plugins.podtopologyspread.test_fast_paths import (
    HOST,
    _replica_set,
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
    store = ObjectStore()
    store.upsert(_replica_set())
    cache = Cache()
    for n in w["nodes"]:
        cache.add_node(n)
    for p in w["pods"]:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = BasicHandle(snap, store)
    handle.node_local_cache = object()  # type: ignore[attr-defined]  # counter on
    pl = podtopologyspread.new(None, handle)
    incoming = w["incoming"]
    if defaulted:  # the System defaults (hostname and zone): the readings' case
        incoming = data.draw(incoming_pods().filter(
            lambda p: not p.spec.topology_spread_constraints
            and p.metadata.owner_references and p.metadata.labels.get("app") == "web"
        ))
    live = [n.metadata.name for n in w["nodes"]]
    for step in range(len(ops) + 2):  # twice first: the counter keeps a key seen again
        if step >= 2:
            op, a = ops[step - 2]
            if op == "add":
                cache.add_pod(Pod.from_dict({
                    "metadata": {"name": f"x{step}", "namespace": "default", "uid": f"x{step}",
                                 "labels": {"app": ["web", "db"][a % 2]}},
                    "spec": {"containers": [{"name": "c"}], "nodeName": live[a % len(live)]},
                }))
            elif len(live) > 1:
                cache.remove_node(live.pop(a % len(live)))
            cache.update_snapshot(snap)
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
