"""DynamicResources: pods without claims pass every point; claim lookup, events and hints."""

from __future__ import annotations

from typing import Any

from kschedlib.api.resource_v1 import ResourceClaim
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, EventResource, QueueingHint
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.plugins import dynamicresources as dra
from kschedlib.plugins.registry import in_tree_registry
from tests.plugins.test_volumes_fixtures import make_handle, node, pod


def _claim_object(name: str, ns: str = "default", allocated: bool = False) -> ResourceClaim:
    d: dict[str, Any] = {
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
    }
    if allocated:
        d["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "d", "pool": "n1", "device": "g0"}]}}}
    return ResourceClaim.from_dict(d)


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
    assert st is not None and st.reasons == ('could not find ResourceClaim "default/my-gpu"',)
    plugin, _ = _plugin(_claim_object("my-gpu"))
    assert plugin.pre_enqueue(p) is None
    _, st = plugin.pre_filter(CycleState(), p, [])
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ("request gpu: device class gpu does not exist",)


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
    allocated = _claim_object("other", allocated=True)
    freed = _claim_object("other")
    assert plugin.is_schedulable_after_claim_change(p, allocated, freed) == q
    assert plugin.is_schedulable_after_pod_change(p, None, p) == q
    assert plugin.is_schedulable_after_pod_change(p, None, pod("q", uid="u2")) == skip


def test_registered_without_args() -> None:
    spec = in_tree_registry()[dra.NAME]
    assert spec.args_type is None and spec.factory is dra.new


def _gpu_cluster() -> list[Any]:
    from kschedlib.api.objects import decode_any

    docs: list[dict[str, Any]] = [
        {"kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}},
        {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": [
            {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"kind": "ResourceSlice", "metadata": {"name": "n1-gpu"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
    ]
    for i in range(3):
        docs.append({"kind": "ResourceClaim",
                     "metadata": {"name": f"c{i}", "namespace": "default", "uid": f"c{i}"},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu", "allocationMode": "ExactCount",
                         "count": 1}}]}}})
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default",
                                                 "uid": f"p{i}"},
                     "spec": {"containers": [{"name": "c"}],
                              "resourceClaims": [{"name": "gpu",
                                                  "resourceClaimName": f"c{i}"}]}})
    return [decode_any(d) for d in docs]


def test_scheduler_allocates_distinct_devices_and_writes_claims() -> None:
    from kschedlib.framework.handle import FakeClock
    from kschedlib.results import Outcome
    from kschedlib.scheduler import Scheduler

    s = Scheduler(clock=FakeClock(), deterministic=True)
    s.apply(_gpu_cluster())
    results = {r.pod.metadata.name: r for r in s.run()}
    done = sorted(n for n, r in results.items() if r.outcome == Outcome.Scheduled)
    (left,) = [n for n, r in results.items() if r.outcome == Outcome.Unschedulable]
    assert len(done) == 2
    assert "1 cannot allocate all claims" in results[left].message
    devices = []
    for name in done:
        c = s.objects.get_object("ResourceClaim", f"default/c{name[1:]}")
        assert isinstance(c, ResourceClaim) and c.status.allocation is not None
        assert [r.uid for r in c.status.reserved_for] == [name]
        assert "resource.kubernetes.io/delete-protection" in c.metadata.finalizers
        devices.append(c.status.allocation.devices.results[0].device)
    assert sorted(devices) == ["gpu-0", "gpu-1"]
    # Freeing a claim (its pod is gone, the claim deallocated) lets the waiting pod in.
    first = s.objects.get_object("ResourceClaim", f"default/c{done[0][1:]}")
    assert isinstance(first, ResourceClaim)
    import attrs

    s.delete_pod(results[done[0]].pod)
    s.update_object(attrs.evolve(first, status=attrs.evolve(first.status, allocation=None,
                                                            reserved_for=())))
    again = s.schedule_pod(f"default/{left}")
    assert again is not None and again.outcome == Outcome.Scheduled


def test_pre_enqueue_gates_until_the_claim_exists_and_the_pod_names_it() -> None:
    import attrs

    from kschedlib.api.meta import OwnerReference
    from kschedlib.api.pod import PodResourceClaimStatus
    from kschedlib.framework.handle import FakeClock
    from kschedlib.results import Outcome
    from kschedlib.scheduler import Scheduler

    objs = _gpu_cluster()
    claims = {o.metadata.name: o for o in objs if isinstance(o, ResourceClaim)}
    pods = {o.metadata.name: o for o in objs if getattr(o, "kind", "") == "Pod"}
    rest = [o for o in objs if o.metadata.name not in claims and o.metadata.name not in pods]
    s = Scheduler(clock=FakeClock(), deterministic=True)
    s.apply(rest)
    # p0 names a claim that does not exist yet: held back by PreEnqueue, no cycle.
    s.add_pod(pods["p0"])
    assert s.run() == []
    s.add_object(claims["c0"])
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled and r.pod.metadata.name == "p0"
    # A pod whose claim comes from a template waits for status.resourceClaimStatuses.
    tpl = pod("t", uid="t", resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "x"}])
    s.add_pod(tpl)
    assert s.run() == []
    owned = attrs.evolve(claims["c1"], metadata=attrs.evolve(
        claims["c1"].metadata,
        owner_references=(OwnerReference(kind="Pod", name="t", uid="t", controller=True),)))
    s.add_object(owned)
    assert s.run() == []  # still no status entry naming the generated claim
    s.update_pod(attrs.evolve(tpl, status=attrs.evolve(tpl.status, resource_claim_statuses=(
        PodResourceClaimStatus(name="gpu", resource_claim_name="c1"),))))
    (r2,) = s.run()
    assert r2.outcome == Outcome.Scheduled and r2.pod.metadata.name == "t"


def test_device_class_update_is_seen_by_the_next_cycle() -> None:
    import attrs

    from kschedlib.api.objects import decode_any
    from kschedlib.api.resource_v1 import DeviceClass
    from kschedlib.framework.handle import FakeClock
    from kschedlib.results import Outcome
    from kschedlib.scheduler import Scheduler

    objs = [o for o in _gpu_cluster() if o.metadata.name not in ("c1", "c2", "p1", "p2")]
    picky = decode_any({"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {
        "selectors": [{"cel": {"expression": 'device.driver == "other.example.com"'}}]}})
    objs = [picky if isinstance(o, DeviceClass) else o for o in objs]
    clock = FakeClock()
    s = Scheduler(clock=clock, deterministic=True)
    s.apply(objs)
    (r,) = s.run()
    assert r.outcome == Outcome.Unschedulable and "cannot allocate all claims" in r.message
    fixed = attrs.evolve(picky, spec=attrs.evolve(picky.spec, selectors=(
        attrs.evolve(picky.spec.selectors[0], cel=attrs.evolve(
            picky.spec.selectors[0].cel, expression='device.driver == "gpu.example.com"')),)))
    s.update_object(fixed)  # a DeviceClass update requeues the pod (after its backoff)
    clock.advance(30)
    (r2,) = s.run()
    assert r2.outcome == Outcome.Scheduled
