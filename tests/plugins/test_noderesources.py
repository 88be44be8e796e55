"""NodeResourcesFit and NodeResourcesBalancedAllocation: arithmetic, reasons and codes, args,
queueing hints. Tables follow kube-scheduler's noderesources tests."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, EventResource, QueueingHint
from kschedlib.framework.handle import BasicHandle
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Code
from kschedlib.plugins.noderesources import (
    BALANCED_ALLOCATION_NAME,
    FIT_NAME,
    PLUGINS,
    BalancedAllocation,
    Fit,
    InsufficientResource,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    balanced_resource_scorer,
    fits,
    new_balanced_allocation,
    new_fit,
)
from kschedlib.plugins.noderesources.least_allocated import (
    least_requested_score,
    least_resource_scorer,
)
from kschedlib.plugins.noderesources.most_allocated import (
    most_requested_score,
    most_resource_scorer,
)
from kschedlib.plugins.noderesources.requested_to_capacity_ratio import (
    build_broken_linear_function,
    requested_to_capacity_ratio_scorer,
)
from kschedlib.plugins.noderesources.resource_allocation import go_div, go_round

_uid = itertools.count(1)

EXT = "abc.com/xyz"


def make_node(name: str, alloc: dict[str, str] | None = None, pods: str = "110") -> Node:
    allocatable = {"pods": pods, **(alloc or {})}
    return Node.from_dict(
        {
            "metadata": {"name": name},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }
    )


def make_pod(
    *requests: dict[str, str],
    node: str = "",
    init: tuple[tuple[dict[str, str], str | None], ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    uid: str | None = None,
    nominated: str = "",
) -> Pod:
    n = next(_uid)
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [
            {"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)
        ],
    }
    if init:
        spec["initContainers"] = [
            {"name": f"i{i}", "resources": {"requests": r}, "restartPolicy": policy}
            for i, (r, policy) in enumerate(init)
        ]
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    return Pod.from_dict(
        {
            "metadata": {"name": f"p{n}", "namespace": "default", "uid": uid or f"uid-{n}"},
            "spec": spec,
            "status": {"nominatedNodeName": nominated},
        }
    )


def fit_plugin(args: NodeResourcesFitArgs | None = None) -> Fit:
    return new_fit(args, BasicHandle(Snapshot()))


def fit_scores(
    pod: Pod, nodes: list[Node], existing: list[Pod], args: NodeResourcesFitArgs | None = None
) -> list[int]:
    snap = Snapshot.from_objects(existing, nodes)
    plugin = new_fit(args, BasicHandle(snap))
    state = CycleState()
    assert plugin.pre_score(state, pod, snap.list()) is None
    out = []
    for ni in snap.list():
        score, status = plugin.score(state, pod, ni)
        assert status is None
        out.append(score)
    return out


def ba_scores(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    args: NodeResourcesBalancedAllocationArgs | None = None,
) -> list[int]:
    snap = Snapshot.from_objects(existing, nodes)
    plugin = new_balanced_allocation(args, BasicHandle(snap))
    state = CycleState()
    assert plugin.pre_score(state, pod, snap.list()) is None
    return [plugin.score(state, pod, ni)[0] for ni in snap.list()]


def strategy(kind: str, *resources: tuple[str, int], shape: Any = None) -> NodeResourcesFitArgs:
    rtcr = None
    if shape is not None:
        rtcr = RequestedToCapacityRatioParam(tuple(UtilizationShapePoint(u, s) for u, s in shape))
    return NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            kind, tuple(ResourceSpec(n, w) for n, w in resources), rtcr
        )
    )


CPU_MEM = (("cpu", 1), ("memory", 1))
# The two-container pod of kube-scheduler's tables: 3000 cpu, 5000 memory in total.
CPU_AND_MEMORY = ({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


# --- integer arithmetic ---


@pytest.mark.parametrize(
    ("a", "b", "want"), [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0), (-1, 100, 0)]
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want


@pytest.mark.parametrize(
    ("x", "want"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (-0.5, -1), (-2.5, -3), (3.0, 3)]
)
def test_go_round_half_away_from_zero(x: float, want: int) -> None:
    assert go_round(x) == want


@pytest.mark.parametrize(
    ("requested", "capacity", "least", "most"),
    [
        (0, 4000, 100, 0),
        (3000, 4000, 25, 75),
        (1, 3, 66, 33),
        (4000, 4000, 0, 100),
        (6000, 4000, 0, 100),
        (5, 0, 0, 0),
    ],
)
def test_requested_scores(requested: int, capacity: int, least: int, most: int) -> None:
    assert least_requested_score(requested, capacity) == least
    assert most_requested_score(requested, capacity) == most


def test_weighted_means_use_integer_division() -> None:
    # cpu 25 (weight 1), memory 50 (weight 2): (25 + 100) / 3 = 41.
    assert least_resource_scorer([3000, 5000], [4000, 10000], [1, 2]) == 41
    # cpu 75, memory 50: 125 / 2 = 62.
    assert most_resource_scorer([3000, 5000], [4000, 10000], [1, 1]) == 62
    assert least_resource_scorer([], [], []) == 0
    assert most_resource_scorer([1], [0], [1]) == 0


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        (
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
        ),
        (
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
        ),
        (
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
        ),
        # A falling segment: Go truncates the negative step toward zero.
        ([(0, 100), (100, 0)], [(1, 99), (33, 67), (99, 1)]),
        ([(0, 100), (30, 0)], [(1, 97), (2, 94), (29, 4)]),
    ],
)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    f = build_broken_linear_function(points)
    for p, want in assertions:
        assert f(p) == want, p


def test_requested_to_capacity_ratio_scorer_scales_shape_and_rounds() -> None:
    spread = requested_to_capacity_ratio_scorer(
        [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
    )
    # cpu 3000/4000 -> 75% -> 25, memory 50% -> 50: (25 + 50) / 2 = 37.5 -> 38.
    assert spread([3000, 5000], [4000, 10000], [1, 1]) == 38
    assert spread([3000, 5000], [6000, 10000], [1, 1]) == 50
    # Over-requested or zero-capacity resources count as fully used.
    assert spread([5000], [4000], [1]) == 0
    packing = requested_to_capacity_ratio_scorer(
        [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]
    )
    # Resources scoring 0 do not count towards the weight sum.
    assert packing([0, 5000], [4000, 10000], [3, 1]) == 50
    assert packing([0, 0], [4000, 10000], [1, 1]) == 0
    # foo 2/8 -> 25 (weight 3), bar 2/4 -> 50 (weight 5): 325 / 8 = 40.625 -> 41.
    assert packing([2, 2], [8, 4], [3, 5]) == 41


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        ([3000, 5000], [4000, 10000], 87),  # fractions .75 and .5: std .125
        ([3000, 5000], [6000, 10000], 100),
        ([6000, 0], [10000, 20000], 70),
        ([6000, 5000], [10000, 20000], 82),
        ([9000, 5000], [4000, 10000], 75),  # cpu fraction capped at 1
        ([0, 0], [0, 0], 100),  # no fractions: std 0
        ([1, 2], [0, 4], 100),  # one fraction: std 0
        # Three fractions .5, .25, 1: population std dev .3118... -> 68.
        ([2, 1, 4], [4, 4, 4], 68),
    ],
)
def test_balanced_resource_scorer(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_scorer(requested, allocatable, [1] * len(requested)) == want


# --- NodeResourcesFit scoring, from kube-scheduler's strategy tests ---


def _nodes(*specs: tuple[str, str, str] | tuple[str, str, str, dict[str, str]]) -> list[Node]:
    out = []
    for spec in specs:
        name, cpu, mem = spec[0], spec[1], spec[2]
        extra: dict[str, str] = spec[3] if len(spec) > 3 else {}
        out.append(make_node(name, {"cpu": cpu, "memory": mem, **extra}))
    return out


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [
        pytest.param(
            make_pod(),
            _nodes(("node1", "4000", "10000"), ("node2", "4000", "10000")),
            [],
            CPU_MEM,
            [100, 100],
            id="nothing scheduled, nothing requested",
        ),
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("node1", "4000", "10000"), ("node2", "6000", "10000")),
            [],
            CPU_MEM,
            [37, 50],
            id="differently sized nodes",
        ),
        pytest.param(
            make_pod(),
            _nodes(("node1", "10000", "20000"), ("node2", "10000", "20000")),
            [
                make_pod({"cpu": "3000", "memory": "0"}, node="node1"),
                make_pod({"cpu": "3000", "memory": "0"}, node="node1"),
                make_pod({"cpu": "3000", "memory": "0"}, node="node2"),
                make_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            CPU_MEM,
            [70, 57],
            id="no resources requested, pods scheduled with resources",
        ),
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("node1", "10000", "20000"), ("node2", "10000", "50000")),
            [
                make_pod({"cpu": "3000", "memory": "0"}, node="node1"),
                make_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            CPU_MEM,
            [57, 60],
            id="pods scheduled with resources, differently sized nodes",
        ),
        pytest.param(
            make_pod({"cpu": "3000", "memory": "0"}),
            _nodes(("node1", "4000", "10000"), ("node2", "4000", "10000")),
            [
                make_pod({"cpu": "3000", "memory": "0"}, node="node1"),
                make_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            CPU_MEM,
            [50, 25],
            id="requested resources exceed node capacity",
        ),
        pytest.param(
            make_pod(),
            [make_node("node1"), make_node("node2")],
            [make_pod({"cpu": "3000", "memory": "0"}, node="node1")],
            CPU_MEM,
            [0, 0],
            id="zero node resources",
        ),
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("node1", "4000", "10000"), ("node2", "6000", "10000")),
            [],
            (("memory", 2), ("cpu", 1)),
            [41, 50],
            id="different weights on cpu and memory",
        ),
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("node1", "6000", "10000"), ("node2", "6000", "10000", {EXT: "4"})),
            [],
            (*CPU_MEM, (EXT, 1)),
            [50, 50],
            id="bypass extended resource the pod does not request",
        ),
        pytest.param(
            make_pod({"cpu": "1000", "memory": "2000", EXT: "2"}, CPU_AND_MEMORY[1]),
            _nodes(("node1", "6000", "10000", {EXT: "4"}), ("node2", "6000", "10000", {EXT: "10"})),
            [],
            (*CPU_MEM, (EXT, 1)),
            [50, 60],
            id="honour extended resource the pod requests",
        ),
        pytest.param(
            make_pod({"cpu": "1000", "memory": "2000", EXT: "2"}, CPU_AND_MEMORY[1]),
            _nodes(("node1", "6000", "10000"), ("node2", "6000", "10000", {EXT: "0"})),
            [],
            (*CPU_MEM, (EXT, 5)),
            [50, 50],
            id="extended resource the node lacks or has zero of is skipped",
        ),
    ],
)
def test_least_allocated(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: tuple[tuple[str, int], ...],
    want: list[int],
) -> None:
    assert fit_scores(pod, nodes, existing, strategy("LeastAllocated", *resources)) == want


def test_least_allocated_is_the_default() -> None:
    pod = make_pod(*CPU_AND_MEMORY)
    nodes = _nodes(("node1", "4000", "10000"), ("node2", "6000", "10000"))
    assert fit_scores(pod, nodes, [], None) == [37, 50]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("node1", "4000", "10000"), ("node2", "6000", "10000")),
            [],
            CPU_MEM,
            [62, 50],
            id="differently sized nodes",
        ),
        pytest.param(
            make_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
            _nodes(("node1", "10000", "20000"), ("node2", "10000", "20000")),
            [
                make_pod({"cpu": "3000", "memory": "0"}, node="node1"),
                make_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            CPU_MEM,
            [42, 55],  # node1: cpu 60, mem 25 -> 42; node2: cpu 60, mem 50 -> 55
            id="pods scheduled with resources",
        ),
        pytest.param(
            make_pod({"cpu": "5000", "memory": "9000"}),
            _nodes(("node1", "4000", "10000")),
            [make_pod({"cpu": "3000", "memory": "5000"}, node="node1")],
            (("cpu", 1), ("memory", 4)),
            [100],  # both over capacity: capped at 100
            id="requested capped at capacity",
        ),
        pytest.param(
            make_pod({"cpu": "2000", "memory": "4000", EXT: "2"}),
            _nodes(("node1", "4000", "10000", {EXT: "8"}), ("node2", "4000", "10000", {EXT: "2"})),
            [],
            (*CPU_MEM, (EXT, 5)),
            # node1: cpu 50, mem 40, ext 25 -> (50+40+125)/7 = 30; node2: ext 100 -> 590/7 = 84
            [30, 84],
            id="extended resource with weight",
        ),
    ],
)
def test_most_allocated(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: tuple[tuple[str, int], ...],
    want: list[int],
) -> None:
    assert fit_scores(pod, nodes, existing, strategy("MostAllocated", *resources)) == want


def test_requested_to_capacity_ratio_strategy() -> None:
    args = strategy("RequestedToCapacityRatio", *CPU_MEM, shape=[(0, 10), (100, 0)])
    nodes = _nodes(("node1", "4000", "10000"), ("node2", "6000", "10000"))
    assert fit_scores(make_pod(), nodes, [make_pod(node="node1")], args) == [100, 100]
    assert fit_scores(make_pod(*CPU_AND_MEMORY), nodes, [], args) == [38, 50]
    existing = [
        make_pod({"cpu": "3000", "memory": "5000"}, node="node1"),
        make_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
    ]
    assert fit_scores(make_pod(), nodes, existing, args) == [38, 50]


@pytest.mark.parametrize(
    ("pod_req", "existing_on_node2", "want"),
    [
        ({}, False, [0, 0]),
        ({"intel.com/foo": "2"}, False, [2, 5]),
        ({"intel.com/foo": "2"}, True, [2, 10]),
        ({"intel.com/foo": "4"}, False, [5, 10]),
    ],
)
def test_bin_packing_single_extended_resource(
    pod_req: dict[str, str], existing_on_node2: bool, want: list[int]
) -> None:
    args = strategy("RequestedToCapacityRatio", ("intel.com/foo", 1), shape=[(0, 0), (100, 1)])
    nodes = _nodes(
        ("node1", "4000", str(10000 * 1024 * 1024), {"intel.com/foo": "8"}),
        ("node2", "4000", str(10000 * 1024 * 1024), {"intel.com/foo": "4"}),
    )
    existing = [make_pod({"intel.com/foo": "2"}, node="node2")] if existing_on_node2 else []
    pod = make_pod(pod_req) if pod_req else make_pod()
    assert fit_scores(pod, nodes, existing, args) == want


def test_fit_scoring_uses_non_zero_defaults_and_ignores_pod_level_requests() -> None:
    nodes = [make_node("n1", {"cpu": "4", "memory": "16Gi"})]
    running = [make_pod({"cpu": "3500m", "memory": "15Gi"}, node="n1")]
    # 500m at pod level: v1.35's NodeResourcesFit scorer still counts the container default 100m.
    pod = make_pod({"memory": "1Gi"}, pod_level={"cpu": "500m"})
    # cpu: (4000 - 3600) * 100 / 4000 = 10; memory full: 0 -> 5.
    assert fit_scores(pod, nodes, running) == [5]
    # A best-effort pod counts 100m / 200Mi; existing best-effort pods count the same.
    nodes = [make_node("n1", {"cpu": "1", "memory": "1000Mi"})]
    # cpu: (1000 - 200) * 100 / 1000 = 80; memory: (1000Mi - 400Mi) -> 60.
    assert fit_scores(make_pod({}), nodes, [make_pod({}, node="n1")]) == [70]


def test_balanced_allocation_uses_pod_level_requests_without_defaults() -> None:
    nodes = [make_node("n1", {"cpu": "4", "memory": "16Gi"})]
    running = [make_pod({"cpu": "3500m", "memory": "15Gi"}, node="n1")]
    pod = make_pod({"memory": "1Gi"}, pod_level={"cpu": "500m"})
    assert ba_scores(pod, nodes, running) == [100]
    # Without the pod-level cpu, only the container's memory counts: cpu .875 vs memory 1.
    assert ba_scores(make_pod({"memory": "1Gi"}), nodes, running) == [93]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"),
    [
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("m1", "4000", "10000"), ("m2", "6000", "10000")),
            [],
            [87, 100],
            id="nothing scheduled, resources requested, differently sized machines",
        ),
        pytest.param(
            make_pod(*CPU_AND_MEMORY),
            _nodes(("m1", "10000", "20000"), ("m2", "10000", "20000")),
            [
                make_pod({"cpu": "1000", "memory": "0"}, {"cpu": "2000", "memory": "0"}, node="m1"),
                make_pod(*CPU_AND_MEMORY, node="m2"),
            ],
            [82, 95],  # m1: .6 vs .25; m2: .6 vs .5
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            make_pod({"cpu": "1000", "memory": "0"}, {"cpu": "2000", "memory": "0"}),
            _nodes(("m1", "4000", "10000"), ("m2", "4000", "10000")),
            [
                make_pod({"cpu": "1000", "memory": "0"}, {"cpu": "2000", "memory": "0"}, node="m1"),
                make_pod(*CPU_AND_MEMORY, node="m2"),
            ],
            [50, 75],  # cpu capped at 1: m1 1 vs 0, m2 1 vs .5
            id="requested resources exceed node capacity",
        ),
        pytest.param(
            make_pod({"cpu": "1"}),
            [make_node("m1"), make_node("m2")],
            [],
            [100, 100],
            id="zero node resources",
        ),
    ],
)
def test_balanced_allocation(
    pod: Pod, nodes: list[Node], existing: list[Pod], want: list[int]
) -> None:
    assert ba_scores(pod, nodes, existing) == want


def test_balanced_allocation_three_resources() -> None:
    args = NodeResourcesBalancedAllocationArgs(
        (ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec("example.com/gpu"))
    )
    nodes = _nodes(
        ("n1", "4", "4Gi", {"example.com/gpu": "4"}), ("n2", "4", "4Gi"), ("n3", "4", "4Gi")
    )
    pod = make_pod({"cpu": "2", "memory": "1Gi", "example.com/gpu": "4"})
    # n1: .5, .25, 1 -> 68; n2/n3 lack the gpu: .5 vs .25 -> 87.
    assert ba_scores(pod, nodes, [], args) == [68, 87, 87]
    # A pod without a gpu request skips the gpu even where the node has it.
    assert ba_scores(make_pod({"cpu": "2", "memory": "1Gi"}), nodes, [], args) == [87, 87, 87]


def test_balanced_allocation_skips_best_effort_pods() -> None:
    snap = Snapshot.from_objects([], [make_node("n1", {"cpu": "1", "memory": "1Gi"})])
    plugin = new_balanced_allocation(None, BasicHandle(snap))
    for pod in (make_pod(), make_pod({}), make_pod({"cpu": "0"}), make_pod({EXT: "1"})):
        state = CycleState()
        status = plugin.pre_score(state, pod, snap.list())
        assert status is not None and status.code == Code.Skip
        # Score without PreScore: best-effort pods get 0.
        assert plugin.score(CycleState(), pod, snap.get("n1")) == (0, None)
    state = CycleState()
    assert plugin.pre_score(state, make_pod({"memory": "1"}), snap.list()) is None


def test_fit_pre_score_never_skips_and_score_works_without_it() -> None:
    snap = Snapshot.from_objects([], [make_node("n1", {"cpu": "1", "memory": "1000Mi"})])
    plugin = fit_plugin()
    state = CycleState()
    assert plugin.pre_score(state, make_pod(), snap.list()) is None
    assert state.read("PreScoreNodeResourcesFit").pod_requests == [0, 0]
    # One best-effort container: 100m of 1 cpu -> 90, 200Mi of 1000Mi -> 80: 85.
    assert plugin.score(CycleState(), make_pod({}), snap.get("n1")) == (85, None)


# --- NodeResourcesFit filter ---


def run_filter(
    pod: Pod, node: Node, existing: list[Pod], args: NodeResourcesFitArgs | None = None
) -> tuple[Code, tuple[str, ...]] | None:
    snap = Snapshot.from_objects(existing, [node])
    plugin = fit_plugin(args)
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap.list()) == (None, None)
    status = plugin.filter(state, pod, snap.get(node.metadata.name))
    return None if status is None else (status.code, status.reasons)


NODE = make_node(
    "n1",
    {
        "cpu": "4",
        "memory": "8Gi",
        "ephemeral-storage": "10Gi",
        EXT: "4",
        "hugepages-2Mi": "20Mi",
        "example.com/gpu": "2",
    },
    pods="3",
)
RUNNING = [make_pod({"cpu": "3", "memory": "6Gi", EXT: "3", "ephemeral-storage": "4Gi"}, node="n1")]
U = Code.Unschedulable
UU = Code.UnschedulableAndUnresolvable


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(make_pod({"cpu": "1", "memory": "2Gi"}), RUNNING, None, id="fits exactly"),
        pytest.param(make_pod(), RUNNING, None, id="requests nothing"),
        pytest.param(
            make_pod({"cpu": "1001m"}), RUNNING, (U, ("Insufficient cpu",)), id="cpu short by 1m"
        ),
        pytest.param(
            make_pod({"cpu": "5"}),
            RUNNING,
            (UU, ("Insufficient cpu",)),
            id="cpu beyond allocatable",
        ),
        pytest.param(
            make_pod({"cpu": "2", "memory": "9Gi"}),
            RUNNING,
            (UU, ("Insufficient cpu", "Insufficient memory")),
            id="one unresolvable reason makes the status unresolvable",
        ),
        pytest.param(
            make_pod({"ephemeral-storage": "7Gi"}),
            RUNNING,
            (U, ("Insufficient ephemeral-storage",)),
            id="ephemeral-storage",
        ),
        pytest.param(
            make_pod({EXT: "2", "example.com/gpu": "3", "hugepages-2Mi": "30Mi"}),
            RUNNING,
            (
                UU,
                (
                    "Insufficient abc.com/xyz",
                    "Insufficient example.com/gpu",
                    "Insufficient hugepages-2Mi",
                ),
            ),
            id="scalar resources in name order",
        ),
        pytest.param(
            make_pod({"nvidia.com/gpu": "1"}),
            RUNNING,
            (UU, ("Insufficient nvidia.com/gpu",)),
            id="scalar resource the node lacks",
        ),
        pytest.param(
            make_pod({"nvidia.com/gpu": "0", "cpu": "0"}),
            RUNNING,
            None,
            id="zero requests are not checked",
        ),
        pytest.param(
            make_pod({"cpu": "2", "memory": "3Gi", "ephemeral-storage": "7Gi", EXT: "2"}),
            [*RUNNING, make_pod(node="n1"), make_pod(node="n1")],
            (
                U,
                (
                    "Too many pods",
                    "Insufficient cpu",
                    "Insufficient memory",
                    "Insufficient ephemeral-storage",
                    "Insufficient abc.com/xyz",
                ),
            ),
            id="every reason, in kube-scheduler's order",
        ),
        pytest.param(
            make_pod(),
            [*RUNNING, make_pod(node="n1"), make_pod(node="n1")],
            (U, ("Too many pods",)),
            id="too many pods even for a pod requesting nothing",
        ),
        pytest.param(
            make_pod({"cpu": "1"}, init=(({"cpu": "2"}, None),)),
            RUNNING,
            (U, ("Insufficient cpu",)),
            id="init container peak",
        ),
        pytest.param(
            make_pod({"cpu": "500m"}, init=(({"cpu": "600m"}, "Always"),)),
            RUNNING,
            (U, ("Insufficient cpu",)),
            id="sidecar adds to app containers",
        ),
        pytest.param(
            make_pod({"cpu": "900m"}, overhead={"cpu": "101m"}),
            RUNNING,
            (U, ("Insufficient cpu",)),
            id="overhead",
        ),
        pytest.param(
            make_pod({"cpu": "100m"}, pod_level={"cpu": "2"}),
            RUNNING,
            (U, ("Insufficient cpu",)),
            id="pod-level requests override containers",
        ),
    ],
)
def test_filter(pod: Pod, existing: list[Pod], want: Any) -> None:
    assert run_filter(pod, NODE, existing) == want


def test_filter_passes_pods_without_a_request_on_overcommitted_nodes() -> None:
    running = [make_pod({"cpu": "5", "memory": "9Gi"}, node="n1")]
    assert run_filter(make_pod({"ephemeral-storage": "1"}), NODE, running) is None
    assert run_filter(make_pod({"cpu": "1m"}), NODE, running) == (U, ("Insufficient cpu",))


GPU = "Insufficient example.com/gpu"
UNKNOWN = "Insufficient example.com/unknown"
HUGEPAGES = "Insufficient hugepages-2Mi"


@pytest.mark.parametrize(
    ("ignored", "groups", "want"),
    [
        ((), (), (GPU, UNKNOWN, HUGEPAGES)),
        (("example.com/gpu",), (), (UNKNOWN, HUGEPAGES)),
        ((), ("example.com",), (HUGEPAGES,)),
        ((), ("example",), (GPU, UNKNOWN, HUGEPAGES)),
        (("example.com/gpu", "example.com/unknown"), (), (HUGEPAGES,)),
        # hugepages are not extended resources: neither list can ignore them.
        (("hugepages-2Mi",), ("hugepages-2Mi",), (GPU, UNKNOWN, HUGEPAGES)),
    ],
)
def test_filter_ignored_resources(
    ignored: tuple[str, ...], groups: tuple[str, ...], want: tuple[str, ...]
) -> None:
    args = NodeResourcesFitArgs(ignored_resources=ignored, ignored_resource_groups=groups)
    pod = make_pod({"example.com/gpu": "3", "example.com/unknown": "1", "hugepages-2Mi": "22Mi"})
    assert run_filter(pod, NODE, [], args) == (UU, want)


def test_filter_ignored_resource_can_make_the_node_fit() -> None:
    args = NodeResourcesFitArgs(ignored_resources=("example.com/unknown",))
    assert run_filter(make_pod({"example.com/unknown": "1"}), NODE, [], args) is None


def test_filter_without_pre_filter_is_an_error() -> None:
    snap = Snapshot.from_objects([], [NODE])
    status = fit_plugin().filter(CycleState(), make_pod(), snap.get("n1"))
    assert status is not None and status.code == Code.Error
    assert "PreFilterNodeResourcesFit" in status.message()


def test_pre_filter_state_clones_to_itself() -> None:
    state = CycleState()
    fit_plugin().pre_filter(state, make_pod({"cpu": "1"}), [])
    clone = state.clone()
    assert clone.read("PreFilterNodeResourcesFit").milli_cpu == 1000


# --- queueing hints ---


def test_events_to_register() -> None:
    events = fit_plugin().events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)
    assert not hasattr(BalancedAllocation, "events_to_register")


def test_hint_after_pod_event() -> None:
    plugin = fit_plugin()
    target = make_pod({"cpu": "1"})
    hint = plugin.is_schedulable_after_pod_event
    assert hint(target, make_pod({"cpu": "1"}), None) == QueueingHint.QueueSkip
    assert hint(target, make_pod({"cpu": "1"}, node="n1"), None) == QueueingHint.Queue
    assert hint(target, make_pod({"cpu": "1"}, nominated="n1"), None) == QueueingHint.Queue
    old = make_pod({"cpu": "2", "memory": "1Gi"}, node="n1", uid="u1")
    less_cpu = make_pod({"cpu": "1", "memory": "1Gi"}, node="n1", uid="u1")
    less_mem = make_pod({"cpu": "2", "memory": "1Mi"}, node="n1", uid="u1")
    assert hint(target, old, less_cpu) == QueueingHint.Queue
    assert hint(target, old, less_mem) == QueueingHint.QueueSkip
    unscheduled = make_pod({"cpu": "1"}, uid="u2")
    assert hint(target, make_pod({"cpu": "2"}, uid="u2"), unscheduled) == QueueingHint.QueueSkip
    me = make_pod({"cpu": "500m"}, uid=target.uid)
    assert hint(target, target, me) == QueueingHint.Queue


def test_hint_after_node_change() -> None:
    plugin = fit_plugin()
    hint = plugin.is_schedulable_after_node_change
    pod = make_pod({"cpu": "2"})
    small = make_node("n1", {"cpu": "1", "memory": "1Gi"})
    big = make_node("n1", {"cpu": "4", "memory": "1Gi"})
    bigger = make_node("n1", {"cpu": "8", "memory": "1Gi"})
    more_mem = make_node("n1", {"cpu": "4", "memory": "2Gi"})
    more_pods = make_node("n1", {"cpu": "4", "memory": "1Gi"}, pods="200")
    assert hint(pod, None, small) == QueueingHint.QueueSkip
    assert hint(pod, None, big) == QueueingHint.Queue
    assert hint(pod, small, big) == QueueingHint.Queue
    assert hint(pod, big, bigger) == QueueingHint.Queue
    assert hint(pod, big, more_mem) == QueueingHint.QueueSkip
    assert hint(pod, big, more_pods) == QueueingHint.Queue
    assert hint(make_pod(), big, more_mem) == QueueingHint.QueueSkip


def test_hints_with_a_wrongly_typed_old_object_queue_with_an_error() -> None:
    """util.As runs first in v1.35's hints: (Queue, err), not QueueSkip."""
    from kschedlib.errors import QueueingHintError

    plugin = fit_plugin()
    pod = make_pod({"cpu": "2"})
    small = make_node("n1", {"cpu": "1", "memory": "1Gi"})
    with pytest.raises(QueueingHintError):  # the new node does not fit: was QueueSkip
        plugin.is_schedulable_after_node_change(pod, "old", small)
    with pytest.raises(QueueingHintError):
        plugin.is_schedulable_after_pod_event(pod, small, make_pod({"cpu": "1"}, uid="u2"))
    with pytest.raises(QueueingHintError):  # a deletion whose old object is no pod
        plugin.is_schedulable_after_pod_event(pod, small, None)


