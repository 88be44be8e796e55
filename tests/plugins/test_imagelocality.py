"""ImageLocality Score, tables from kube-scheduler's image_locality_test.go, and the corpus."""

from __future__ import annotations

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle
from kschedlib.framework.types import ImageStateSummary
from kschedlib.plugins import imagelocality
from kschedlib.plugins.imagelocality import (
    MAX_CONTAINER_THRESHOLD,
    MIN_THRESHOLD,
    calculate_priority,
    normalized_image_name,
    scaled_image_score,
)
from tests.plugins.simple_corpus import check_scenario, scenario_names

MB = 1024 * 1024


def _pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {
                "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)],
                "initContainers": [{"name": f"i{i}", "image": im} for i, im in enumerate(init)],
            },
        }
    )


def _node(name: str, *images: tuple[list[str], int]) -> Node:
    return Node.from_dict(
        {
            "metadata": {"name": name},
            "status": {"images": [{"names": n, "sizeBytes": s * MB} for n, s in images]},
        }
    )


NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
]
NODE_250_10 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900 = [
    (["gcr.io/600:latest"], 600),
    (["gcr.io/40:latest"], 40),
    (["gcr.io/900:latest"], 900),
]
NODE_300_600_900 = [
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]

CASES = [
    (
        "two images spread on two nodes",
        _pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        "two images on one node",
        _pod("gcr.io/40", "gcr.io/300"),
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    (
        "if exceed limit, use limit",
        _pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10],
        [100, 0],
    ),
    (
        "limit with a node without images",
        _pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, []],
        [66, 0, 0],
    ),
    (
        "multiple large images",
        _pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, []],
        [32, 36, 0],
    ),
    (
        "multiple small images",
        _pod("gcr.io/30", "gcr.io/40"),
        [NODE_20_30_40, NODE_4000_30],
        [1, 0],
    ),
    (
        "init containers count",
        _pod("gcr.io/30", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


@pytest.mark.parametrize(("name", "pod", "images", "want"), CASES, ids=[c[0] for c in CASES])
def test_score(
    name: str, pod: Pod, images: list[list[tuple[list[str], int]]], want: list[int]
) -> None:
    nodes = [_node(f"node{i}", *imgs) for i, imgs in enumerate(images)]
    snap = Snapshot.from_objects([], nodes)
    pl = imagelocality.new(None, BasicHandle(snap))
    assert pl.score_extensions() is None
    state = CycleState()
    got = []
    for n in nodes:
        score, st = pl.score(state, pod, snap.get(n.metadata.name))
        assert st is None
        got.append(score)
    assert got == want


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:abcd", "root@sha256:abcd"),
        ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
    ],
)
def test_normalized_image_name(image: str, want: str) -> None:
    assert normalized_image_name(image) == want


def test_thresholds() -> None:
    assert (MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD) == (23 * MB, 1000 * MB)
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(MIN_THRESHOLD, 1) == 0
    assert calculate_priority(5 * MAX_CONTAINER_THRESHOLD, 1) == 100
    assert calculate_priority(MAX_CONTAINER_THRESHOLD, 2) == 49


def test_image_locality_001_kafka_and_elasticsearch() -> None:
    """image-locality-001: kafka (298501884 B) on 2 of 8 nodes scores 4, elasticsearch
    (1284531120 B) on 4 of 8 scores 60."""
    kafka = scaled_image_score(ImageStateSummary(298501884, 2), 8)
    assert kafka == 74625471
    assert calculate_priority(kafka, 1) == 4
    es = scaled_image_score(ImageStateSummary(1284531120, 4), 8)
    assert calculate_priority(es, 1) == 60


def test_pod_image_names_cached_per_cycle() -> None:
    snap = Snapshot.from_objects([], [_node("a", (["x:latest"], 100)), _node("b")])
    pl = imagelocality.new(None, BasicHandle(snap))
    state = CycleState()
    first, _ = pl.score(state, _pod("x"), snap.get("a"))
    cached = state.read(imagelocality.image_locality.STATE_KEY)
    assert cached.names == ("x:latest",) and cached.total_num_nodes == 2
    assert cached.clone() is cached
    again, _ = pl.score(state, _pod("x"), snap.get("a"))
    assert first == again == calculate_priority(50 * MB, 1)


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, imagelocality.NAME, imagelocality.new)
    assert problems == []


def test_node_count_is_left_out_of_the_stored_scores_only_when_no_node_holds_an_image() -> None:
    # The stored scores key on the fragment: without any of the pod's images on a node, every
    # node scores the same whatever the node count, so the count is not part of it.
    nodes = [_node("a", *NODE_40_300_2000), _node("b", *NODE_250_10), _node("c")]
    snap = Snapshot.from_objects([], nodes)
    pl = imagelocality.new(None, BasicHandle(snap))
    held, absent, init = _pod("gcr.io/250"), _pod("gcr.io/none"), _pod("x", init=("gcr.io/40",))
    assert pl.node_local_fragment(held) == (pl.sign_pod(held), 3)
    assert pl.node_local_fragment(init) == (pl.sign_pod(init), 3)
    assert pl.node_local_fragment(absent) == (pl.sign_pod(absent), None)
    for count in (1, 2, 3):  # the scores of such a pod do not depend on the node count
        small = Snapshot.from_objects([], nodes[:count])
        state = CycleState()
        scores, st = imagelocality.new(None, BasicHandle(small)).score_nodes(
            state, absent, small.list())
        assert st is None and scores == [calculate_priority(0, 1)] * count
    bare = Snapshot()  # image names unknown: the count stays in
    bare.node_info_list = snap.list()
    bare.image_names = None
    assert imagelocality.new(None, BasicHandle(bare)).node_local_fragment(absent) == (
        pl.sign_pod(absent), 3)
