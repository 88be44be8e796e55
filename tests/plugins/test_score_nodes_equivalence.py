"""The batch Score and int NormalizeScore extensions give exactly what the per-node methods give."""

from __future__ import annotations

import pytest

from kschedlib.conformance.scenario import Scenario
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.scheduler import Scheduler
from tests.corpus import CORPUS

SCENARIOS = ["basics-001", "image-locality-003", "taints-005", "scoring-strategies-021", "mixed-007"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_batch_scores_equal_per_node_scores(name: str) -> None:
    sc = Scenario.load(CORPUS / f"{name}.json")
    sched = Scheduler(sc.config, deterministic=True)
    sched.apply([*sc.nodes, *sc.other_objects(), *sc.pods])
    sched.cache.update_snapshot(sched.snapshot)
    fwk = next(iter(sched.frameworks.values()))
    nodes = sched.snapshot.list()
    checked = 0
    for pod in sc.pending:
        state = CycleState()
        _, st, _ = fwk.run_pre_filter_plugins(state, pod)
        fwk.run_pre_score_plugins(state, pod, nodes)
        for pl in fwk.score_plugins:
            if pl.name in state.skip_score_plugins or not hasattr(pl, "score_nodes"):
                continue
            batch, bst = pl.score_nodes(state, pod, nodes)
            assert bst is None
            single = [pl.score(state, pod, ni)[0] for ni in nodes]
            assert batch == single, pl.name
            ext = pl.score_extensions()
            if ext is not None and hasattr(ext, "normalize_score_values"):
                objs = [NodeScore(ni.name, v) for ni, v in zip(nodes, single, strict=True)]
                ext.normalize_score(state, pod, objs)
                ext.normalize_score_values(state, pod, batch)
                assert batch == [o.score for o in objs], pl.name
            checked += 1
    assert checked > 0


def test_batch_score_reports_missing_state_like_score() -> None:
    sc = Scenario.load(CORPUS / "basics-001.json")
    sched = Scheduler(sc.config)
    sched.apply([*sc.nodes])
    sched.cache.update_snapshot(sched.snapshot)
    fwk = next(iter(sched.frameworks.values()))
    taint = next(pl for pl in fwk.score_plugins if pl.name == "TaintToleration")
    _, st = taint.score_nodes(CycleState(), sc.pending[0], sched.snapshot.list())
    assert st is not None and st.code == Code.Error