# --- args ---


def test_fit_args_defaults() -> None:
    args = decode(NodeResourcesFitArgs, {"apiVersion": "kubescheduler.config.k8s.io/v1"})
    assert args == NodeResourcesFitArgs()
    assert args.scoring_strategy == ScoringStrategy(
        "LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    )
    args = decode(
        NodeResourcesFitArgs,
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [
                    {"name": "cpu"},
                    {"name": "memory", "weight": 0},
                    {"name": "x", "weight": 7},
                ],
            }
        },
    )
    assert args.scoring_strategy.resources == (
        ResourceSpec("cpu", 1),
        ResourceSpec("memory", 1),
        ResourceSpec("x", 7),
    )
    args = decode(NodeResourcesFitArgs, {"scoringStrategy": {"type": "MostAllocated"}})
    assert args.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert args.validate() == []
    args = decode(
        NodeResourcesFitArgs,
        {
            "ignoredResources": ["example.com/foo"],
            "ignoredResourceGroups": ["example.org"],
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
        },
    )
    assert args.ignored_resources == ("example.com/foo",)
    assert args.ignored_resource_groups == ("example.org",)
    rtcr = args.scoring_strategy.requested_to_capacity_ratio
    assert rtcr is not None and rtcr.shape[1] == UtilizationShapePoint(100, 10)
    assert args.validate() == []


