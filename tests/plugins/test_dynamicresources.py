"""DynamicResources: pods without claims pass every point; pods with claims are rejected."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kschedlib.api.meta import ObjectMeta
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, EventResource, QueueingHint
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.plugins import dynamicresources as dra
from kschedlib.plugins.registry import in_tree_registry
from tests.plugins.test_volumes_fixtures import make_handle, node, pod


def _claim_object(name: str, ns: str = "default", **status: Any) -> SimpleNamespace:
    """A ResourceClaim stand-in (the API models have none) the ObjectStore accepts."""
    return SimpleNamespace(
        kind="ResourceClaim", metadata=ObjectMeta(name=name, namespace=ns), status=status
    )


def _plugin(*objects: Any) -> tuple[dra.DynamicResources, Any]:
    h = make_handle([node("n1"), node("n2")], objects=list(objects))
    return dra.new(None, h), h


def test_pod_without_claims() -> None:
    plugin, h = _plugin()
    p = pod("p")
    cs = CycleState()
    assert plugin.pre_enqueue(p) is None
    _, st = plugin.pre_filter(cs, p, [])
    assert st is not None and st.is_skip()
    assert isinstance(cs.read(dra.STATE_KEY), dra.StateData)
    ni = h.snapshot_shared_lister().node_infos().get("n1")
    assert plugin.filter(cs, p, ni) is None
    assert plugin.score(cs, p, ni) == (0, None)
    scores = [NodeScore("n1", 0), NodeScore("n2", 0)]
    assert plugin.score_extensions().normalize_score(cs, p, scores) is None
    assert [s.score for s in scores] == [0, 0]
    _, post = plugin.post_filter(cs, p, None)  # type: ignore[arg-type]
    assert post is not None and post.code == Code.Unschedulable
    assert post.reasons == (dra.MSG_NO_CLAIMS_TO_DEALLOCATE,) and post.plugin == dra.NAME
    assert plugin.reserve(cs, p, "n1") is None
    plugin.unreserve(cs, p, "n1")
    pre = plugin.pre_bind_pre_flight(cs, p, "n1")
    assert pre is not None and pre.is_skip()
    assert plugin.pre_bind(cs, p, "n1") is None


def test_state_missing_when_an_earlier_pre_filter_failed() -> None:
    plugin, h = _plugin()
    cs = CycleState()
    _, post = plugin.post_filter(cs, pod("p"), None)  # type: ignore[arg-type]
    assert post is not None and post.code == Code.Error and post.message() == "not found"
    ni = h.snapshot_shared_lister().node_infos().get("n1")
    score, st = plugin.score(cs, pod("p"), ni)
    assert score == 0 and st is not None and st.code == Code.Error
    st2 = plugin.filter(cs, pod("p"), ni)
    assert st2 is not None and st2.code == Code.Error


def test_claims_from_templates_are_not_created_yet() -> None:
    plugin, _ = _plugin()
    p = pod("p", resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "tpl"}])
    msg = 'pod "default/p": ResourceClaim not created yet'
    pre = plugin.pre_enqueue(p)
    assert pre is not None and pre.code == Code.UnschedulableAndUnresolvable
    assert pre.reasons == (msg,)
    cs = CycleState()
    _, st = plugin.pre_filter(cs, p, [])
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == (msg,)
    _, post = plugin.post_filter(cs, p, None)  # type: ignore[arg-type]
    assert post is not None and post.reasons == (dra.MSG_NO_CLAIMS_TO_DEALLOCATE,)


def test_named_claims() -> None:
    p = pod("p", resource_claims=[{"name": "gpu", "resourceClaimName": "my-gpu"}])
    plugin, _ = _plugin()
    _, st = plugin.pre_filter(CycleState(), p, [])
    assert st is not None and st.reasons == ('resourceclaim.resource.k8s.io "my-gpu" not found',)
    plugin, _ = _plugin(_claim_object("my-gpu"))
    assert plugin.pre_enqueue(p) is None
    _, st = plugin.pre_filter(CycleState(), p, [])
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == (dra.MSG_ALLOCATION_UNSUPPORTED,)


def test_events_and_hints() -> None:
    plugin, _ = _plugin(_claim_object("my-gpu"))
    events = plugin.events_to_register()
    assert [e.event.resource for e in events] == [
        EventResource.Node,
        EventResource.ResourceClaim,
        EventResource.Pod,
        EventResource.DeviceClass,
        EventResource.ResourceSlice,
    ]
    assert events[0].event.action_type == (
        ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
    )
    p = pod("p", uid="u1", resource_claims=[{"name": "gpu", "resourceClaimName": "my-gpu"}])
    q, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    mine, other = _claim_object("my-gpu"), _claim_object("other")
    assert plugin.is_schedulable_after_claim_change(p, None, mine) == q
    assert plugin.is_schedulable_after_claim_change(p, None, other) == skip
    assert plugin.is_schedulable_after_claim_change(p, mine, mine) == skip
    allocated = _claim_object("other", allocation={"devices": []})
    freed = _claim_object("other", allocation=None)
    assert plugin.is_schedulable_after_claim_change(p, allocated, freed) == q
    assert plugin.is_schedulable_after_pod_change(p, None, p) == q
    assert plugin.is_schedulable_after_pod_change(p, None, pod("q", uid="u2")) == skip


def test_registered_without_args() -> None:
    spec = in_tree_registry()[dra.NAME]
    assert spec.args_type is None and spec.factory is dra.new
