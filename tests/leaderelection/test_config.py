"""LeaderElectionConfig validation mirrors client-go's NewLeaderElector."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import ConfigError
from kschedlib.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    InMemoryLeaseStore,
    InMemoryLock,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionConfigError,
    LeaderElector,
)

CALLBACKS = LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None)


def lock(identity: str = "a") -> InMemoryLock:
    return InMemoryLock(store=InMemoryLeaseStore(), identity=identity)


def config(**overrides: object) -> LeaderElectionConfig:
    fields: dict[str, object] = {"lock": lock(), "callbacks": CALLBACKS}
    fields.update(overrides)
    return LeaderElectionConfig(**fields)  # type: ignore[arg-type]


def test_defaults_match_kube_scheduler_flags() -> None:
    cfg = config()
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)
    assert (DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD) == (15, 10, 2)
    assert cfg.release_on_cancel is False
    LeaderElector(cfg)  # valid


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"lease_duration": 10.0}, "lease_duration (10.0) must be greater than renew_deadline"),
        ({"lease_duration": 5.0}, "lease_duration (5.0) must be greater than renew_deadline"),
        ({"retry_period": 9.0}, "renew_deadline (10.0) must be greater than retry_period*Jitter"),
        # the boundary: renew_deadline == 1.2 * retry_period is rejected
        (
            {"lease_duration": 2.0, "renew_deadline": 1.2, "retry_period": 1.0},
            "renew_deadline (1.2) must be greater than retry_period*JitterFactor",
        ),
        (
            {"lease_duration": 0.0, "renew_deadline": -1.0, "retry_period": -1.0},
            "lease_duration must be greater than zero",
        ),
        (
            {"lease_duration": 1.0, "renew_deadline": -1.0, "retry_period": -1.0},
            "renew_deadline must be greater than zero",
        ),
        (
            {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 0.0},
            "retry_period must be greater than zero",
        ),
        ({"lease_duration": math.nan}, "lease_duration must be a finite number"),
        ({"retry_period": math.inf}, "retry_period must be a finite number"),
        (
            {"callbacks": LeaderCallbacks(on_stopped_leading=lambda: None)},
            "on_started_leading callback must not be None",
        ),
        (
            {"callbacks": LeaderCallbacks(on_started_leading=lambda: None)},
            "on_stopped_leading callback must not be None",
        ),
        ({"lock": None}, "lock must not be None"),
        ({"lock": lock("")}, "lock identity is empty"),
    ],
)
def test_invalid_configs_are_rejected(overrides: dict[str, object], message: str) -> None:
    cfg = config(**overrides)
    with pytest.raises(LeaderElectionConfigError, match=re.escape(message)):
        LeaderElector(cfg)
    with pytest.raises(ConfigError):
        cfg.validate()


def test_config_error_is_a_config_error() -> None:
    assert issubclass(LeaderElectionConfigError, ConfigError)
    assert issubclass(LeaderElectionConfigError, ValueError)


_durations = st.floats(min_value=0.001, max_value=1000.0)


@given(lease=_durations, renew=_durations, retry=_durations)
def test_valid_iff_client_go_inequalities_hold(lease: float, renew: float, retry: float) -> None:
    cfg = config(lease_duration=lease, renew_deadline=renew, retry_period=retry)
    expected_ok = lease > renew and renew > 1.2 * retry
    try:
        cfg.validate()
    except LeaderElectionConfigError:
        assert not expected_ok
    else:
        assert expected_ok