def test_balanced_allocation_args_defaults() -> None:
    assert decode(NodeResourcesBalancedAllocationArgs, {}).resources == (
        ResourceSpec("cpu", 1),
        ResourceSpec("memory", 1),
    )
    args = decode(
        NodeResourcesBalancedAllocationArgs,
        {"resources": [{"name": "cpu"}, {"name": "example.com/gpu"}]},
    )
    assert args.resources == (ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 1))
    assert args.validate() == []


QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "LeastAllocated", (ResourceSpec("memory", -1), ResourceSpec("cpu", 101))
                )
            ),
            [
                (
                    "scoringStrategy.resources[0].weight",
                    "Invalid value: -1: resource weight of memory not in valid range (0, 100]",
                ),
                (
                    "scoringStrategy.resources[1].weight",
                    "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
                ),
            ],
        ),
        (
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("Foo")),
            [
                (
                    "scoringStrategy.type",
                    'Unsupported value: "Foo": supported values: "LeastAllocated", '
                    '"MostAllocated", "RequestedToCapacityRatio"',
                )
            ],
        ),
        (
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy()),
            [
                (
                    "scoringStrategy.type",
                    'Unsupported value: "": supported values: "LeastAllocated", '
                    '"MostAllocated", "RequestedToCapacityRatio"',
                )
            ],
        ),
        (
            NodeResourcesFitArgs(ignored_resource_groups=("example.com/aaa", "example.com")),
            [
                (
                    "ignoredResourceGroups[0]",
                    "Invalid value: \"example.com/aaa\": resource group name can't contain '/'",
                )
            ],
        ),
        (
            NodeResourcesFitArgs(ignored_resources=("-bad",)),
            [("ignoredResources[0]", f'Invalid value: "-bad": {QNAME_MSG}')],
        ),
        (
            strategy("RequestedToCapacityRatio", *CPU_MEM, shape=[]),
            [("scoringStrategy.shape", "Required value: at least one point must be specified")],
        ),
        (
            strategy("RequestedToCapacityRatio", *CPU_MEM, shape=[(10, 1), (10, 2), (5, 3)]),
            [
                (
                    "scoringStrategy.shape[1].utilization",
                    "Invalid value: 10: values must be sorted in increasing order",
                )
            ],
        ),
        (
            strategy("RequestedToCapacityRatio", *CPU_MEM, shape=[(-1, 11), (101, -1)]),
            [
                (
                    "scoringStrategy.shape[0].utilization",
                    "Invalid value: -1: not in valid range [0, 100]",
                ),
                ("scoringStrategy.shape[0].score", "Invalid value: 11: not in valid range [0, 10]"),
                (
                    "scoringStrategy.shape[1].utilization",
                    "Invalid value: 101: not in valid range [0, 100]",
                ),
                ("scoringStrategy.shape[1].score", "Invalid value: -1: not in valid range [0, 10]"),
            ],
        ),
        (
            NodeResourcesBalancedAllocationArgs(
                (ResourceSpec("cpu"), ResourceSpec("memory", 2), ResourceSpec("cpu"))
            ),
            [
                ("resources[1].weight", "Invalid value: 2: must be 1"),
                ("resources[2].name", 'Duplicate value: "cpu"'),
            ],
        ),
    ],
)
def test_args_validation(args: Any, want: list[tuple[str, str]]) -> None:
    assert args.validate() == want


