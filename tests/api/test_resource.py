"""Pod request computation, exactly as kube-scheduler accounts for it."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kschedlib.api import Pod
from kschedlib.api.resource import (
    Resource,
    compute_pod_resources,
    is_extended_resource,
    is_scalar_resource,
)


def pod(**spec: Any) -> Pod:
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "d"}, "spec": spec})


def c(name: str = "c", restart: str | None = None, **req: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "resources": {"requests": dict(req)}}
    if restart:
        out["restartPolicy"] = restart
    return out


def test_sum_of_containers_max_with_init() -> None:
    p = pod(containers=[c(cpu="100m", memory="1Gi"), c(cpu="200m")], initContainers=[c(cpu="500m")])
    r = compute_pod_resources(p)
    assert r.requests.milli_cpu == 500
    assert r.requests.memory == 1024**3


def test_restartable_sidecars_add_up() -> None:
    # sidecar 100m runs alongside app (200m): 300m; init after the sidecar peaks at 100m+250m.
    p = pod(
        containers=[c(cpu="200m")],
        initContainers=[c("s", "Always", cpu="100m"), c("i", cpu="250m")],
    )
    assert compute_pod_resources(p).requests.milli_cpu == 350
    p2 = pod(containers=[c(cpu="300m")], initContainers=[c("s", "Always", cpu="100m"), c("i", cpu="250m")])
    assert compute_pod_resources(p2).requests.milli_cpu == 400


def test_overhead_and_pod_level_resources() -> None:
    p = pod(containers=[c(cpu="100m")], overhead={"cpu": "50m"})
    assert compute_pod_resources(p).requests.milli_cpu == 150
    p = pod(containers=[c(cpu="100m", memory="1Gi")], resources={"requests": {"cpu": "1"}})
    r = compute_pod_resources(p)
    assert r.requests.milli_cpu == 1000
    assert r.requests.memory == 1024**3


def test_non_zero_defaults() -> None:
    r = compute_pod_resources(pod(containers=[c(), c(cpu="300m")]))
    assert (r.requests.milli_cpu, r.requests.memory) == (300, 0)
    assert r.non0_cpu == 100 + 300
    assert r.non0_mem == 2 * 200 * 1024 * 1024
    # Pod-level requests cover cpu: only memory is defaulted.
    r2 = compute_pod_resources(pod(containers=[c()], resources={"requests": {"cpu": "2"}}))
    assert (r2.non0_cpu, r2.non0_mem) == (2000, 200 * 1024 * 1024)


def test_exact_sums_round_once() -> None:
    # 0.5 + 0.5 bytes is 1 byte: Go sums quantities before rounding.
    r = compute_pod_resources(pod(containers=[c(memory="0.5"), c(memory="0.5")]))
    assert r.requests.memory == 1


def test_scalar_and_extended_names() -> None:
    assert is_extended_resource("nvidia.com/gpu")
    assert not is_extended_resource("cpu")
    assert not is_extended_resource("kubernetes.io/foo")
    assert is_scalar_resource("hugepages-2Mi")
    assert is_scalar_resource("attachable-volumes-csi-x")
    r = compute_pod_resources(pod(containers=[c(**{"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"})]))
    assert r.requests.scalar_resources == {"nvidia.com/gpu": 2, "hugepages-2Mi": 4 * 1024 * 1024}


cpu = st.integers(min_value=0, max_value=4000).map(lambda m: f"{m}m")


@given(st.lists(cpu, min_size=1, max_size=4), st.lists(cpu, max_size=4))
def test_requests_at_least_each_part(apps: list[str], inits: list[str]) -> None:
    p = pod(containers=[c(f"a{i}", cpu=v) for i, v in enumerate(apps)],
            initContainers=[c(f"i{i}", cpu=v) for i, v in enumerate(inits)])
    r = compute_pod_resources(p).requests.milli_cpu
    assert r >= sum(int(a[:-1]) for a in apps)
    assert all(r >= int(i[:-1]) for i in inits)
    assert r == max([sum(int(a[:-1]) for a in apps), *(int(i[:-1]) for i in inits)])


def test_resource_add_sub_inverse() -> None:
    a = Resource(milli_cpu=5, memory=7, scalar_resources={"x/y": 1})
    b = Resource(milli_cpu=2, memory=3, scalar_resources={"x/y": 4})
    a.add(b)
    a.sub(b)
    assert a == Resource(milli_cpu=5, memory=7, scalar_resources={"x/y": 1})
