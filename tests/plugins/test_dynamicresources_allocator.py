"""The structured allocator: search order, exclusions, modes, constraints, subrequests,
admin access, node selectors, pool generations and errors."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import DeviceClass, ResourceClaim, ResourceSlice
from kschedlib.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    DeviceID,
    Features,
    SliceIndex,
)
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache

DRIVER = "gpu.example.com"
GPU_CLASS = DeviceClass.from_dict({
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
})


def _node(name: str, labels: dict[str, str] | None = None) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels or {}}})


def _device(name: str, **attrs: Any) -> dict[str, Any]:
    typed = {}
    for k, v in attrs.items():
        kind = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "string"
        typed[k] = {kind: v}
    return {"name": name, "attributes": typed}


def _slice(
    name: str, devices: list[dict[str, Any]], *, node: str | None = None, pool: str = "",
    generation: int = 1, count: int = 1, selector: dict[str, Any] | None = None,
    all_nodes: bool = False,
) -> ResourceSlice:
    spec: dict[str, Any] = {
        "driver": DRIVER,
        "pool": {"name": pool or node or name, "generation": generation,
                 "resourceSliceCount": count},
        "devices": devices,
    }
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    if all_nodes:
        spec["allNodes"] = True
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": spec})


def _claim(requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
           name: str = "c") -> ResourceClaim:
    return ResourceClaim.from_dict({
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {"devices": {"requests": requests, "constraints": constraints or []}},
    })


def _exact(name: str = "gpu", count: int = 1, mode: str = "ExactCount", **extra: Any) -> dict[str, Any]:
    ex: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": mode, **extra}
    if mode == "ExactCount":
        ex["count"] = count
    return {"name": name, "exactly": ex}


def _allocator(slices: list[ResourceSlice], allocated: set[DeviceID] | None = None,
               classes: tuple[DeviceClass, ...] = (GPU_CLASS,)) -> Allocator:
    by_name = {c.metadata.name: c for c in classes}
    return Allocator(Features(), allocated or set(), by_name.get,
                     SliceIndex(slices, Features()), SelectorCache())


def _devices(result: Any) -> list[tuple[str, str]]:
    return [(r.request, r.device) for r in result.devices.results]


FOUR = [_slice("n1-gpus", [_device(f"g{i}", numa=i // 2) for i in range(4)], node="n1")]


def test_exact_count_takes_devices_in_slice_order_and_skips_allocated() -> None:
    a = _allocator(FOUR, allocated={(DRIVER, "n1", "g0")})
    out = a.allocate(_node("n1"), [_claim([_exact(count=2)])])
    assert out is not None
    assert _devices(out[0]) == [("gpu", "g1"), ("gpu", "g2")]
    sel = out[0].node_selector
    assert sel is not None
    f = sel.node_selector_terms[0].match_fields[0]
    assert (f.key, f.operator, f.values) == ("metadata.name", "In", ("n1",))


def test_not_enough_devices_or_wrong_node() -> None:
    a = _allocator(FOUR)
    assert a.allocate(_node("n1"), [_claim([_exact(count=5)])]) is None
    assert a.allocate(_node("n2"), [_claim([_exact()])]) is None


def test_two_claims_never_share_a_device() -> None:
    a = _allocator(FOUR)
    out = a.allocate(_node("n1"), [_claim([_exact(count=3)], name="a"),
                                   _claim([_exact()], name="b")])
    assert out is not None
    assert _devices(out[1]) == [("gpu", "g3")]


def test_allocation_mode_all() -> None:
    a = _allocator(FOUR)
    out = a.allocate(_node("n1"), [_claim([_exact(mode="All")])])
    assert out is not None and len(out[0].devices.results) == 4
    busy = _allocator(FOUR, allocated={(DRIVER, "n1", "g3")})
    assert busy.allocate(_node("n1"), [_claim([_exact(mode="All")])]) is None
    # No matching device at all: no allocation either.
    assert a.allocate(_node("n2"), [_claim([_exact(mode="All")])]) is None


def test_allocation_mode_all_on_incomplete_pool_is_an_error() -> None:
    a = _allocator([_slice("s1", [_device("g0")], node="n1", count=2)])
    with pytest.raises(AllocationError, match=(
        "claim ns/c, request gpu: asks for all devices, but resource pool "
        "gpu.example.com/n1 is currently being updated"
    )):
        a.allocate(_node("n1"), [_claim([_exact(mode="All")])])


def test_match_attribute_backtracks() -> None:
    slices = [_slice("s", [_device("g0", numa=0), _device("g1", numa=1),
                           _device("g2", numa=1)], node="n1")]
    c = _claim([_exact("a"), _exact("b")],
               constraints=[{"requests": ["a", "b"], "matchAttribute": f"{DRIVER}/numa"}])
    out = _allocator(slices).allocate(_node("n1"), [c])
    assert out is not None and _devices(out[0]) == [("a", "g1"), ("b", "g2")]
    # A device without the attribute never satisfies the constraint.
    slices2 = [_slice("s", [_device("g0"), _device("g1")], node="n1")]
    assert _allocator(slices2).allocate(_node("n1"), [c]) is None


def test_first_available_subrequests() -> None:
    big = {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount",
           "count": 1, "selectors": [{"cel": {"expression":
                                              f'device.attributes["{DRIVER}"].numa == 9'}}]}
    small = {"name": "small", "deviceClassName": "gpu", "allocationMode": "ExactCount",
             "count": 2}
    c = _claim([{"name": "gpu", "firstAvailable": [big, small]}])
    out = _allocator(FOUR).allocate(_node("n1"), [c])
    assert out is not None and _devices(out[0]) == [("gpu/small", "g0"), ("gpu/small", "g1")]


def test_admin_access_sees_devices_in_use() -> None:
    a = _allocator(FOUR, allocated={(DRIVER, "n1", f"g{i}") for i in range(4)})
    out = a.allocate(_node("n1"), [_claim([_exact(adminAccess=True)])])
    assert out is not None
    r = out[0].devices.results[0]
    assert (r.device, r.admin_access) == ("g0", True)


def test_network_attached_devices_and_pool_generations() -> None:
    rack = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    slices = [
        _slice("rack-1", [_device("f0")], pool="rack", selector=rack),
        _slice("shared-old", [_device("old")], pool="shared", generation=1, all_nodes=True),
        _slice("shared-new", [_device("new")], pool="shared", generation=2, all_nodes=True),
    ]
    a = _allocator(slices)
    out = a.allocate(_node("n1", {"rack": "r1"}), [_claim([_exact(count=2)])])
    assert out is not None and _devices(out[0]) == [("gpu", "f0"), ("gpu", "new")]
    sel = out[0].node_selector
    assert sel is not None and sel.node_selector_terms[0].match_expressions[0].key == "rack"
    other = a.allocate(_node("n2", {"rack": "r2"}), [_claim([_exact()])])
    assert other is not None and _devices(other[0]) == [("gpu", "new")]
    assert other[0].node_selector is None


def test_cel_runtime_error_aborts() -> None:
    c = _claim([_exact(selectors=[{"cel": {"expression":
                                          f'device.attributes["{DRIVER}"].missing == 1'}}])])
    with pytest.raises(AllocationError, match=(
        "claim ns/c: selector #0: CEL runtime error: no such key: missing"
    )):
        _allocator(FOUR).allocate(_node("n1"), [c])


def test_missing_class_and_limits() -> None:
    c = _claim([{"name": "x", "exactly": {"deviceClassName": "nope",
                                          "allocationMode": "ExactCount", "count": 1}}])
    with pytest.raises(AllocationError, match="could not retrieve device class nope"):
        _allocator(FOUR).allocate(_node("n1"), [c])
    with pytest.raises(AllocationError, match="exceeds the claim limit of 32"):
        _allocator(FOUR).allocate(_node("n1"), [_claim([_exact(count=33)])])


def test_incomplete_pools_are_not_allocated_from() -> None:
    # Only one of the pool's two slices is published: ExactCount skips the pool.
    a = _allocator([_slice("s1", [_device("g0")], node="n1", count=2)])
    assert a.allocate(_node("n1"), [_claim([_exact()])]) is None


def test_pool_completeness_counts_slices_for_other_nodes_and_drops_obsolete_pools() -> None:
    rack = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    rack2 = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r2"]}]}]}
    slices = [
        _slice("a-r1", [_device("f0")], pool="fpga", count=2, selector=rack),
        _slice("b-r2", [_device("f1")], pool="fpga", count=2, selector=rack2),
    ]
    out = _allocator(slices).allocate(_node("n1", {"rack": "r1"}), [_claim([_exact()])])
    assert out is not None and _devices(out[0]) == [("gpu", "f0")]
    # A newer generation published for the other rack only: the old one is being replaced.
    newer = [slices[0], _slice("c-r2", [_device("f1")], pool="fpga", count=1, generation=2,
                                selector=rack2)]
    assert _allocator(newer).allocate(_node("n1", {"rack": "r1"}), [_claim([_exact()])]) is None


def test_invalid_pool_fails_on_the_node_only() -> None:
    from kschedlib.plugins.dynamicresources.allocator import FailedOnNode

    dup = [_slice("s1", [_device("g0")], node="n1", pool="p", count=2),
           _slice("s2", [_device("g0")], node="n1", pool="p", count=2)]
    with pytest.raises(FailedOnNode, match="^invalid resource pools were encountered$"):
        _allocator(dup).allocate(_node("n1"), [_claim([_exact()])])


def test_admin_access_does_not_reuse_a_device_within_the_claim() -> None:
    one = [_slice("s", [_device("g0")], node="n1")]
    c = _claim([_exact("a", adminAccess=True), _exact("b", adminAccess=True)])
    assert _allocator(one).allocate(_node("n1"), [c]) is None
    two = [_slice("s", [_device("g0"), _device("g1")], node="n1")]
    out = _allocator(two).allocate(_node("n1"), [c])
    assert out is not None and _devices(out[0]) == [("a", "g0"), ("b", "g1")]


def test_devices_with_binding_conditions_or_counters_need_their_gates() -> None:
    dev = {**_device("g0"), "bindingConditions": ["attached"]}
    assert _allocator([_slice("s", [dev], node="n1")]).allocate(
        _node("n1"), [_claim([_exact()])]) is None
    dev2 = {**_device("g1"), "consumesCounters": [{"counterSet": "mem", "counters": {}}]}
    assert _allocator([_slice("s", [dev2], node="n1")]).allocate(
        _node("n1"), [_claim([_exact()])]) is None
