"""DRADeviceBindingConditions at PreBind: the binding cycle parks the pod until the devices'
binding conditions are True in the claim's status.devices, fails on a binding-failure
condition or after the binding timeout (by the injected clock); gate off binds at once."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    AllocatedDeviceStatus,
    DeviceClass,
    DeviceCondition,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.errors import ConfigError
from kschedlib.framework.handle import FakeClock
from kschedlib.plugins.dynamicresources.dynamic_resources import new as new_plugin
from kschedlib.results import Outcome
from kschedlib.scheduler import Scheduler

DRIVER = "gpu.example.com"
GATES = {"DRADeviceBindingConditions": True}
CLAIM_KEY = "ns/c"


def _objects() -> list[Any]:
    gpu = DeviceClass.from_dict({
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    })
    slc = ResourceSlice.from_dict({"metadata": {"name": "s1"}, "spec": {
        "driver": DRIVER, "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "g0", "bindsToNode": True, "bindingConditions": ["attached"],
                     "bindingFailureConditions": ["attach-failed"]}],
    }})
    claim = ResourceClaim.from_dict({
        "metadata": {"name": "c", "namespace": "ns", "uid": "c"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
    })
    node = Node.from_dict({"metadata": {"name": "n1"},
                           "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
    return [node, gpu, slc, claim]


def _pod() -> Pod:
    return Pod.from_dict({
        "metadata": {"name": "p", "namespace": "ns", "uid": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
    })


def _scheduler(gates: dict[str, bool]) -> tuple[Scheduler, FakeClock]:
    clock = FakeClock()
    sched = Scheduler(clock=clock, feature_gates=gates)
    sched.apply(_objects())
    sched.add_pod(_pod())
    return sched, clock


def _claim(sched: Scheduler) -> ResourceClaim:
    claim = sched.objects.get_object("ResourceClaim", CLAIM_KEY)
    assert isinstance(claim, ResourceClaim)
    return claim


def _set_condition(sched: Scheduler, kind: str, status: str = "True", **extra: str) -> None:
    """The driver reports a device condition: an update of the claim's status.devices."""
    claim = _claim(sched)
    cond = DeviceCondition(type=kind, status=status, **extra)
    dev = AllocatedDeviceStatus(driver=DRIVER, pool="n1", device="g0", conditions=(cond,))
    sched.update_object(attrs.evolve(claim, status=attrs.evolve(claim.status, devices=(dev,))))


def _waits(sched: Scheduler) -> None:
    (first,) = sched.run()
    assert first.outcome == Outcome.Waiting and first.node == "n1"
    assert "waiting for binding conditions for device on node n1" in first.message
    claim = _claim(sched)  # allocated and reserved at once, stamped by the clock
    assert claim.status.allocation is not None
    assert claim.status.allocation.allocation_timestamp is not None
    assert [r.uid for r in claim.status.reserved_for] == ["p"]
    assert [p.key for p in sched.waiting_pods()] == ["ns/p"]
    assert sched.bound_pods() == []


def test_waits_then_binds_once_the_host_sets_the_condition() -> None:
    sched, clock = _scheduler(GATES)
    _waits(sched)
    clock.advance(30)
    assert sched.run() == []  # still waiting: nothing reported the condition
    _set_condition(sched, "attached", status="False")
    assert sched.run() == []
    _set_condition(sched, "attached")
    (done,) = sched.run()
    assert done.outcome == Outcome.Scheduled and done.node == "n1"
    assert [p.key for p in sched.bound_pods()] == ["ns/p"] and sched.waiting_pods() == []


