"""The kubelet's eviction settings: signals, thresholds, defaults and parsing.

Follows pkg/kubelet/eviction/api (signals, thresholds), pkg/kubelet/eviction/helpers.go
(ParseThresholdConfig, UpdateContainerFsThresholds) and the KubeletConfiguration v1beta1
defaults for the eviction fields (Linux).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import attrs
import yaml

from kschedlib.api.quantity import BINARY_SI, DECIMAL_SI, parse_quantity, quantity_from_int
from kschedlib.errors import EvictionConfigError, QuantityError

SIGNAL_MEMORY_AVAILABLE = "memory.available"
SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
SIGNAL_NODEFS_AVAILABLE = "nodefs.available"
SIGNAL_NODEFS_INODES_FREE = "nodefs.inodesFree"
SIGNAL_IMAGEFS_AVAILABLE = "imagefs.available"
SIGNAL_IMAGEFS_INODES_FREE = "imagefs.inodesFree"
SIGNAL_CONTAINERFS_AVAILABLE = "containerfs.available"
SIGNAL_CONTAINERFS_INODES_FREE = "containerfs.inodesFree"
SIGNAL_PID_AVAILABLE = "pid.available"

OP_LESS_THAN = "LessThan"

RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_INODES = "inodes"
RESOURCE_PIDS = "pids"

SIGNAL_TO_RESOURCE: Mapping[str, str] = {
    SIGNAL_MEMORY_AVAILABLE: RESOURCE_MEMORY,
    SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE: RESOURCE_MEMORY,
    SIGNAL_IMAGEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_IMAGEFS_INODES_FREE: RESOURCE_INODES,
    SIGNAL_CONTAINERFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_CONTAINERFS_INODES_FREE: RESOURCE_INODES,
    SIGNAL_NODEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE,
    SIGNAL_NODEFS_INODES_FREE: RESOURCE_INODES,
    SIGNAL_PID_AVAILABLE: RESOURCE_PIDS,
}

MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"

SIGNAL_TO_NODE_CONDITION: Mapping[str, str] = {
    SIGNAL_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    SIGNAL_IMAGEFS_AVAILABLE: DISK_PRESSURE,
    SIGNAL_CONTAINERFS_AVAILABLE: DISK_PRESSURE,
    SIGNAL_NODEFS_AVAILABLE: DISK_PRESSURE,
    SIGNAL_IMAGEFS_INODES_FREE: DISK_PRESSURE,
    SIGNAL_NODEFS_INODES_FREE: DISK_PRESSURE,
    SIGNAL_CONTAINERFS_INODES_FREE: DISK_PRESSURE,
    SIGNAL_PID_AVAILABLE: PID_PRESSURE,
}

#: KubeletConfiguration v1beta1 DefaultEvictionHard (Linux).
DEFAULT_EVICTION_HARD: Mapping[str, str] = {
    SIGNAL_MEMORY_AVAILABLE: "100Mi",
    SIGNAL_NODEFS_AVAILABLE: "10%",
    SIGNAL_NODEFS_INODES_FREE: "5%",
    SIGNAL_IMAGEFS_AVAILABLE: "15%",
    SIGNAL_IMAGEFS_INODES_FREE: "5%",
}
DEFAULT_PRESSURE_TRANSITION_PERIOD = 300.0
NODE_ALLOCATABLE_ENFORCEMENT_KEY = "pods"

#: Filesystem layouts of a node (cadvisor/CRI's view): one filesystem; a dedicated image
#: filesystem holding images and writable layers; or images split from the writable layers
#: (KubeletSeparateDiskGC), whose container filesystem is the node filesystem.
LAYOUT_SINGLE = "single"
LAYOUT_IMAGEFS = "imagefs"
LAYOUT_SPLIT = "split"
LAYOUTS = (LAYOUT_SINGLE, LAYOUT_IMAGEFS, LAYOUT_SPLIT)


def float32(x: float) -> float:
    """Round a float to the nearest IEEE single (Go's float32 conversion)."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


@attrs.define(slots=True, frozen=True)
class ThresholdValue:
    """A quantity (exact, with its text) or a percentage of capacity (a float32 fraction)."""

    quantity: Fraction | None = None
    percentage: float = 0.0
    text: str = ""

    def resolve(self, capacity: int) -> Fraction:
        """evictionapi.GetThresholdQuantity: the quantity, or percentage x capacity."""
        if self.quantity is not None:
            return self.quantity
        return Fraction(int(float(capacity) * self.percentage))

    def __str__(self) -> str:
        return self.text


@attrs.define(slots=True, frozen=True)
class Threshold:
    """evictionapi.Threshold: ``signal < value``; hard when ``grace_period`` is 0."""

    signal: str
    value: ThresholdValue
    operator: str = OP_LESS_THAN
    grace_period: float = 0.0
    min_reclaim: ThresholdValue | None = None

    @property
    def hard(self) -> bool:
        return self.grace_period == 0

    def __str__(self) -> str:
        kind = "hard" if self.hard else f"soft, grace period {go_duration(self.grace_period)}"
        extra = f", minimum reclaim {self.min_reclaim}" if self.min_reclaim is not None else ""
        return f"{self.signal}<{self.value} ({kind}{extra})"


# ---------------------------------------------------------------------- Go-like parsing

_DURATION_UNITS = {
    "ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0,
    "m": 60.0, "h": 3600.0,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_go_duration(text: str) -> float:
    """time.ParseDuration, in seconds; raises ValueError with Go's message."""
    orig = text
    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{orig}"')
    total = 0.0
    while s:
        m = _DURATION_PART.match(s)
        assert m is not None
        num, unit = m.group(1), m.group(2)
        if num in ("", "."):
            raise ValueError(f'time: invalid duration "{orig}"')
        if not unit:
            raise ValueError(f'time: missing unit in duration "{orig}"')
        end = len(unit)
        for i, ch in enumerate(unit):
            if ch.isdigit() or ch == ".":
                end = i
                break
        unit = unit[:end]
        if unit not in _DURATION_UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{orig}"')
        total += float(num) * _DURATION_UNITS[unit]
        s = s[len(num) + len(unit):]
    return -total if neg else total


def go_duration(seconds: float) -> str:
    """time.Duration.String for whole-second and sub-second values ("1m30s", "5m0s", "0s")."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    s = abs(seconds)
    if s < 1:
        ms = s * 1000
        return f"{sign}{ms:g}ms"
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    sec_txt = f"{sec:g}s"
    if h:
        return f"{sign}{int(h)}h{int(m)}m{sec_txt}"
    if m:
        return f"{sign}{int(m)}m{sec_txt}"
    return f"{sign}{sec_txt}"


def _parse_percentage(text: str) -> float:
    body = text.rstrip("%")
    if "_" in body:
        raise ValueError(f'strconv.ParseFloat: parsing "{body}": invalid syntax')
    try:
        value = float(body)
    except ValueError:
        raise ValueError(f'strconv.ParseFloat: parsing "{body}": invalid syntax') from None
    return float32(float32(value) / 100)


def _unsupported(signal: str) -> str:
    return f"unsupported eviction signal {signal}"


def parse_threshold_statement(signal: str, value: str) -> Threshold | None:
    """parseThresholdStatement: None for 0% and 100% (ignored); ValueError when invalid."""
    if signal not in SIGNAL_TO_RESOURCE:
        raise ValueError(_unsupported(signal))
    if value.endswith("%"):
        if value in ("0%", "100%"):
            return None
        pct = _parse_percentage(value)
        if pct < 0:
            raise ValueError(f"eviction percentage threshold {signal} must be >= 0%: {value}")
        if pct > 1:
            raise ValueError(f"eviction percentage threshold {signal} must be <= 100%: {value}")
        return Threshold(signal, ThresholdValue(None, pct, value))
    try:
        q = parse_quantity(value)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None
    if q.sign() <= 0:
        raise ValueError(f"eviction threshold {signal} must be positive: {q}")
    return Threshold(signal, ThresholdValue(q.as_fraction(), 0.0, str(q)))


def _parse_min_reclaim(signal: str, value: str) -> ThresholdValue:
    if signal not in SIGNAL_TO_RESOURCE:
        raise ValueError(_unsupported(signal))
    if value.endswith("%"):
        pct = _parse_percentage(value)
        if pct <= 0:
            raise ValueError(f"eviction percentage minimum reclaim {signal} must be positive: {value}")
        return ThresholdValue(None, pct, value)
    try:
        q = parse_quantity(value)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None
    if q.sign() < 0:
        raise ValueError(f"negative eviction minimum reclaim specified for {signal}")
    return ThresholdValue(q.as_fraction(), 0.0, str(q))


def _err(field: str, key: str | None, msg: str) -> EvictionConfigError:
    where = f'{field}["{key}"]' if key is not None else field
    return EvictionConfigError(f"{where}: {msg}")


def parse_threshold_config(
    hard: Mapping[str, str],
    soft: Mapping[str, str],
    soft_grace_period: Mapping[str, str],
    minimum_reclaim: Mapping[str, str],
    enforce_node_allocatable: tuple[str, ...] = (NODE_ALLOCATABLE_ENFORCEMENT_KEY,),
) -> tuple[Threshold, ...]:
    """ParseThresholdConfig: hard, then soft thresholds (with their grace periods), minimum
    reclaims, and allocatableMemory.available when node allocatable is enforced on pods.

    Go iterates maps in random order; kschedlib sorts signals so results are reproducible.
    """
    hard_t: list[Threshold] = []
    for sig in sorted(hard):
        try:
            t = parse_threshold_statement(sig, hard[sig])
        except ValueError as exc:
            raise _err("evictionHard", sig, str(exc)) from None
        if t is not None:
            hard_t.append(t)
    soft_t: list[Threshold] = []
    for sig in sorted(soft):
        try:
            t = parse_threshold_statement(sig, soft[sig])
        except ValueError as exc:
            raise _err("evictionSoft", sig, str(exc)) from None
        if t is not None:
            soft_t.append(t)
    periods: dict[str, float] = {}
    for sig in sorted(soft_grace_period):
        if sig not in SIGNAL_TO_RESOURCE:
            raise _err("evictionSoftGracePeriod", sig, _unsupported(sig))
        val = soft_grace_period[sig]
        try:
            period = parse_go_duration(val)
        except ValueError as exc:
            raise _err("evictionSoftGracePeriod", sig, str(exc)) from None
        if period < 0:
            raise _err(
                "evictionSoftGracePeriod", sig,
                f"invalid eviction grace period specified: {val}, must be a positive value",
            )
        periods[sig] = period
    reclaims: dict[str, ThresholdValue] = {}
    for sig in sorted(minimum_reclaim):
        try:
            reclaims[sig] = _parse_min_reclaim(sig, minimum_reclaim[sig])
        except ValueError as exc:
            raise _err("evictionMinimumReclaim", sig, str(exc)) from None
    for i, t in enumerate(soft_t):
        if t.signal not in periods:
            raise _err(
                "evictionSoftGracePeriod", None,
                f"grace period must be specified for the soft eviction threshold {t.signal}",
            )
        soft_t[i] = attrs.evolve(t, grace_period=periods[t.signal])
    results = [
        attrs.evolve(t, min_reclaim=reclaims[t.signal]) if t.signal in reclaims else t
        for t in hard_t + soft_t
    ]
    if NODE_ALLOCATABLE_ENFORCEMENT_KEY in enforce_node_allocatable:
        results.extend(
            Threshold(SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE, t.value, t.operator, 0.0, t.min_reclaim)
            for t in list(results)
            if t.signal == SIGNAL_MEMORY_AVAILABLE and t.hard
        )
    return tuple(results)


def update_containerfs_thresholds(
    thresholds: tuple[Threshold, ...], layout: str
) -> tuple[Threshold, ...]:
    """UpdateContainerFsThresholds: containerfs thresholds copy nodefs (one filesystem, or
    images split from writable layers) or imagefs (a dedicated image filesystem); any
    configured containerfs threshold is overridden.

    The kubelet also appends a copy when the source threshold is unset; such a copy has no
    operator and is never met, so kschedlib leaves it out.
    """
    source = (
        (SIGNAL_IMAGEFS_AVAILABLE, SIGNAL_IMAGEFS_INODES_FREE)
        if layout == LAYOUT_IMAGEFS
        else (SIGNAL_NODEFS_AVAILABLE, SIGNAL_NODEFS_INODES_FREE)
    )
    pairs = (
        (source[0], SIGNAL_CONTAINERFS_AVAILABLE),
        (source[1], SIGNAL_CONTAINERFS_INODES_FREE),
    )
    out = list(thresholds)
    for src_sig, dst_sig in pairs:
        for hard in (True, False):
            src = None
            for t in thresholds:
                if t.signal == src_sig and t.hard == hard:
                    src = t
            idx = next(
                (i for i, t in enumerate(thresholds) if t.signal == dst_sig and t.hard == hard),
                -1,
            )
            if src is None:
                if idx != -1:
                    out[idx] = Threshold(dst_sig, ThresholdValue(), "", 0.0, None)
                continue
            new = Threshold(dst_sig, src.value, src.operator, src.grace_period, src.min_reclaim)
            if idx != -1:
                out[idx] = new
            else:
                out.append(new)
    return tuple(t for t in out if t.operator)


# ---------------------------------------------------------------------- configuration


def _string_map(doc: Mapping[str, Any], key: str) -> dict[str, str] | None:
    raw = doc.get(key)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise EvictionConfigError(f"{key}: expected a map of signal to value, got {type(raw).__name__}")
    out: dict[str, str] = {}
    for k, v in raw.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise EvictionConfigError(f'{key}["{k}"]: expected a string value')
        out[k] = str(v)
    return out


def _parse_flag_map(field: str, text: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if sep not in part:
            raise EvictionConfigError(f'{field}: malformed pair "{part}", expected signal{sep}value')
        k, v = part.split(sep, 1)
        out[k.strip()] = v.strip()
    return out


@attrs.define(slots=True, frozen=True)
class EvictionConfig:
    """The eviction fields of a KubeletConfiguration, defaulted, with parsed thresholds."""

    eviction_hard: Mapping[str, str]
    eviction_soft: Mapping[str, str]
    eviction_soft_grace_period: Mapping[str, str]
    eviction_minimum_reclaim: Mapping[str, str]
    eviction_max_pod_grace_period: int
    eviction_pressure_transition_period: float
    merge_default_eviction_settings: bool
    enforce_node_allocatable: tuple[str, ...]
    thresholds: tuple[Threshold, ...]
    local_storage_capacity_isolation: bool = True

    @classmethod
    def build(
        cls,
        *,
        eviction_hard: Mapping[str, str] | None = None,
        eviction_soft: Mapping[str, str] | None = None,
        eviction_soft_grace_period: Mapping[str, str] | None = None,
        eviction_minimum_reclaim: Mapping[str, str] | None = None,
        eviction_max_pod_grace_period: int = 0,
        eviction_pressure_transition_period: float | str = 0.0,
        merge_default_eviction_settings: bool = False,
        enforce_node_allocatable: tuple[str, ...] | None = None,
        local_storage_capacity_isolation: bool = True,
    ) -> EvictionConfig:
        """Default as the kubelet does (evictionHard only when unset, or merged when asked;
        a zero transition period becomes 5m) and parse the thresholds."""
        if eviction_hard is None:
            hard = dict(DEFAULT_EVICTION_HARD)
        else:
            hard = dict(eviction_hard)
            if merge_default_eviction_settings:
                for k, v in DEFAULT_EVICTION_HARD.items():
                    hard.setdefault(k, v)
        if isinstance(eviction_pressure_transition_period, str):
            try:
                period = parse_go_duration(eviction_pressure_transition_period)
            except ValueError as exc:
                raise EvictionConfigError(f"evictionPressureTransitionPeriod: {exc}") from None
        else:
            period = float(eviction_pressure_transition_period)
        if period == 0:
            period = DEFAULT_PRESSURE_TRANSITION_PERIOD
        if isinstance(eviction_max_pod_grace_period, bool) or not isinstance(
            eviction_max_pod_grace_period, int
        ):
            raise EvictionConfigError("evictionMaxPodGracePeriod: expected an integer (seconds)")
        if not -(2**31) <= eviction_max_pod_grace_period < 2**31:
            raise EvictionConfigError("evictionMaxPodGracePeriod: out of the int32 range")
        enforce = (
            (NODE_ALLOCATABLE_ENFORCEMENT_KEY,)
            if enforce_node_allocatable is None
            else tuple(enforce_node_allocatable)
        )
        soft = dict(eviction_soft or {})
        grace = dict(eviction_soft_grace_period or {})
        reclaim = dict(eviction_minimum_reclaim or {})
        thresholds = parse_threshold_config(hard, soft, grace, reclaim, enforce)
        return cls(
            hard, soft, grace, reclaim, eviction_max_pod_grace_period, period,
            merge_default_eviction_settings, enforce, thresholds, local_storage_capacity_isolation,
        )

    @classmethod
    def from_kubelet_configuration(cls, source: Mapping[str, Any] | str | None) -> EvictionConfig:
        """Read the eviction fields of a KubeletConfiguration document (dict or YAML text);
        other fields are ignored."""
        if source is None:
            return cls.build()
        doc: Any = source
        if isinstance(source, str):
            try:
                doc = yaml.safe_load(source)
            except yaml.YAMLError as exc:
                raise EvictionConfigError(f"KubeletConfiguration: invalid YAML: {exc}") from None
            if doc is None:
                doc = {}
        if not isinstance(doc, Mapping):
            raise EvictionConfigError("KubeletConfiguration: expected a mapping")
        kind = doc.get("kind")
        if kind is not None and kind != "KubeletConfiguration":
            raise EvictionConfigError(f'kind: expected "KubeletConfiguration", got "{kind}"')
        api = doc.get("apiVersion")
        if api is not None and api != "kubelet.config.k8s.io/v1beta1":
            raise EvictionConfigError(
                f'apiVersion: expected "kubelet.config.k8s.io/v1beta1", got "{api}"'
            )
        max_grace = doc.get("evictionMaxPodGracePeriod", 0)
        period = doc.get("evictionPressureTransitionPeriod", 0.0)
        if period is None:
            period = 0.0
        if not isinstance(period, (str, int, float)) or isinstance(period, bool):
            raise EvictionConfigError("evictionPressureTransitionPeriod: expected a duration string")
        merge = doc.get("mergeDefaultEvictionSettings", False)
        if not isinstance(merge, bool):
            raise EvictionConfigError("mergeDefaultEvictionSettings: expected a boolean")
        enforce = doc.get("enforceNodeAllocatable")
        if enforce is not None and (
            not isinstance(enforce, list) or not all(isinstance(e, str) for e in enforce)
        ):
            raise EvictionConfigError("enforceNodeAllocatable: expected a list of strings")
        lsci = doc.get("localStorageCapacityIsolation", True)
        if not isinstance(lsci, bool):
            raise EvictionConfigError("localStorageCapacityIsolation: expected a boolean")
        return cls.build(
            local_storage_capacity_isolation=lsci,
            eviction_hard=_string_map(doc, "evictionHard"),
            eviction_soft=_string_map(doc, "evictionSoft"),
            eviction_soft_grace_period=_string_map(doc, "evictionSoftGracePeriod"),
            eviction_minimum_reclaim=_string_map(doc, "evictionMinimumReclaim"),
            eviction_max_pod_grace_period=max_grace,
            eviction_pressure_transition_period=period if isinstance(period, str) else float(period),
            merge_default_eviction_settings=merge,
            enforce_node_allocatable=None if enforce is None else tuple(enforce),
        )

    @classmethod
    def from_flags(
        cls,
        *,
        eviction_hard: str | None = None,
        eviction_soft: str | None = None,
        eviction_soft_grace_period: str | None = None,
        eviction_minimum_reclaim: str | None = None,
        eviction_max_pod_grace_period: int = 0,
        eviction_pressure_transition_period: str = "5m",
    ) -> EvictionConfig:
        """The kubelet's flag syntax: ``--eviction-hard=memory.available<1Gi,nodefs.available<10%``,
        ``--eviction-soft-grace-period=memory.available=1m30s``, ``--eviction-minimum-reclaim=...``."""
        return cls.build(
            eviction_hard=None if eviction_hard is None
            else _parse_flag_map("evictionHard", eviction_hard, "<"),
            eviction_soft=None if eviction_soft is None
            else _parse_flag_map("evictionSoft", eviction_soft, "<"),
            eviction_soft_grace_period=None if eviction_soft_grace_period is None
            else _parse_flag_map("evictionSoftGracePeriod", eviction_soft_grace_period, "="),
            eviction_minimum_reclaim=None if eviction_minimum_reclaim is None
            else _parse_flag_map("evictionMinimumReclaim", eviction_minimum_reclaim, "="),
            eviction_max_pod_grace_period=eviction_max_pod_grace_period,
            eviction_pressure_transition_period=eviction_pressure_transition_period,
        )

    def thresholds_for_layout(self, layout: str) -> tuple[Threshold, ...]:
        """The thresholds the eviction manager uses on a node with this filesystem layout."""
        if layout not in LAYOUTS:
            raise EvictionConfigError(f'layout: "{layout}" is not one of {", ".join(LAYOUTS)}')
        return update_containerfs_thresholds(self.thresholds, layout)


def format_bytes(value: int | Fraction, resource: str = RESOURCE_MEMORY) -> str:
    """A quantity as the kubelet prints it (BinarySI for bytes, DecimalSI for counts)."""
    fmt = BINARY_SI if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE) else DECIMAL_SI
    return str(quantity_from_int(int(value), fmt))
