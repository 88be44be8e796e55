"""DRA's alpha features, each switched by its feature gate (v1.35 defaults: off):
partitionable devices, consumable capacity, device taints and taint rules, binding
conditions, extended resources; AdminAccess off; the allocator's validation errors."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.framework.handle import FakeClock
from kschedlib.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    Features,
    SliceIndex,
)
from kschedlib.plugins.dynamicresources.extended import create_requests, device_class_mapping
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache
from kschedlib.results import Outcome
from kschedlib.scheduler import Scheduler

DRIVER = "gpu.example.com"
GPU = DeviceClass.from_dict({
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
})
NODE = Node.from_dict({"metadata": {"name": "n1"}})


def _slice(devices: list[dict[str, Any]], name: str = "s1", **spec: Any) -> ResourceSlice:
    body: dict[str, Any] = {
        "driver": DRIVER, "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "n1", "devices": devices, **spec,
    }
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": body})


def _claim(*requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None,
           name: str = "c") -> ResourceClaim:
    return ResourceClaim.from_dict({
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {"devices": {"requests": list(requests), "constraints": constraints or []}},
    })


def _req(name: str = "gpu", count: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                      "count": count, **extra}}


def _alloc(slices: list[ResourceSlice], fts: Features, *claims: ResourceClaim,
           rules: tuple[DeviceTaintRule, ...] = (), allocated: set[Any] | None = None,
           capacity: dict[Any, Any] | None = None) -> list[Any] | None:
    a = Allocator(fts, allocated or set(), {"gpu": GPU}.get, SliceIndex(slices, fts),
                  SelectorCache(), allocated_capacity=capacity, taint_rules=rules)
    return a.allocate(NODE, list(claims))


def _devices(result: list[Any] | None) -> list[list[str]]:
    assert result is not None
    return [[r.device for r in a.devices.results] for a in result]


# ------------------------------------------------------------------ partitionable devices

MIG = [
    {"name": "full", "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"mem": {"value": "80Gi"}}}]},
    {"name": "half-0", "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"mem": {"value": "40Gi"}}}]},
    {"name": "half-1", "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"mem": {"value": "40Gi"}}}]},
]
COUNTERS = {"sharedCounters": [{"name": "gpu-0", "counters": {"mem": {"value": "80Gi"}}}]}


def _mig_slices() -> list[ResourceSlice]:
    pool = {"name": "n1", "generation": 1, "resourceSliceCount": 2}
    return [
        _slice([], name="a-counters", pool=pool, **COUNTERS),
        _slice(MIG, name="b-devices", pool=pool),
    ]


def test_counters_limit_partitions_and_gate_off_never_allocates_them() -> None:
    on = Features(partitionable_devices=True)
    # One claim: the full device comes first. Two claims: the full device leaves no counters
    # for the second, so the search backtracks to the two halves.
    assert _devices(_alloc(_mig_slices(), on, _claim(_req()))) == [["full"]]
    got = _alloc(_mig_slices(), on, _claim(_req(), name="a"), _claim(_req(), name="b"))
    assert _devices(got) == [["half-0"], ["half-1"]]
    two = _alloc(_mig_slices(), on, _claim(_req(count=2)))
    assert _devices(two) == [["half-0", "half-1"]]
    three = _alloc(_mig_slices(), on, _claim(_req(count=3)))
    assert three is None
    # Counters already consumed by an allocated device count.
    after_full = _alloc(_mig_slices(), on, _claim(_req()),
                        allocated={(DRIVER, "n1", "full")})
    assert after_full is None
    assert _alloc(_mig_slices(), Features(), _claim(_req())) is None


def test_per_device_node_selection() -> None:
    devs = [
        {"name": "local-other", "nodeName": "n2"},
        {"name": "everywhere", "allNodes": True},
    ]
    s = ResourceSlice.from_dict({"metadata": {"name": "s"}, "spec": {
        "driver": DRIVER, "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
        "perDeviceNodeSelection": True, "devices": devs}})
    on = Features(partitionable_devices=True)
    got = _alloc([s], on, _claim(_req()))
    assert _devices(got) == [["everywhere"]]
    assert got is not None and got[0].node_selector is None
    assert _alloc([s], Features(), _claim(_req())) is None


# ------------------------------------------------------------------ consumable capacity

NIC = {"name": "nic", "allowMultipleAllocations": True, "capacity": {"bw": {
    "value": "100G", "requestPolicy": {"default": "25G", "validValues": ["10G", "25G", "50G",
                                                                           "100G"]}}}}


def test_shared_device_capacity_rounding_and_accounting() -> None:
    on = Features(consumable_capacity=True)
    got = _alloc([_slice([NIC])], on,
                 _claim(_req(capacity={"requests": {"bw": "12G"}}), name="a"),
                 _claim(_req(), name="b"))
    assert got is not None
    ra, rb = got[0].devices.results[0], got[1].devices.results[0]
    assert (ra.device, rb.device) == ("nic", "nic")
    assert str(ra.consumed_capacity["bw"]) == "25G"  # rounded up to a valid value
    assert str(rb.consumed_capacity["bw"]) == "25G"  # the default
    assert ra.share_id and rb.share_id and ra.share_id != rb.share_id
    # 60G already used: 50G does not fit any more, 25G does.
    used = {(DRIVER, "n1", "nic"): {"bw": 60 * 10**9}}
    assert _alloc([_slice([NIC])], on, _claim(_req(capacity={"requests": {"bw": "50G"}})),
                  capacity=used) is None
    assert _alloc([_slice([NIC])], on, _claim(_req()), capacity=used) is not None


def test_shared_device_is_exclusive_with_the_gate_off() -> None:
    got = _alloc([_slice([NIC])], Features(), _claim(_req(), name="a"), _claim(_req(), name="b"))
    assert got is None


def test_distinct_attribute() -> None:
    devs = [{"name": f"g{i}", "allowMultipleAllocations": True,
             "attributes": {"numa": {"int": i // 2}}} for i in range(4)]
    on = Features(consumable_capacity=True)
    same = _alloc([_slice(devs)], on, _claim(_req(count=2)))
    assert _devices(same) == [["g0", "g0"]]
    distinct = _alloc([_slice(devs)], on, _claim(
        _req(count=2), constraints=[{"distinctAttribute": "numa"}]))
    assert _devices(distinct) == [["g0", "g2"]]


# ------------------------------------------------------------------ device taints

TAINTED = [
    {"name": "bad", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    {"name": "ok", "taints": [{"key": "info", "effect": "None"}]},
]


def test_taints_need_tolerations_with_the_gate_on() -> None:
    on = Features(device_taints=True)
    assert _devices(_alloc([_slice(TAINTED)], on, _claim(_req(count=1)))) == [["ok"]]
    assert _alloc([_slice(TAINTED)], on, _claim(_req(count=2))) is None
    tol = [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]
    assert _devices(_alloc([_slice(TAINTED)], on, _claim(_req(count=2, tolerations=tol)))) == [
        ["bad", "ok"]]
    # Gate off: taints are ignored.
    assert _devices(_alloc([_slice(TAINTED)], Features(), _claim(_req(count=2)))) == [
        ["bad", "ok"]]


def test_taint_rules_add_taints() -> None:
    rule = DeviceTaintRule.from_dict({"metadata": {"name": "r"}, "spec": {
        "deviceSelector": {"driver": DRIVER, "pool": "n1", "device": "g0"},
        "taint": {"key": "drain", "effect": "NoExecute"}}})
    devs = [{"name": "g0"}, {"name": "g1"}]
    on = Features(device_taints=True, device_taint_rules=True)
    assert _devices(_alloc([_slice(devs)], on, _claim(_req()), rules=(rule,))) == [["g1"]]
    tol = [{"key": "drain", "operator": "Exists"}]
    assert _devices(_alloc([_slice(devs)], on, _claim(_req(tolerations=tol)),
                           rules=(rule,))) == [["g0"]]


# ------------------------------------------------------------------ binding conditions


def test_devices_with_binding_conditions_need_the_gate() -> None:
    devs = [{"name": "g0", "bindingConditions": ["ready"], "bindingFailureConditions": ["bad"],
             "bindsToNode": True}]
    assert _alloc([_slice(devs)], Features(), _claim(_req())) is None
    got = _alloc([_slice(devs)], Features(device_binding_conditions=True), _claim(_req()))
    assert got is not None
    r = got[0].devices.results[0]
    assert (r.binding_conditions, r.binding_failure_conditions) == (("ready",), ("bad",))


# ------------------------------------------------------------------ validation errors


@pytest.mark.parametrize(
    ("request_", "fts", "message"),
    [
        ({"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                     "count": 1, "selectors": [{}]}}, Features(),
         "claim ns/c, request gpu, selector #0: CEL expression empty (unsupported selector "
         "type?)"),
        ({"name": "gpu", "exactly": {"deviceClassName": "", "allocationMode": "ExactCount",
                                     "count": 1}}, Features(),
         "claim ns/c, request gpu: missing device class name (unsupported request type?)"),
        (_req(adminAccess=True), Features(admin_access=False),
         "claim ns/c, request gpu: admin access is requested, but the feature is disabled"),
        (_req(capacity={"requests": {"bw": "1G"}}), Features(device_taints=True),
         "claim ns/c, request gpu: has capacity requests, but the DRAConsumableCapacity "
         "feature is disabled"),
    ],
)
def test_allocator_errors(request_: dict[str, Any], fts: Features, message: str) -> None:
    with pytest.raises(AllocationError) as err:
        _alloc([_slice([{"name": "g0"}])], fts, _claim(request_))
    assert str(err.value) == message


# ------------------------------------------------------------------ extended resources


def _pod(name: str, requests: dict[str, str], init: list[dict[str, Any]] | None = None) -> Pod:
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}],
                 "initContainers": init or []},
    })


def test_mapping_and_request_names() -> None:
    older = DeviceClass.from_dict({"metadata": {"name": "old", "creationTimestamp":
                                                "2025-01-01T00:00:00Z"},
                                   "spec": {"extendedResourceName": "example.com/gpu"}})
    newer = DeviceClass.from_dict({"metadata": {"name": "new", "creationTimestamp":
                                                "2025-02-01T00:00:00Z"},
                                   "spec": {"extendedResourceName": "example.com/gpu"}})
    mapping = device_class_mapping([older, newer])
    assert mapping["example.com/gpu"] == "new"
    assert mapping["deviceclass.resource.kubernetes.io/old"] == "old"
    pod = _pod("p", {"cpu": "1", "example.com/gpu": "1"},
               init=[{"name": "i", "resources": {"requests": {"example.com/gpu": "3"}}}])
    reqs, _ = create_requests(pod, ["example.com/gpu"], mapping)
    # The init container reuses the main container's device and asks for two more.
    assert [(r.name, r.exactly.count) for r in reqs if r.exactly] == [
        ("container-0-request-0", 2), ("container-1-request-1", 1)]


def _cluster(gates: dict[str, bool]) -> Scheduler:
    s = Scheduler({"percentageOfNodesToScore": 100}, clock=FakeClock(), deterministic=True,
                  feature_gates=gates)
    s.add_node(Node.from_dict({"metadata": {"name": "n1"}, "status": {"allocatable": {
        "cpu": "8", "memory": "8Gi", "pods": "10"}}}))
    s.add_object(DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {
        "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
        "extendedResourceName": "example.com/gpu"}}))
    s.add_object(_slice([{"name": "g0"}, {"name": "g1"}]))
    return s


def test_extended_resource_backed_by_dra() -> None:
    s = _cluster({"DRAExtendedResource": True})
    pod = _pod("p", {"cpu": "1", "example.com/gpu": "2"})
    s.add_pod(pod)
    r = s.schedule_pod(pod)
    assert r is not None and r.outcome == Outcome.Scheduled and r.node == "n1"
    claims = [c for c in s.objects.list_objects("ResourceClaim")
              if isinstance(c, ResourceClaim)]
    assert len(claims) == 1
    c = claims[0]
    assert c.metadata.name.startswith("p-extended-resources-") and len(c.metadata.name) == 26
    assert c.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] == "true"
    assert c.status.allocation is not None
    assert [d.device for d in c.status.allocation.devices.results] == ["g0", "g1"]
    assert [x.uid for x in c.status.reserved_for] == ["uid-p"]
    # No devices left: the next pod does not fit (DynamicResources says why).
    p2 = _pod("p2", {"example.com/gpu": "1"})
    s.add_pod(p2)
    r2 = s.schedule_pod(p2)
    assert r2 is not None and r2.outcome != Outcome.Scheduled
    assert "cannot allocate all claims" in (r2.message or "")


def test_extended_resource_gate_off_is_node_resources_fit() -> None:
    s = _cluster({})
    pod = _pod("p", {"example.com/gpu": "1"})
    s.add_pod(pod)
    r = s.schedule_pod(pod)
    assert r is not None and r.outcome != Outcome.Scheduled
    assert "Insufficient example.com/gpu" in (r.message or "")


def test_claim_hint_rejects_other_objects() -> None:
    from kschedlib.plugins.dynamicresources.dynamic_resources import DynamicResources

    class _Handle:
        objects = None

    plugin = DynamicResources(_Handle())
    with pytest.raises(TypeError, match="expected ResourceClaim, got dict"):
        plugin.is_schedulable_after_claim_change(_pod("p", {}), None, {"metadata": {}})


def test_class_configs_once_per_class_with_all_its_requests() -> None:
    dc = DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {
        "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
        "config": [{"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]}})
    claim = ResourceClaim.from_dict({
        "metadata": {"name": "c", "namespace": "ns", "uid": "c"},
        "spec": {"devices": {
            "requests": [_req("a"), _req("b")],
            "config": [{"requests": ["a", "b"], "opaque": {"driver": DRIVER, "parameters": {}}}],
        }},
    })
    a = Allocator(Features(), set(), {"gpu": dc}.get, SliceIndex([_slice(
        [{"name": "g0"}, {"name": "g1"}])], Features()), SelectorCache())
    got = a.allocate(NODE, [claim])
    assert got is not None
    configs = got[0].devices.config
    assert [(c.source, c.requests) for c in configs] == [
        ("FromClass", ("a", "b")),
        # v1.35 writes a claim config once per request it names.
        ("FromClaim", ("a", "b")), ("FromClaim", ("a", "b")),
    ]