def test_a_failure_condition_fails_the_binding_and_the_pod_retries() -> None:
    sched, _ = _scheduler(GATES)
    _waits(sched)
    _set_condition(sched, "attach-failed", reason="NoPath", message="fabric down")
    results = sched.run()
    failed = results[0]
    assert failed.outcome == Outcome.BindFailed and failed.node is None
    assert failed.message == (
        'running PreBind plugin "DynamicResources": '
        'claim c binding failed: reason=NoPath, message="fabric down"'
    )
    assert sched.bound_pods() == [] and sched.waiting_pods() == []
    # Unreserve took the pod out of reservedFor; the pod is pending with the reason.
    assert _claim(sched).status.reserved_for == ()
    assert [p.key for p in sched.pending_pods()] == ["ns/p"]
    events = [e for e in sched.events if e.reason == "FailedScheduling"]
    assert events and events[0].message == failed.message


def test_the_binding_timeout_fails_by_the_injected_clock() -> None:
    sched, clock = _scheduler(GATES)
    _waits(sched)
    clock.advance(599)
    assert sched.run() == []
    assert [p.key for p in sched.waiting_pods()] == ["ns/p"]
    clock.advance(1)
    results = sched.run()
    assert results[0].outcome == Outcome.BindFailed
    assert results[0].message == 'running PreBind plugin "DynamicResources": device binding timeout'
    assert sched.waiting_pods() == [] and sched.bound_pods() == []
    assert [p.key for p in sched.pending_pods()] == ["ns/p"]


def test_a_timed_out_allocation_is_deallocated_on_the_next_attempt() -> None:
    sched, clock = _scheduler(GATES)
    _waits(sched)
    first = _claim(sched).status.allocation
    clock.advance(600)
    sched.run()
    clock.advance(60)  # past the backoff: the next attempt finds the claim timed out
    dealloc, again = sched.run()
    assert dealloc.outcome == Outcome.Unschedulable
    assert "1 resourceclaim not available on the node" in dealloc.message
    assert "deallocation of ResourceClaim completed" in dealloc.message
    # The claim's update requeued the pod: allocated anew, it waits with a new timestamp.
    assert again.outcome == Outcome.Waiting
    second = _claim(sched).status.allocation
    assert first is not None and second is not None
    assert second.allocation_timestamp > first.allocation_timestamp


def _preallocated(gates: dict[str, bool]) -> Scheduler:
    """A claim allocated earlier whose result carries binding conditions (none True)."""
    sched, _ = _scheduler(gates)
    claim = _claim(sched)
    alloc = {"devices": {"results": [{
        "request": "gpu", "driver": DRIVER, "pool": "n1", "device": "g0",
        "bindingConditions": ["attached"], "bindingFailureConditions": ["attach-failed"]}]}}
    done = ResourceClaim.from_dict({**claim.to_dict(), "status": {"allocation": alloc}})
    sched.update_object(done)
    return sched


def test_gate_off_binds_at_once() -> None:
    gate_off, _ = _scheduler({})
    (r,) = gate_off.run()
    assert r.outcome == Outcome.Unschedulable  # devices with binding conditions: never picked
    sched = _preallocated({})
    (r,) = sched.run()
    assert r.outcome == Outcome.Scheduled and r.node == "n1"
    assert sched.waiting_pods() == []
    assert [x.uid for x in _claim(sched).status.reserved_for] == ["p"]
    on = _preallocated(GATES)  # the same claim with the gate on: PreBind waits
    (r,) = on.run()
    assert r.outcome == Outcome.Waiting


def test_binding_timeout_from_the_plugin_args() -> None:
    class _Handle:
        feature_gates = None

    plugin = new_plugin({"bindingTimeout": "1m30s"}, _Handle())
    assert plugin.binding_timeout == 90.0
    with pytest.raises(ConfigError, match="bindingTimeout"):
        new_plugin({"bindingTimeout": "soon"}, _Handle())


def test_a_pod_deleted_while_waiting_leaves_nothing_behind() -> None:
    sched, _ = _scheduler(GATES)
    _waits(sched)
    sched.delete_pod("ns/p")
    (ended,) = sched.run()
    assert ended.outcome == Outcome.BindFailed
    assert sched.waiting_pods() == [] and sched.assumed_pods() == []
    assert sched.pending_pods() == [] and _claim(sched).status.reserved_for == ()