def test_factories_reject_invalid_args() -> None:
    with pytest.raises(ConfigError, match=r"scoringStrategy\.type"):
        new_fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("Foo")), None)
    with pytest.raises(ConfigError, match="shape"):
        new_fit(
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("RequestedToCapacityRatio")), None
        )
    with pytest.raises(ConfigError, match="must be 1"):
        new_balanced_allocation(
            NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 3),)), None
        )


def test_plugins_register() -> None:
    registry = Registry({spec.name: spec for spec in PLUGINS})
    assert set(registry) == {FIT_NAME, BALANCED_ALLOCATION_NAME}
    assert FIT_NAME == "NodeResourcesFit"
    assert BALANCED_ALLOCATION_NAME == "NodeResourcesBalancedAllocation"
    assert registry[FIT_NAME].args_type is NodeResourcesFitArgs
    assert registry[BALANCED_ALLOCATION_NAME].args_type is NodeResourcesBalancedAllocationArgs
    fit = registry[FIT_NAME].factory(None, None)
    ba = registry[BALANCED_ALLOCATION_NAME].factory(None, None)
    assert isinstance(fit, Fit) and fit.name == FIT_NAME
    assert isinstance(ba, BalancedAllocation) and ba.name == BALANCED_ALLOCATION_NAME


def test_fits_reports_amounts() -> None:
    snap = Snapshot.from_objects(RUNNING, [NODE])
    got = fits(make_pod({"cpu": "2", "example.com/gpu": "3"}), snap.get("n1"))
    assert got == [
        InsufficientResource("cpu", "Insufficient cpu", 2000, 3000, 4000, False),
        InsufficientResource("example.com/gpu", "Insufficient example.com/gpu", 3, 0, 2, True),
    ]
    assert fits(make_pod({"cpu": "1"}), snap.get("n1")) == []
