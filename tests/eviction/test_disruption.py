"""The Eviction subresource's answers, case by case (registry/core/pod/storage/eviction.go)."""

from __future__ import annotations

from typing import Any

from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.eviction import evaluate_eviction
from tests.eviction.util import pod

NOW = 1_700_000_000.0


def pdb(name: str = "web", *, allowed: int = 1, current: int = 3, desired: int = 2,
        labels: dict[str, str] | None = None, policy: str | None = None, generation: int = 1,
        observed: int = 1, namespace: str = "default") -> PodDisruptionBudget:
    spec: dict[str, Any] = {"selector": {"matchLabels": labels if labels is not None else {"app": "web"}},
                            "minAvailable": desired}
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    return PodDisruptionBudget.from_dict({
        "metadata": {"name": name, "namespace": namespace, "generation": generation},
        "spec": spec,
        "status": {"observedGeneration": observed, "disruptionsAllowed": allowed,
                   "currentHealthy": current, "desiredHealthy": desired, "expectedPods": 3},
    })


WEB = {"app": "web"}


def test_no_pdb_allows_and_deletes_with_the_pods_grace_period() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB, tgps=45), [], NOW)
    assert (r.code, r.deleted, r.grace_period_seconds, updated) == (200, True, 45, None)
    r, _ = evaluate_eviction(pod("a", labels=WEB), [], NOW, grace_period_seconds=5)
    assert r.grace_period_seconds == 5
    r, _ = evaluate_eviction(pod("a", labels=WEB), [], NOW)
    assert r.grace_period_seconds == 30


def test_allowed_disruption_decrements_the_budget() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB), [pdb(allowed=2)], NOW)
    assert r.code == 200 and r.pdb == "web"
    assert updated is not None and updated.status.disruptions_allowed == 1
    assert "a" in updated.status.disrupted_pods


def test_dry_run_leaves_the_budget_alone() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB), [pdb(allowed=2)], NOW, dry_run=True)
    assert r.code == 200 and not r.deleted and updated is None


def test_exhausted_budget_is_429_with_the_api_servers_message() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB), [pdb(allowed=0, current=2, desired=2)], NOW)
    assert (r.code, r.reason, updated) == (429, "TooManyRequests", None)
    assert r.message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert r.causes == ("The disruption budget web needs 2 healthy pods and has 2 currently",)


def test_stale_budget_status_is_429() -> None:
    r, _ = evaluate_eviction(pod("a", labels=WEB), [pdb(generation=3, observed=2)], NOW)
    assert r.code == 429
    assert r.causes == ("The disruption budget web is still being processed by the server.",)
    assert r.retry_after_seconds == 10


def test_negative_budget_is_forbidden() -> None:
    r, _ = evaluate_eviction(pod("a", labels=WEB), [pdb(allowed=-1)], NOW)
    assert r.code == 403
    assert r.message.endswith("pdb disruptions allowed is negative")


def test_several_pdbs_is_500() -> None:
    r, _ = evaluate_eviction(pod("a", labels=WEB), [pdb("one"), pdb("two")], NOW)
    assert r.code == 500
    assert r.message == ("This pod has more than one PodDisruptionBudget, which the eviction "
                         "subresource does not support.")


def test_pdbs_of_other_namespaces_and_missing_selectors_do_not_apply() -> None:
    no_selector = PodDisruptionBudget.from_dict({
        "metadata": {"name": "nothing", "namespace": "default"}, "spec": {"minAvailable": 2},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 3, "desiredHealthy": 2},
    })
    pdbs = [pdb("other-ns", allowed=0, namespace="prod"), no_selector]
    r, _ = evaluate_eviction(pod("a", labels=WEB), pdbs, NOW)
    assert r.code == 200 and r.pdb == ""


def test_an_empty_selector_selects_every_pod_of_the_namespace() -> None:
    """policy/v1: ``selector: {}`` covers the whole namespace, for the Eviction API as for the
    disruption controller's status (kubernetes PR 119732; v1beta1 matched nothing)."""
    from kschedlib.eviction.disruption import pdb_pods

    everything = pdb("everything", allowed=0, labels={})
    r, updated = evaluate_eviction(pod("a", labels={"any": "thing"}), [everything], NOW)
    assert (r.code, r.pdb, updated) == (429, "everything", None)
    assert r.causes == ("The disruption budget everything needs 2 healthy pods and has 3 currently",)
    assert [p.metadata.name for p in pdb_pods(everything, [pod("a"), pod("b", labels=WEB)])] == [
        "a", "b",
    ]


