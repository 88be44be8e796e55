"""DRAExtendedResource: which DeviceClass backs an extended resource name, and the requests
of the claim kube-scheduler creates for a pod's DRA-backed extended resources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kschedlib.api.pod import Container, ContainerExtendedResourceRequest, Pod
from kschedlib.api.resource_v1 import (
    ALLOCATION_MODE_EXACT_COUNT,
    RESOURCE_DEVICE_CLASS_PREFIX,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
)

KIND_DEVICE_CLASS = "DeviceClass"


def device_class_mapping(classes: Iterable[DeviceClass]) -> dict[str, str]:
    """Extended resource name to DeviceClass name: every class's implicit
    ``deviceclass.resource.kubernetes.io/<class>``, and ``spec.extendedResourceName``
    (when several classes name it, the most recently created wins)."""
    out: dict[str, str] = {}
    named: dict[str, DeviceClass] = {}
    for dc in classes:
        out[RESOURCE_DEVICE_CLASS_PREFIX + dc.metadata.name] = dc.metadata.name
        ern = dc.spec.extended_resource_name
        if ern:
            cur = named.get(ern)
            if cur is None or _newer(dc, cur):
                named[ern] = dc
    for ern, dc in named.items():
        out[ern] = dc.metadata.name
    return out


def _newer(a: DeviceClass, b: DeviceClass) -> bool:
    ta, tb = a.metadata.creation_timestamp, b.metadata.creation_timestamp
    if ta is not None and tb is not None and ta != tb:
        return bool(ta > tb)
    if ta is None or tb is None:
        return ta is not None
    return a.metadata.name < b.metadata.name


class MappingCache:
    """The mapping for the store's current DeviceClasses, rebuilt when they change."""

    __slots__ = ("_key", "_mapping")

    def __init__(self) -> None:
        self._key: tuple[int, ...] | None = None
        self._mapping: dict[str, str] = {}

    def get(self, objects: Any) -> dict[str, str]:
        classes = [c for c in objects.list_objects(KIND_DEVICE_CLASS) if isinstance(c, DeviceClass)]
        key = tuple(id(c) for c in classes)
        if key != self._key:
            self._mapping = device_class_mapping(classes)
            self._key = key
        return self._mapping


def _request_count(c: Container, name: str) -> int:
    q = c.resources.requests.get(name) if c.resources is not None else None
    if q is None:
        return 0
    return q.value()


def _one(
    index: int, c: Container, name: str, class_name: str,
    reusable: list[DeviceRequest | None],
) -> tuple[DeviceRequest | None, list[ContainerExtendedResourceRequest]]:
    """createResourceRequestAndMappings: the container's request for one resource, after
    what it can reuse of the long-lived containers' requests."""
    want = _request_count(c, name)
    if want == 0:
        return None, []
    mappings: list[ContainerExtendedResourceRequest] = []
    total = 0
    for r in reusable:
        if r is None or r.exactly is None:
            continue
        total += r.exactly.count
        mappings.append(ContainerExtendedResourceRequest(
            container_name=c.name, resource_name=name, request_name=r.name))
        if total >= want:
            return None, mappings
    keys = sorted(c.resources.requests) if c.resources is not None else []
    ridx = keys.index(name) if name in keys else 0
    req_name = f"container-{index}-request-{ridx}"
    req = DeviceRequest(name=req_name, exactly=ExactDeviceRequest(
        device_class_name=class_name, allocation_mode=ALLOCATION_MODE_EXACT_COUNT,
        count=want - total,
    ))
    mappings.append(ContainerExtendedResourceRequest(
        container_name=c.name, resource_name=name, request_name=req_name))
    return req, mappings


def create_requests(
    pod: Pod, resources: Iterable[str], mapping: Mapping[str, str]
) -> tuple[tuple[DeviceRequest, ...], tuple[ContainerExtendedResourceRequest, ...]]:
    """createRequestsAndMappings: one request per container and resource (named
    ``container-<i>-request-<j>``, i over init containers then containers, j the resource's
    index among the container's sorted requests); an init container reuses the devices of
    the sidecars and containers that start after it, and only the largest remaining init
    request is kept. Sorted by name."""
    inits = pod.spec.init_containers
    containers = [*inits, *pod.spec.containers]
    long_lived = [
        i for i, c in enumerate(containers)
        if i >= len(inits) or c.restart_policy == "Always"
    ]
    short_lived = [i for i in range(len(inits)) if containers[i].restart_policy != "Always"]
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for name in sorted(resources):
        class_name = mapping.get(name)
        if not class_name:
            continue
        ll: list[DeviceRequest | None] = [None] * len(containers)
        ll_maps: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            req, mps = _one(i, containers[i], name, class_name, [])
            ll[i] = req
            ll_maps.extend(mps)
        biggest: DeviceRequest | None = None
        sl_maps: list[ContainerExtendedResourceRequest] = []
        sl_names: set[str] = set()
        for i in short_lived:
            req, mps = _one(i, containers[i], name, class_name, ll[i:])
            if req is not None and req.exactly is not None:
                sl_names.add(req.name)
                if biggest is None or (
                    biggest.exactly is not None and biggest.exactly.count < req.exactly.count
                ):
                    biggest = req
            sl_maps.extend(mps)
        if biggest is not None and len(sl_names) > 1:
            sl_names.discard(biggest.name)
            sl_maps = [
                ContainerExtendedResourceRequest(
                    container_name=m.container_name, resource_name=m.resource_name,
                    request_name=biggest.name,
                ) if m.request_name in sl_names else m
                for m in sl_maps
            ]
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in ll if r is not None)
        mappings.extend(ll_maps)
        mappings.extend(sl_maps)
    requests.sort(key=lambda r: r.name)
    return tuple(requests), tuple(mappings)
