"""Kubelet eviction settings: defaults, parsing, validation, containerfs derivation."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kschedlib.errors import EvictionConfigError
from kschedlib.eviction import EvictionConfig, parse_threshold_statement
from kschedlib.eviction.config import float32, go_duration, parse_go_duration


def _by_signal(cfg: EvictionConfig, layout: str = "single") -> dict[tuple[str, bool], str]:
    return {(t.signal, t.hard): str(t.value) for t in cfg.thresholds_for_layout(layout)}


def test_defaults_apply_when_nothing_is_set() -> None:
    cfg = EvictionConfig.from_kubelet_configuration(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    )
    assert dict(cfg.eviction_hard) == {
        "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
        "imagefs.available": "15%", "imagefs.inodesFree": "5%",
    }
    assert cfg.eviction_pressure_transition_period == 300.0
    assert cfg.eviction_max_pod_grace_period == 0
    got = _by_signal(cfg)
    # memory.available is copied to allocatableMemory.available (enforceNodeAllocatable=pods),
    # containerfs copies nodefs on a single filesystem.
    assert got[("allocatableMemory.available", True)] == "100Mi"
    assert got[("containerfs.available", True)] == "10%"
    assert got[("containerfs.inodesFree", True)] == "5%"
    assert all(t.hard for t in cfg.thresholds)


def test_a_partial_eviction_hard_replaces_the_defaults() -> None:
    cfg = EvictionConfig.from_kubelet_configuration({"evictionHard": {"memory.available": "1Gi"}})
    assert {t.signal for t in cfg.thresholds} == {"memory.available", "allocatableMemory.available"}


def test_merge_default_eviction_settings_inherits_unset_signals() -> None:
    cfg = EvictionConfig.from_kubelet_configuration(
        {"evictionHard": {"memory.available": "1Gi"}, "mergeDefaultEvictionSettings": True}
    )
    assert cfg.eviction_hard["memory.available"] == "1Gi"
    assert cfg.eviction_hard["nodefs.available"] == "10%"
    assert cfg.eviction_hard["imagefs.inodesFree"] == "5%"


def test_an_empty_map_disables_hard_eviction_and_zero_or_full_percentages_are_ignored() -> None:
    assert EvictionConfig.from_kubelet_configuration({"evictionHard": {}}).thresholds == ()
    cfg = EvictionConfig.from_kubelet_configuration(
        {"evictionHard": {"nodefs.available": "0%", "imagefs.available": "100%"}}
    )
    assert cfg.thresholds == ()


def test_soft_thresholds_carry_grace_periods_and_minimum_reclaim() -> None:
    cfg = EvictionConfig.from_kubelet_configuration("""