def test_unready_pod_with_a_healthy_budget_is_deleted_without_a_disruption() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB, ready=False),
                                   [pdb(allowed=0, current=3, desired=2)], NOW)
    assert r.code == 200 and updated is None


def test_unready_pod_with_an_unhealthy_budget_is_refused_by_default() -> None:
    for policy in (None, "IfHealthyBudget"):
        r, _ = evaluate_eviction(pod("a", labels=WEB, ready=False),
                                 [pdb(allowed=0, current=1, desired=2, policy=policy)], NOW)
        assert r.code == 429


def test_unready_pod_always_allowed_by_policy() -> None:
    r, updated = evaluate_eviction(pod("a", labels=WEB, ready=False),
                                   [pdb(allowed=0, current=1, desired=2, policy="AlwaysAllow")], NOW)
    assert r.code == 200 and updated is None
    # a Ready pod is still guarded
    r, _ = evaluate_eviction(pod("b", labels=WEB),
                             [pdb(allowed=0, current=1, desired=2, policy="AlwaysAllow")], NOW)
    assert r.code == 429


def test_pending_terminal_and_terminating_pods_ignore_pdbs() -> None:
    budget = [pdb(allowed=0)]
    pending = pod("p", labels=WEB, node_name="", phase="Pending")
    r, _ = evaluate_eviction(pending, budget, NOW)
    assert r.code == 200 and r.grace_period_seconds == 0   # unscheduled: deleted at once
    failed = pod("f", labels=WEB, phase="Failed")
    r, _ = evaluate_eviction(failed, budget, NOW)
    assert r.code == 200 and r.grace_period_seconds == 0
    import datetime as dt

    import attrs
    p = pod("t", labels=WEB)
    terminating = attrs.evolve(p, metadata=attrs.evolve(
        p.metadata, deletion_timestamp=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)))
    r, _ = evaluate_eviction(terminating, budget, NOW)
    assert r.code == 200


def _owned(name: str, owner: str, ready: bool = True, **kw: Any) -> Any:
    import attrs

    p = pod(name, labels=WEB, ready=ready, **kw)
    refs = (attrs.evolve(p.metadata.owner_references[0], name=owner, uid=f"uid-{owner}"),)
    return attrs.evolve(p, metadata=attrs.evolve(p.metadata, owner_references=refs))


def test_disruption_controller_status_with_an_integer_min_available() -> None:
    from kschedlib.eviction import pdb_status

    pods = [_owned("a", "rs"), _owned("b", "rs"), _owned("c", "rs", ready=False)]
    budget = pdb(allowed=0, current=0, desired=2, generation=4, observed=1)  # minAvailable: 2
    new = pdb_status(budget, pods, NOW)
    st = new.status
    assert (st.expected_pods, st.desired_healthy, st.current_healthy, st.disruptions_allowed) == (3, 2, 2, 0)
    assert st.observed_generation == 4
    more = pdb_status(budget, [*pods, _owned("d", "rs")], NOW).status
    assert (more.current_healthy, more.disruptions_allowed) == (3, 1)


def test_disruption_controller_percentages_use_the_controllers_scale() -> None:
    from kschedlib.api.workloads import PodDisruptionBudget
    from kschedlib.eviction import pdb_status

    budget = PodDisruptionBudget.from_dict({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": WEB}, "maxUnavailable": "25%"}})
    pods = [_owned(f"p{i}", "rs") for i in range(3)]
    st = pdb_status(budget, pods, NOW).status            # scale = 3 pods: ceil(0.75) = 1
    assert (st.expected_pods, st.desired_healthy, st.disruptions_allowed) == (3, 2, 1)
    st = pdb_status(budget, pods, NOW, lambda p: ("uid-rs", 8)).status   # scale 8: 2 may go
    assert (st.expected_pods, st.desired_healthy, st.disruptions_allowed) == (8, 6, 0)


def test_recently_disrupted_pods_do_not_count_as_healthy_until_the_deletion_timeout() -> None:
    from kschedlib.eviction import pdb_status

    pods = [_owned("a", "rs"), _owned("b", "rs"), _owned("c", "rs")]
    r, taken = evaluate_eviction(pods[0], [pdb(allowed=1, current=3, desired=2)], NOW)
    assert r.code == 200 and taken is not None
    st = pdb_status(taken, pods, NOW + 60).status   # "a" was not deleted (yet)
    assert (st.current_healthy, st.disruptions_allowed, list(st.disrupted_pods)) == (2, 0, ["a"])
    st = pdb_status(taken, pods, NOW + 121).status  # past DeletionTimeout: counted again
    assert (st.current_healthy, st.disruptions_allowed, st.disrupted_pods) == (3, 1, {})
