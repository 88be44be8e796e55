"""Node statistics in the kubelet summary API's shape (stats/v1alpha1), given by the host.

Only the fields the eviction manager reads are kept. One kschedlib extension: ``reclaimable``
on the node says what image and dead-container garbage collection would free, which the
kubelet learns from its runtime rather than from the summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from kschedlib.errors import EvictionError
from kschedlib.eviction.config import LAYOUT_SINGLE, LAYOUTS


@attrs.define(slots=True, frozen=True)
class FsStats:
    available_bytes: int | None = None
    capacity_bytes: int | None = None
    used_bytes: int | None = None
    inodes_free: int | None = None
    inodes: int | None = None
    inodes_used: int | None = None
    time: float | None = None


@attrs.define(slots=True, frozen=True)
class MemoryStats:
    available_bytes: int | None = None
    working_set_bytes: int | None = None
    time: float | None = None


@attrs.define(slots=True, frozen=True)
class ContainerStats:
    name: str
    memory: MemoryStats | None = None
    rootfs: FsStats | None = None
    logs: FsStats | None = None


@attrs.define(slots=True, frozen=True)
class VolumeStats:
    name: str
    fs: FsStats


@attrs.define(slots=True, frozen=True)
class PodStats:
    """statsapi.PodStats: identified by ``podRef`` (uid, or namespace/name when no uid)."""

    name: str
    namespace: str
    uid: str = ""
    memory: MemoryStats | None = None
    containers: tuple[ContainerStats, ...] = ()
    volumes: tuple[VolumeStats, ...] = ()
    ephemeral_storage: FsStats | None = None
    process_count: int | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@attrs.define(slots=True, frozen=True)
class Reclaimable:
    """What node-level garbage collection frees (kschedlib extension, bytes and inodes)."""

    unused_images_bytes: int = 0
    unused_images_inodes: int = 0
    dead_containers_bytes: int = 0
    dead_containers_inodes: int = 0


@attrs.define(slots=True, frozen=True)
class NodeStats:
    node_name: str = ""
    memory: MemoryStats | None = None
    fs: FsStats | None = None
    image_fs: FsStats | None = None
    container_fs: FsStats | None = None
    max_pid: int | None = None
    num_of_running_processes: int | None = None
    rlimit_time: float | None = None
    pods_memory: MemoryStats | None = None
    reclaimable: Reclaimable = attrs.field(factory=Reclaimable)


@attrs.define(slots=True, frozen=True)
class Summary:
    """statsapi.Summary plus the node's filesystem layout (single, imagefs or split)."""

    node: NodeStats
    pods: tuple[PodStats, ...] = ()
    layout: str = LAYOUT_SINGLE

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], layout: str | None = None) -> Summary:
        """Decode the summary API JSON (``/stats/summary``); ``layout`` may also be given as
        a top-level ``layout`` key."""
        return _decode_summary(data, layout)


# ---------------------------------------------------------------------- decoding


def _int(data: Mapping[str, Any], key: str, path: str) -> int | None:
    v = data.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise EvictionError(f"summary: {path}.{key}: expected a non-negative integer, got {v!r}")
    return v


def _time(data: Mapping[str, Any], path: str) -> float | None:
    v = data.get("time")
    if v is None or isinstance(v, str):  # RFC 3339 timestamps are accepted and ignored
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EvictionError(f"summary: {path}.time: expected seconds, got {v!r}")
    return float(v)


