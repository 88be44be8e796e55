"""Every real-world dump in tests/data/realdata (a copy of ../shared/realdata, provenance in
its SOURCES.md) loads and schedules: as dumped (bound pods go to the cache) and rescheduled
(nodeName cleared, every live pod placed again on the dump's nodes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from kschedlib.api import Node, Pod, load_cluster, load_objects
from kschedlib.api.pod import is_terminal
from kschedlib.cli.simulate import simulate
from kschedlib.results import Outcome

DATA = Path(__file__).resolve().parent.parent / "data" / "realdata"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "realdata"
FILES = sorted(p.name for p in DATA.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
# Pod dumps that come with the nodes of the same cluster.
PAIRS = {
    "honeycomb-agent__testdata_pods.json": "honeycomb-agent__testdata_nodes.json",
    "presentation_duckdb_k8s__pods.json": "presentation_duckdb_k8s__nodes.json",
    "supergiant-control@f5bda40__pods.json": "supergiant-control@f5bda40__nodes.json",
}
NODE_FILES = [f for f in FILES if any(isinstance(o, Node) for o in load_objects(DATA / f))]
POOL = [DATA / f for f in NODE_FILES if f not in PAIRS.values()]
POD_FILES = [f for f in FILES if f not in NODE_FILES]


def test_copy_is_complete_and_current() -> None:
    assert len(FILES) == 28
    if SHARED.is_dir():
        shared = sorted(p.name for p in SHARED.iterdir() if p.suffix != ".md")
        assert shared == FILES, "tests/data/realdata is stale: copy ../shared/realdata again"
        for name in FILES:
            assert (SHARED / name).read_bytes() == (DATA / name).read_bytes(), name


@pytest.mark.parametrize("name", FILES)
def test_every_file_loads(name: str) -> None:
    objs = load_objects(DATA / name)
    assert objs, name
    assert all(isinstance(o, (Node, Pod)) or o.kind == "Deployment" for o in objs)
    assert not objs.ignored


def _clear_node_name(objs: list[Any]) -> list[Any]:
    return [
        attrs.evolve(o, spec=attrs.evolve(o.spec, node_name=""))
        if isinstance(o, Pod) and not is_terminal(o)
        else o
        for o in objs
    ]


@pytest.mark.parametrize("name", POD_FILES)
def test_every_pod_dump_schedules(name: str) -> None:
    nodes = [DATA / PAIRS[name]] if name in PAIRS else POOL
    cluster = load_cluster(*nodes, DATA / name)
    # As dumped: bound pods land in the cache on their nodes, pending ones get an answer.
    sched = cluster.scheduler()
    results = {r.key: r for r in sched.run()}
    assert set(results) == {p.key for p in cluster.pending if not is_terminal(p)}
    # Rescheduled: every live pod gets a placement or a FailedScheduling reason.
    sim = simulate(cluster.config, _clear_node_name(cluster.objects))
    live = [p.key for p in cluster.pods if not is_terminal(p)]
    assert sim.order == live
    for key in live:
        r = sim.last[key]
        assert r.outcome == Outcome.Scheduled or r.message.startswith("0/"), (key, r.message)


def _placed(sim: Any) -> int:
    return sum(1 for r in sim.last.values() if r.outcome == Outcome.Scheduled)


def test_realdata_results_match_sources_md() -> None:
    """The outcomes recorded in SOURCES.md, which follow from the objects themselves."""
    c = load_cluster(DATA / PAIRS["honeycomb-agent__testdata_pods.json"],
                     DATA / "honeycomb-agent__testdata_pods.json")
    assert len(c.pods) == 11 and not c.pending
    assert _placed(simulate(None, _clear_node_name(c.objects))) == 2
    c = load_cluster(DATA / PAIRS["presentation_duckdb_k8s__pods.json"],
                     DATA / "presentation_duckdb_k8s__pods.json")
    sim = simulate(None, _clear_node_name(c.objects))
    assert _placed(sim) == 0
    assert all("2 Too many pods" in r.message for r in sim.last.values())
    c = load_cluster(*POOL, DATA / "k9s__internal_render_testdata_po_sidecar.json")
    sim = simulate(None, _clear_node_name(c.objects))
    assert [r.outcome for r in sim.last.values()] == [Outcome.Scheduled]
    c = load_cluster(*POOL, DATA / "k9s__internal_render_testdata_po.json")
    (r,) = simulate(None, _clear_node_name(c.objects)).last.values()
    assert 'persistentvolumeclaim "web" not found' in r.message


def test_json_and_yaml_of_one_pod_decode_identically() -> None:
    a = load_objects(DATA / "kubectl-neat__pod1-raw.json")
    b = load_objects(DATA / "kubectl-neat__pod1-raw.yaml")
    assert a == b


def test_whole_folder_is_one_cluster() -> None:
    cluster = load_cluster(DATA)
    assert len(cluster.nodes) == sum(len(load_objects(DATA / f)) for f in NODE_FILES)
    assert cluster.skipped_files == [os.path.join(str(DATA), "SOURCES.md")]
    assert cluster.scheduler().run() is not None