evictionHard: {memory.available: 100Mi}
evictionSoft: {memory.available: 1Gi}
evictionSoftGracePeriod: {memory.available: 1m30s}
evictionMinimumReclaim: {memory.available: 500Mi}
evictionMaxPodGracePeriod: 60
evictionPressureTransitionPeriod: 30s
""")
    soft = [t for t in cfg.thresholds if not t.hard]
    assert len(soft) == 1 and soft[0].grace_period == 90.0
    assert soft[0].min_reclaim is not None and soft[0].min_reclaim.quantity == 500 * 1024**2
    hard = [t for t in cfg.thresholds if t.signal == "memory.available" and t.hard][0]
    assert hard.min_reclaim is not None  # minimum reclaim applies to every threshold of the signal
    assert cfg.eviction_max_pod_grace_period == 60
    assert cfg.eviction_pressure_transition_period == 30.0


def test_a_zero_transition_period_defaults_to_five_minutes() -> None:
    cfg = EvictionConfig.from_kubelet_configuration({"evictionPressureTransitionPeriod": "0s"})
    assert cfg.eviction_pressure_transition_period == 300.0


def test_flag_syntax() -> None:
    cfg = EvictionConfig.from_flags(
        eviction_hard="memory.available<1Gi,nodefs.available<10%",
        eviction_soft="memory.available<2Gi",
        eviction_soft_grace_period="memory.available=2m",
        eviction_minimum_reclaim="nodefs.available=5%",
    )
    got = _by_signal(cfg)
    assert got[("memory.available", True)] == "1Gi"
    assert got[("memory.available", False)] == "2Gi"
    nodefs = [t for t in cfg.thresholds if t.signal == "nodefs.available"][0]
    assert nodefs.min_reclaim is not None and nodefs.min_reclaim.percentage == float32(0.05)


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"evictionHard": {"memory.free": "1Gi"}}, 'evictionHard["memory.free"]: unsupported eviction signal memory.free'),
        ({"evictionHard": {"memory.available": "0"}}, 'evictionHard["memory.available"]: eviction threshold memory.available must be positive: 0'),
        ({"evictionHard": {"memory.available": "-1Gi"}}, "must be positive: -1Gi"),
        ({"evictionHard": {"nodefs.available": "-5%"}}, "eviction percentage threshold nodefs.available must be >= 0%: -5%"),
        ({"evictionHard": {"nodefs.available": "150%"}}, "must be <= 100%: 150%"),
        ({"evictionHard": {"nodefs.available": "abc%"}}, 'strconv.ParseFloat: parsing "abc": invalid syntax'),
        ({"evictionHard": {"memory.available": "lots"}}, 'evictionHard["memory.available"]: '),
        ({"evictionSoft": {"memory.available": "1Gi"}}, "evictionSoftGracePeriod: grace period must be specified for the soft eviction threshold memory.available"),
        ({"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "90"}}, 'time: missing unit in duration "90"'),
        ({"evictionSoftGracePeriod": {"memory.available": "-1s"}}, "invalid eviction grace period specified: -1s, must be a positive value"),
        ({"evictionMinimumReclaim": {"memory.available": "-1Mi"}}, "negative eviction minimum reclaim specified for memory.available"),
        ({"evictionMinimumReclaim": {"memory.available": "0%"}}, "eviction percentage minimum reclaim memory.available must be positive: 0%"),
        ({"kind": "KubeSchedulerConfiguration"}, 'kind: expected "KubeletConfiguration"'),
        ({"evictionHard": ["memory.available<1Gi"]}, "evictionHard: expected a map"),
        ({"evictionMaxPodGracePeriod": "30"}, "evictionMaxPodGracePeriod: expected an integer"),
        ({"evictionPressureTransitionPeriod": "5 minutes"}, "evictionPressureTransitionPeriod: time: "),
    ],
)
def test_invalid_settings_are_typed_errors_naming_the_field(doc: dict[str, object], needle: str) -> None:
    with pytest.raises(EvictionConfigError) as exc:
        EvictionConfig.from_kubelet_configuration(doc)
    assert needle in str(exc.value)


def test_percentages_are_float32_fractions_of_capacity() -> None:
    t = parse_threshold_statement("nodefs.available", "10%")
    assert t is not None
    # float32(0.1) = 0.100000001490116..., so 10% of 1e10 bytes is 1000000014, not 1e9.
    assert t.value.resolve(10**10) == Fraction(1_000_000_014)
    q = parse_threshold_statement("memory.available", "1.5Gi")
    assert q is not None and q.value.resolve(0) == Fraction(1536 * 1024**2)


@pytest.mark.parametrize(
    ("layout", "source"),
    [("single", "nodefs"), ("split", "nodefs"), ("imagefs", "imagefs")],
)
def test_containerfs_thresholds_follow_the_filesystem_layout(layout: str, source: str) -> None:
    cfg = EvictionConfig.from_kubelet_configuration({
        "evictionHard": {"nodefs.available": "10%", "imagefs.available": "20%",
                         "nodefs.inodesFree": "4%", "imagefs.inodesFree": "6%",
                         "containerfs.available": "50%"},
        "evictionSoft": {"nodefs.available": "15%", "imagefs.available": "25%"},
        "evictionSoftGracePeriod": {"nodefs.available": "1m", "imagefs.available": "2m"},
    })
    got = {(t.signal, t.hard): t for t in cfg.thresholds_for_layout(layout)}
    src_avail = f"{source}.available"
    assert str(got[("containerfs.available", True)].value) == str(got[(src_avail, True)].value)
    assert got[("containerfs.available", False)].grace_period == got[(src_avail, False)].grace_period
    assert str(got[("containerfs.inodesFree", True)].value) == str(got[(f"{source}.inodesFree", True)].value)
    # the configured containerfs.available<50% is overridden, never duplicated
    assert sum(1 for t in cfg.thresholds_for_layout(layout) if t.signal == "containerfs.available") == 2


def test_go_durations() -> None:
    assert parse_go_duration("1m30s") == 90.0
    assert parse_go_duration("1h") == 3600.0
    assert parse_go_duration("0") == 0.0
    assert parse_go_duration("250ms") == 0.25
    for bad in ("", "1", "1x", "m"):
        with pytest.raises(ValueError):
            parse_go_duration(bad)
    assert go_duration(90) == "1m30s"
    assert go_duration(300) == "5m0s"
    assert go_duration(0) == "0s"
