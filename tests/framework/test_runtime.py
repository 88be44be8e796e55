"""The framework runtime's semantics per extension point."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.status import SKIP, Code, Status, unresolvable, unschedulable
from tests.framework.fakes import Fake, make_framework, node, pod


def ok(*_: Any) -> None:
    return None


def test_filter_stops_at_first_failure_and_names_plugin() -> None:
    log: list[str] = []
    a = Fake("A", log, filter=lambda s, p, n: unschedulable("no A"))
    b = Fake("B", log, filter=ok)
    fwk, snap = make_framework([a, b], nodes=[node("n1")])
    st = fwk.run_filter_plugins(CycleState(), pod(), snap.get("n1"))
    assert st is not None and st.plugin == "A" and st.reasons == ("no A",)
    assert log == ["filter:A"]


def test_filter_error_is_wrapped() -> None:
    a = Fake("A", [], filter=lambda s, p, n: Status(Code.Wait))
    fwk, snap = make_framework([a], nodes=[node("n1")])
    st = fwk.run_filter_plugins(CycleState(), pod(), snap.get("n1"))
    assert st is not None and st.code == Code.Error and 'running "A" filter plugin' in st.message()


def test_pre_filter_skip_removes_filter() -> None:
    log: list[str] = []
    a = Fake("A", log, pre_filter=lambda s, p, n: (None, SKIP), filter=lambda *x: unschedulable("x"))
    fwk, snap = make_framework([a], nodes=[node("n1")])
    state = CycleState()
    _, st, _ = fwk.run_pre_filter_plugins(state, pod())
    assert st is None and state.skip_filter_plugins == {"A"}
    assert fwk.run_filter_plugins(state, pod(), snap.get("n1")) is None


def test_pre_filter_unresolvable_stops_but_unschedulable_continues() -> None:
    log: list[str] = []
    a = Fake("A", log, pre_filter=lambda s, p, n: (None, unschedulable("a")))
    b = Fake("B", log, pre_filter=lambda s, p, n: (None, None))
    fwk, _ = make_framework([a, b], nodes=[node("n1")])
    _, st, _ = fwk.run_pre_filter_plugins(CycleState(), pod())
    assert st is not None and st.code == Code.Unschedulable and st.plugin == "A"
    assert log == ["pre_filter:A", "pre_filter:B"]
    log.clear()
    a.b["pre_filter"] = lambda s, p, n: (None, unresolvable("a"))
    _, st, _ = fwk.run_pre_filter_plugins(CycleState(), pod())
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert log == ["pre_filter:A"]


def test_pre_filter_results_intersect() -> None:
    a = Fake("A", [], pre_filter=lambda s, p, n: (PreFilterResult(frozenset({"n1", "n2"})), None))
    b = Fake("B", [], pre_filter=lambda s, p, n: (PreFilterResult(frozenset({"n2", "n3"})), None))
    fwk, _ = make_framework([a, b], nodes=[node("n1")])
    res, st, plugins = fwk.run_pre_filter_plugins(CycleState(), pod())
    assert st is None and res is not None and res.node_names == {"n2"} and plugins == {"A", "B"}
    b.b["pre_filter"] = lambda s, p, n: (PreFilterResult(frozenset({"n3"})), None)
    _, st, _ = fwk.run_pre_filter_plugins(CycleState(), pod())
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ("node(s) didn't satisfy plugin(s) [A B] simultaneously",)


def test_scores_normalized_then_weighted() -> None:
    a = Fake("A", [], score=lambda s, p, n: (int(n.name[1:]) * 10, None),
             normalize=lambda scores: [setattr(x, "score", x.score * 2) for x in scores] and None)
    b = Fake("B", [], score=lambda s, p, n: (50, None))
    fwk, snap = make_framework([a, b], weights={"A": 3}, nodes=[node("n1"), node("n2")])
    out, st = fwk.run_score_plugins(CycleState(), pod(), snap.list())
    assert st is None
    assert [(s.name, s.total_score) for s in out] == [("n1", 60 + 50), ("n2", 120 + 50)]
    assert [(p.name, p.score) for p in out[1].scores] == [("A", 120), ("B", 50)]


def test_score_out_of_range_is_an_error_naming_the_plugin() -> None:
    a = Fake("A", [], score=lambda s, p, n: (101, None))
    fwk, snap = make_framework([a], nodes=[node("n1")])
    _, st = fwk.run_score_plugins(CycleState(), pod(), snap.list())
    assert st is not None and st.code == Code.Error and 'plugin "A" returns an invalid score 101' in st.message()


def test_pre_score_skip_skips_score() -> None:
    a = Fake("A", [], pre_score=lambda s, p, n: SKIP, score=lambda s, p, n: (1, None))
    fwk, snap = make_framework([a], nodes=[node("n1")])
    state = CycleState()
    assert fwk.run_pre_score_plugins(state, pod(), snap.list()) is None
    out, st = fwk.run_score_plugins(state, pod(), snap.list())
    assert st is None and out[0].scores == [] and out[0].total_score == 0


def test_reserve_failure_and_unreserve_in_reverse_order() -> None:
    log: list[str] = []
    a = Fake("A", log, reserve=ok)
    b = Fake("B", log, reserve=lambda *x: unschedulable("full"))
    fwk, _ = make_framework([a, b])
    st = fwk.run_reserve_plugins_reserve(CycleState(), pod(), "n1")
    assert st is not None and st.plugin == "B"
    fwk.run_reserve_plugins_unreserve(CycleState(), pod(), "n1")
    assert log == ["reserve:A", "reserve:B", "unreserve:B", "unreserve:A"]


def test_permit_wait_allow_and_timeout() -> None:
    a = Fake("A", [], permit=lambda *x: (Status(Code.Wait), 10.0))
    fwk, _ = make_framework([a])
    p = pod()
    st = fwk.run_permit_plugins(CycleState(), p, "n1")
    assert st is not None and st.code == Code.Wait
    assert fwk.wait_on_permit(p) == Status(Code.Wait)
    wp = fwk.get_waiting_pod(p.uid)
    assert wp is not None and wp.get_pending_plugins() == ["A"]
    wp.allow("A")
    assert fwk.wait_on_permit(p) is None
    assert fwk.get_waiting_pod(p.uid) is None
    fwk.run_permit_plugins(CycleState(), p, "n1")
    fwk.clock.advance(10.0)
    st = fwk.wait_on_permit(p)
    assert st is not None and st.code == Code.Unschedulable and st.plugin == "A"
    assert st.message() == "rejected due to timeout after waiting 10s at plugin A"


def test_permit_rejection_wins() -> None:
    a = Fake("A", [], permit=lambda *x: (unschedulable("nope"), 0.0))
    fwk, _ = make_framework([a])
    st = fwk.run_permit_plugins(CycleState(), pod(), "n1")
    assert st is not None and st.code == Code.Unschedulable and st.plugin == "A"


def test_bind_runs_until_a_plugin_does_not_skip() -> None:
    log: list[str] = []
    a = Fake("A", log, bind=lambda *x: SKIP)
    fwk, _ = make_framework([a], extra_plugins_cfg={"bind": {"enabled": [{"name": "A"}]}})
    assert [p.name for p in fwk.bind_plugins] == ["A", "Binder"]
    assert fwk.run_bind_plugins(CycleState(), pod(), "n1") is None
    assert log == ["bind:A"]


def test_post_filter_collects_reasons_of_rejecting_plugins() -> None:
    a = Fake("A", [], post_filter=lambda *x: (None, unschedulable("first")))
    b = Fake("B", [], post_filter=lambda *x: (None, unschedulable("second")))
    fwk, _ = make_framework([a, b])
    _, st = fwk.run_post_filter_plugins(CycleState(), pod(), None)  # type: ignore[arg-type]
    assert st is not None and st.message() == "first, second" and st.plugin == "A"


def test_multi_point_disabled_per_point_and_specific_override_order() -> None:
    a = Fake("A", [], filter=ok, score=lambda *x: (0, None))
    b = Fake("B", [], filter=ok)
    fwk, _ = make_framework(
        [a, b],
        extra_plugins_cfg={
            "score": {"disabled": [{"name": "A"}]},
            "filter": {"enabled": [{"name": "B"}]},
        },
    )
    assert [p.name for p in fwk.score_plugins] == []
    # B is configured at Filter explicitly: it overrides its multiPoint entry and comes first.
    assert [p.name for p in fwk.filter_plugins] == ["B", "A"]


def test_plugin_without_the_point_method_is_rejected() -> None:
    b = Fake("B", [], filter=ok)
    with pytest.raises(ConfigError, match='plugin "B" does not extend ScorePlugin'):
        make_framework([b], extra_plugins_cfg={"score": {"enabled": [{"name": "B"}]}})


def test_go_duration_format() -> None:
    from kschedlib.framework.waiting_pods import go_duration

    assert [go_duration(x) for x in (30, 1.5, 90, 7200, 0.5, 3661.25)] == [
        "30s", "1.5s", "1m30s", "2h0m0s", "500ms", "1h1m1.25s"
    ]
