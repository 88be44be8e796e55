"""Device-taint eviction (DRADeviceTaints): a NoExecute taint on an allocated device evicts
the pods using it, at once or after the allocation's tolerationSeconds, by the clock."""

from __future__ import annotations

from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kschedlib.framework.handle import FakeClock
from kschedlib.scheduler import Scheduler

DRIVER = "gpu.example.com"


def _claim_and_pod(name: str, tolerations: list[dict[str, Any]] | None = None) -> tuple[
        ResourceClaim, Pod]:
    ex: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if tolerations:
        ex["tolerations"] = tolerations
    claim = ResourceClaim.from_dict({
        "metadata": {"name": name, "namespace": "ns", "uid": f"c-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}},
    })
    pod = Pod.from_dict({
        "metadata": {"name": name, "namespace": "ns", "uid": f"p-{name}"},
        "spec": {"containers": [{"name": "c"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]},
    })
    return claim, pod


def _cluster(gates: dict[str, bool]) -> Scheduler:
    s = Scheduler(clock=FakeClock(), feature_gates=gates)
    s.add_node(Node.from_dict({"metadata": {"name": "n1"}, "status": {"allocatable": {
        "cpu": "8", "memory": "8Gi", "pods": "10"}}}))
    s.add_object(DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}))
    s.add_object(ResourceSlice.from_dict({"metadata": {"name": "s"}, "spec": {
        "driver": DRIVER, "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "g0"}, {"name": "g1"}, {"name": "g2"}]}}))
    return s


DRAIN = DeviceTaintRule.from_dict({"metadata": {"name": "drain"}, "spec": {
    "deviceSelector": {"driver": DRIVER, "pool": "n1"},
    "taint": {"key": "example.com/drain", "effect": "NoExecute"}}})


def test_no_execute_device_taint_evicts_by_tolerations() -> None:
    s = _cluster({"DRADeviceTaints": True, "DRADeviceTaintRules": True})
    short = [{"key": "example.com/drain", "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": 60}]
    forever = [{"key": "example.com/drain", "operator": "Exists"}]
    for name, tol in (("plain", None), ("short", short), ("forever", forever)):
        claim, pod = _claim_and_pod(name, tol)
        s.add_object(claim)
        s.add_pod(pod)
    assert all(r.node == "n1" for r in s.run())
    assert s.eviction.tick() == []
    s.add_object(DRAIN)
    s.eviction.tick()
    assert [e.pod.metadata.name for e in s.eviction.device_taint_evictions] == ["plain"]
    assert "does not tolerate the NoExecute device taint example.com/drain:NoExecute" in (
        s.eviction.device_taint_evictions[0].reason)
    s.clock.advance(59)
    s.eviction.tick()
    assert s.eviction.device_taint_evictions == []
    s.clock.advance(1)
    s.eviction.tick()
    assert [e.pod.metadata.name for e in s.eviction.device_taint_evictions] == ["short"]
    s.clock.advance(3600)
    s.eviction.tick()
    assert s.eviction.device_taint_evictions == []
    assert any(e.reason == "DeviceTaintManagerEviction" for e in s.eviction.events)


def test_gate_off_ignores_device_taints() -> None:
    s = _cluster({})
    claim, pod = _claim_and_pod("plain")
    s.add_object(claim)
    s.add_pod(pod)
    s.run()
    s.add_object(DRAIN)
    s.eviction.tick()
    assert s.eviction.device_taint_evictions == []
    assert [p.metadata.name for p in s.bound_pods()] == ["plain"]