def _map(data: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise EvictionError(f"summary: {path}: expected an object, got {type(data).__name__}")
    return data


def _fs(data: Any, path: str) -> FsStats | None:
    if data is None:
        return None
    d = _map(data, path)
    return FsStats(
        _int(d, "availableBytes", path), _int(d, "capacityBytes", path),
        _int(d, "usedBytes", path), _int(d, "inodesFree", path), _int(d, "inodes", path),
        _int(d, "inodesUsed", path), _time(d, path),
    )


def _mem(data: Any, path: str) -> MemoryStats | None:
    if data is None:
        return None
    d = _map(data, path)
    return MemoryStats(
        _int(d, "availableBytes", path), _int(d, "workingSetBytes", path), _time(d, path)
    )


def _list(data: Any, path: str) -> Sequence[Any]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise EvictionError(f"summary: {path}: expected a list")
    return data


def _decode_pod(data: Any, path: str) -> PodStats:
    d = _map(data, path)
    ref = _map(d.get("podRef") or {}, f"{path}.podRef")
    name, ns = ref.get("name"), ref.get("namespace", "")
    if not isinstance(name, str) or not name or not isinstance(ns, str):
        raise EvictionError(f"summary: {path}.podRef: name and namespace are required")
    uid = ref.get("uid") or ""
    containers = []
    for i, c in enumerate(_list(d.get("containers"), f"{path}.containers")):
        cp = f"{path}.containers[{i}]"
        cd = _map(c, cp)
        cname = cd.get("name")
        if not isinstance(cname, str):
            raise EvictionError(f"summary: {cp}.name: required")
        containers.append(
            ContainerStats(cname, _mem(cd.get("memory"), f"{cp}.memory"),
                           _fs(cd.get("rootfs"), f"{cp}.rootfs"), _fs(cd.get("logs"), f"{cp}.logs"))
        )
    volumes = []
    for i, v in enumerate(_list(d.get("volume"), f"{path}.volume")):
        vp = f"{path}.volume[{i}]"
        vd = _map(v, vp)
        vname = vd.get("name")
        if not isinstance(vname, str):
            raise EvictionError(f"summary: {vp}.name: required")
        fs = _fs(vd, vp)
        assert fs is not None
        volumes.append(VolumeStats(vname, fs))
    proc = d.get("process_stats")
    count = None
    if proc is not None:
        count = _int(_map(proc, f"{path}.process_stats"), "process_count", f"{path}.process_stats")
    return PodStats(
        name, ns, str(uid), _mem(d.get("memory"), f"{path}.memory"), tuple(containers),
        tuple(volumes), _fs(d.get("ephemeral-storage"), f"{path}.ephemeral-storage"), count,
    )


def _decode_summary(data: Mapping[str, Any], layout: str | None) -> Summary:
    root = _map(data, "summary")
    node = _map(root.get("node") or {}, "node")
    lay = layout if layout is not None else root.get("layout", LAYOUT_SINGLE)
    if lay not in LAYOUTS:
        raise EvictionError(f'summary: layout: "{lay}" is not one of {", ".join(LAYOUTS)}')
    runtime = _map(node.get("runtime") or {}, "node.runtime")
    rlimit = _map(node.get("rlimit") or {}, "node.rlimit")
    pods_mem = None
    for i, sc in enumerate(_list(node.get("systemContainers"), "node.systemContainers")):
        scd = _map(sc, f"node.systemContainers[{i}]")
        if scd.get("name") == "pods":
            pods_mem = _mem(scd.get("memory"), f"node.systemContainers[{i}].memory")
    rec = _map(node.get("reclaimable") or {}, "node.reclaimable")
    reclaimable = Reclaimable(
        _int(rec, "unusedImagesBytes", "node.reclaimable") or 0,
        _int(rec, "unusedImagesInodes", "node.reclaimable") or 0,
        _int(rec, "deadContainersBytes", "node.reclaimable") or 0,
        _int(rec, "deadContainersInodes", "node.reclaimable") or 0,
    )
    stats = NodeStats(
        str(node.get("nodeName", "")),
        _mem(node.get("memory"), "node.memory"),
        _fs(node.get("fs"), "node.fs"),
        _fs(runtime.get("imageFs"), "node.runtime.imageFs"),
        _fs(runtime.get("containerFs"), "node.runtime.containerFs"),
        _int(rlimit, "maxpid", "node.rlimit"),
        _int(rlimit, "curproc", "node.rlimit"),
        _time(rlimit, "node.rlimit"),
        pods_mem,
        reclaimable,
    )
    pods = tuple(_decode_pod(p, f"pods[{i}]") for i, p in enumerate(_list(root.get("pods"), "pods")))
    return Summary(stats, pods, str(lay))
