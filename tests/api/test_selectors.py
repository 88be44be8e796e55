"""Label and node selector semantics, as apimachinery and nodeaffinity define them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kschedlib.api.codec import decode
from kschedlib.api.node import Taint
from kschedlib.api.pod import Toleration
from kschedlib.api.selectors import (
    NOTHING,
    LabelSelector,
    NodeSelector,
    NodeSelectorMatcher,
    PreferredSchedulingTerm,
    PreferredTermsScorer,
    selector_from,
)
from kschedlib.api.taints import find_untolerated_taint, tolerates


def ls(data: dict) -> LabelSelector:  # type: ignore[type-arg]
    return decode(LabelSelector, data)


def ns(data: dict) -> NodeSelector:  # type: ignore[type-arg]
    return decode(NodeSelector, data)


def test_empty_selector_matches_all_and_nil_matches_nothing() -> None:
    assert ls({}).matches({"a": "b"})
    assert ls({}).matches({})
    assert not selector_from(None).matches({})
    assert selector_from(None) is NOTHING


def test_label_selector_operators() -> None:
    sel = ls(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    base = {"app": "web", "tier": "a", "team": "x"}
    assert sel.matches(base)
    assert sel.matches({**base, "env": "dev"})
    assert not sel.matches({**base, "env": "prod"})
    assert not sel.matches({**base, "legacy": "1"})
    assert not sel.matches({k: v for k, v in base.items() if k != "team"})
    assert not sel.matches({**base, "tier": "c"})
    assert not sel.matches({**base, "app": "db"})


def test_node_selector_terms_or_and_expressions_and() -> None:
    m = NodeSelectorMatcher(
        ns(
            {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                                          {"key": "gpu", "operator": "Exists"}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]},
                ]
            }
        )
    )
    assert m.matches({"zone": "a", "gpu": "1"}, "n1")
    assert not m.matches({"zone": "a"}, "n1")
    assert m.matches({}, "n9")


def test_gt_lt_parse_integers_and_reject_non_numbers() -> None:
    m = NodeSelectorMatcher(
        ns({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "cores", "operator": "Gt", "values": ["4"]},
            {"key": "cores", "operator": "Lt", "values": ["16"]}]}]})
    )
    assert m.matches({"cores": "8"}, "n")
    assert not m.matches({"cores": "4"}, "n")
    assert not m.matches({"cores": "16"}, "n")
    assert not m.matches({"cores": "eight"}, "n")
    assert not m.matches({}, "n")


def test_empty_or_invalid_terms_match_nothing() -> None:
    assert not NodeSelectorMatcher(ns({"nodeSelectorTerms": [{}]})).matches({"a": "b"}, "n")
    bad = ns({"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]},
                                    {"matchExpressions": [{"key": "a", "operator": "Exists"}]}]})
    # The bad term is ignored, the good one still matches.
    assert NodeSelectorMatcher(bad).matches({"a": "1"}, "n")


def test_preferred_terms_sum_weights_of_matching_terms() -> None:
    terms = tuple(
        decode(PreferredSchedulingTerm, t)
        for t in [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}},
            {"weight": 3, "preference": {"matchExpressions": [{"key": "b", "operator": "Exists"}]}},
            {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}},
            {"weight": 7, "preference": {}},
        ]
    )
    scorer = PreferredTermsScorer(terms)
    assert scorer.score({"a": "1", "b": "2"}, "n") == 8
    assert scorer.score({"b": "2"}, "n") == 3
    assert scorer.score({}, "n") == 0


def test_toleration_rules() -> None:
    t = Taint(key="k", value="v", effect="NoSchedule")
    assert tolerates(Toleration(key="k", operator="Equal", value="v"), t)
    assert tolerates(Toleration(key="k", value="v"), t)  # "" means Equal
    assert not tolerates(Toleration(key="k", value="w"), t)
    assert tolerates(Toleration(operator="Exists"), t)  # empty key with Exists: everything
    assert not tolerates(Toleration(key="k", operator="Exists", effect="NoExecute"), t)
    assert tolerates(Toleration(key="k", operator="Exists", effect="NoSchedule"), t)
    taints = [t, Taint(key="p", effect="PreferNoSchedule")]
    assert find_untolerated_taint(taints, [], lambda x: x.effect != "PreferNoSchedule") == t
    assert find_untolerated_taint(taints, [Toleration(operator="Exists")]) is None


labels = st.dictionaries(st.sampled_from("abcde"), st.sampled_from(["1", "2", "3"]), max_size=5)
reqs = st.lists(
    st.tuples(
        st.sampled_from("abcde"),
        st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
        st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=3),
    ),
    max_size=4,
)


def _sel(rs: list) -> LabelSelector:  # type: ignore[type-arg]
    return ls({"matchExpressions": [
        {"key": k, "operator": op, **({"values": v} if op in ("In", "NotIn") else {})}
        for k, op, v in rs]})


@given(labels, reqs, reqs)
def test_selector_is_a_conjunction(lbls: dict, r1: list, r2: list) -> None:  # type: ignore[type-arg]
    """Matching both requirement lists at once equals matching each one."""
    both = _sel(r1 + r2).matches(lbls)
    assert both == (_sel(r1).matches(lbls) and _sel(r2).matches(lbls))


@given(labels, st.sampled_from("abcde"), st.lists(st.sampled_from(["1", "2", "3"]), min_size=1))
def test_in_and_notin_are_complements(lbls: dict, key: str, values: list) -> None:  # type: ignore[type-arg]
    a = _sel([(key, "In", values)]).matches(lbls)
    b = _sel([(key, "NotIn", values)]).matches(lbls)
    assert a != b
