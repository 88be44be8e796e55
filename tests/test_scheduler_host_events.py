"""Host events: unknown pods and nodes behave alike (update adds, delete is ignored, as
kube-scheduler's event handlers do), duplicate pending names are an error naming both, and
Kubernetes JSON dicts are accepted wherever a Pod or Node is."""

from __future__ import annotations

import pytest

from kschedlib.errors import CacheError, InvalidObjectError
from kschedlib.results import Outcome
from tests.builders import new_scheduler, node, node_dict, pod, pod_dict


def test_update_of_unknown_node_adds_it_like_an_unknown_pod() -> None:
    s = new_scheduler()
    s.update_node(node("n1"))
    assert s.cache.node_names() == ["n1"]
    s.update_pod(pod("p"))
    assert [p.key for p in s.pending_pods()] == ["default/p"]
    [r] = s.run()
    assert r.outcome == Outcome.Scheduled and r.node == "n1"


def test_delete_of_unknown_node_or_pod_is_ignored_and_changes_nothing() -> None:
    s = new_scheduler()
    s.add_node(node("n1"))
    s.add_pod(pod("p"))
    s.delete_node("ghost")
    s.delete_node(node("ghost2"))
    s.delete_pod("default/ghost")
    s.delete_pod(pod("ghost"))
    assert s.cache.node_names() == ["n1"]
    assert [p.key for p in s.pending_pods()] == ["default/p"]
    s.delete_node("n1")
    s.delete_node("n1")  # twice: the second is an unknown node
    assert s.cache.node_names() == []


def test_second_pending_pod_with_same_name_other_uid_is_an_error_naming_both() -> None:
    s = new_scheduler()
    s.add_pod(pod("p", uid="uid-1"))
    with pytest.raises(CacheError) as exc:
        s.add_pod(pod("p", uid="uid-2"))
    assert "uid-1" in str(exc.value) and "uid-2" in str(exc.value)
    assert [p.uid for p in s.pending_pods()] == ["uid-1"]
    s.delete_pod("default/p")
    s.add_pod(pod("p", uid="uid-2"))  # the name is free again
    assert [p.uid for p in s.pending_pods()] == ["uid-2"]


def test_dicts_are_accepted_for_pods_and_nodes() -> None:
    s = new_scheduler()
    s.add_node(node_dict("n1"))
    s.add_pod(pod_dict("p"))
    s.update_node(node_dict("n1", cpu="8"))
    s.update_pod(pod_dict("p", cpu="200m"))
    [r] = s.run()
    assert r.outcome == Outcome.Scheduled
    s.delete_pod(pod_dict("p"))
    s.delete_node(node_dict("n1"))
    assert s.cache.node_names() == []


def test_wrong_argument_type_says_what_to_pass() -> None:
    s = new_scheduler()
    with pytest.raises(InvalidObjectError, match="expected a Pod or a Pod's Kubernetes JSON"):
        s.add_pod(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidObjectError, match="expected a Node"):
        s.add_node("n1")  # type: ignore[arg-type]
