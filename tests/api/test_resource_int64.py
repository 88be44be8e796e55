"""Resource arithmetic follows Go's int64 (Quantity.MilliValue()/Value(), wrap-around): huge
quantities never raise OverflowError and never lose a pod."""

from __future__ import annotations

import pytest

from kschedlib.api.quantity import parse_quantity
from kschedlib.api.resource import Resource, compute_pod_resources, wrap64
from kschedlib.results import Outcome
from tests.builders import accounted, new_scheduler, node, pod


@pytest.mark.parametrize("cpu", ["1e400", "1e2000000", "9223372036854775807", "9e18"])
def test_huge_allocatable_is_go_milli_value_and_scheduling_goes_on(cpu: str) -> None:
    s = new_scheduler()
    s.add_node(node("n1", cpu=cpu))
    s.add_node(node("n2"))
    s.add_pod(pod("p", cpu="500m"))
    [r] = s.run()
    assert r.outcome == Outcome.Scheduled, r.message
    assert s.cache.get_node("n1").allocatable.milli_cpu == parse_quantity(cpu).milli_value()
    assert accounted(s, ["default/p"]) == {"default/p": "bound"}


def test_resource_totals_wrap_as_go_int64() -> None:
    r = Resource.from_list({"memory": parse_quantity("9223372036854775807")})
    r.add(Resource(memory=1))
    assert r.memory == -(2**63)
    assert wrap64(2**64 + 5) == 5


def test_pod_requests_use_go_value_of_the_sum() -> None:
    p = pod("p", cpu="1e400")
    assert compute_pod_resources(p).requests.milli_cpu == parse_quantity("1e400").milli_value()
