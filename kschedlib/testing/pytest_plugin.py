"""The ``kschedlib`` pytest plugin (entry point ``pytest11``): fixtures for policy tests.

- ``kschedlib_clock``: a fresh ``FakeClock``.
- ``kschedlib_cluster``: a factory, ``kschedlib_cluster(nodes=[...], pods=[...], ...)``
  returns a ``Cluster`` on the test's clock.
- ``make_pod`` / ``make_node``: the builders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kschedlib.clock import FakeClock
from kschedlib.testing import builders
from kschedlib.testing.cluster import Cluster


@pytest.fixture
def kschedlib_clock() -> FakeClock:
    """A FakeClock at its default start."""
    return FakeClock()


@pytest.fixture
def kschedlib_cluster(kschedlib_clock: FakeClock) -> Callable[..., Cluster]:
    """Build a Cluster on the test's clock: ``kschedlib_cluster(nodes=[...], pods=[...])``."""

    def build(*args: Any, **kwargs: Any) -> Cluster:
        kwargs.setdefault("clock", kschedlib_clock)
        return Cluster(*args, **kwargs)

    return build


@pytest.fixture
def make_pod() -> Callable[..., builders.PodWrapper]:
    """The pod builder (``make_pod("p").req(cpu="1").obj()``)."""
    return builders.make_pod


@pytest.fixture
def make_node() -> Callable[..., builders.NodeWrapper]:
    """The node builder (``make_node("n1").capacity(cpu="4").obj()``)."""
    return builders.make_node
