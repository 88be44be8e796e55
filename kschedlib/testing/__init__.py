"""Testing kit for scheduling policies and plugins: object builders, a one-call Cluster,
readable assertions and pytest fixtures (the ``kschedlib`` pytest plugin).

    from kschedlib.testing import Cluster, assert_scheduled, make_node, make_pod

    c = Cluster(nodes=[make_node("n1").capacity(cpu="2", memory="4Gi")])
    assert_scheduled(c.schedule(make_pod("web").req(cpu="1")), on="n1")
"""

from __future__ import annotations

from kschedlib.testing.assertions import (
    assert_feasible,
    assert_preempted,
    assert_rejected,
    assert_schedulable,
    assert_scheduled,
    assert_score_order,
    assert_unschedulable,
    describe,
)
from kschedlib.testing.builders import NodeWrapper, PodWrapper, make_node, make_pod
from kschedlib.testing.cluster import Cluster

__all__ = [
    "Cluster",
    "NodeWrapper",
    "PodWrapper",
    "assert_feasible",
    "assert_preempted",
    "assert_rejected",
    "assert_schedulable",
    "assert_scheduled",
    "assert_score_order",
    "assert_unschedulable",
    "describe",
    "make_node",
    "make_pod",
]
