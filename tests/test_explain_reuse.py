"""Explanations recorded from the folded score path (stored rows, totals, no per-node result
objects) and built on first use equal those of the general path that scores every plugin
column by column; placements are the same either way."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest

from kschedlib import FakeClock, Scheduler
from kschedlib.api.scenario import Scenario
from kschedlib.framework.reuse import ScoreBreakdown
from kschedlib.results import LazyScores
from tests.builders import new_scheduler, node, pod

CORPUS = Path(__file__).resolve().parent / "conformance" / "corpus"
FAMILIES = ("basics", "mixed", "node-affinity", "pod-affinity", "taints", "topology-spread",
            "scoring-strategies", "image-locality", "resources", "preemption")


def _scenarios() -> list[Path]:
    files = sorted(p for p in CORPUS.glob("*.json") if not p.name.endswith(".expected.json"))
    return [p for p in files if p.name.startswith(FAMILIES)]


def _run(sc: Scenario, **kw: Any) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    s = Scheduler(sc.config, clock=FakeClock(), seed=7, **kw)
    for n in sc.nodes:
        s.add_node(n)
    for o in sc.other_objects():
        s.add_object(o)
    for p in [*sc.pods, *sc.pending]:
        s.add_pod(p)
    placements = []
    for _ in range(3):
        for r in s.run():
            placements.append((r.key, r.node or r.outcome.value))
        s.clock.advance(30.0)  # type: ignore[attr-defined]
    return placements, {k: e.to_dict() for k, e in sorted(s.explanations.items())}


def test_corpus_explanations_match_the_general_path() -> None:
    files = _scenarios()
    assert len(files) >= 100
    compared = 0
    for f in files:
        sc = Scenario.load(f)
        fast = _run(sc)
        general = _run(sc, node_local_cache=False)
        assert fast == general, f.name
        compared += sum(1 for e in fast[1].values() if len(e["scores"]) > 1)
    assert compared > 100  # many attempts scored several nodes


@pytest.mark.parametrize("top", [None, 2])
def test_lazy_scores_are_built_once_and_equal_a_dict(top: int | None) -> None:
    s = new_scheduler(explain_top_nodes=top)
    for i in range(4):
        s.add_node(node(f"n{i}", cpu=str(2 + i)))
    s.add_pod(pod("p", cpu="1"))
    (r,) = s.run()
    exp = s.explain("default/p")
    assert exp is not None
    assert isinstance(exp.scores, LazyScores)  # built on first read (a top few too)
    built = dict(exp.scores)
    assert exp.scores == built and list(exp.scores) == list(built)
    assert len(built) == (4 if top is None else 2) and r.node in built
    assert list(built[r.node].plugins)[:1] == ["TaintToleration"]  # the profile's order
    assert pickle.loads(pickle.dumps(exp)) == exp and copy.deepcopy(exp) == exp


def test_breakdown_rows_read_as_columns() -> None:
    b = ScoreBreakdown(["A", "B"], {"A": 1, "B": 2}, {"B": [5, 6]}, {"B": [50, 60]},
                       row_plugins=["A"], rows=[(1,), (2,)])
    assert [b.raw_score("A", i) for i in (0, 1)] == [1, 2]
    assert [b.normalized_score("A", i) for i in (0, 1)] == [1, 2]
    assert (b.raw_score("B", 1), b.normalized_score("B", 1)) == (6, 60)


def test_top_indices_match_a_full_sort() -> None:
    import random

    from kschedlib.explain import _top_score_indices

    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 30)
        names = [f"n{rng.randint(0, 999):03d}-{i}" for i in range(n)]
        totals = [rng.randint(0, 4) * 10 for _ in range(n)]
        top = rng.randint(0, 6)
        selected = rng.choice([*names, "elsewhere"])
        ranked = sorted(range(n), key=lambda i: (-totals[i], names[i]))
        want = ranked[:top]
        if selected and all(names[i] != selected for i in want):
            pick = [names.index(selected)] if selected in names else []
            want = [*want[: max(top - 1, 0)], *pick]
        assert _top_score_indices(names, totals, top, selected) == want
