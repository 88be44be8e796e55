"""Parts of the batched capacity loop against what they replace: replicas built by field
copies against the constructors, and InterPodAffinity's window scores against the plugin's
Score and NormalizeScore node by node."""

from __future__ import annotations

import gc
import importlib
from typing import Any

import attrs

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import NodeScore
from kschedlib.whatif.capacity import make_replica
from tests.whatif.helpers import pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# kschedlib.whatif binds the name ``capacity`` to the function: reach the package's modules.
window = importlib.import_module("kschedlib.whatif.capacity.window")
loop = importlib.import_module("kschedlib.whatif.capacity.loop")
replicas = importlib.import_module("kschedlib.whatif.capacity.replicas")


def test_replicas_equal_what_the_constructors_build() -> None:
    tpl = pod("web", labels={"app": "web"}, owner=("ReplicaSet", "other"),
              spec={"priority": 5, "nodeSelector": {"tier": "gold"}})
    maker = replicas.Replicas(tpl, "web")
    for i in (0, 1, 27, 9999):
        got = maker.make(i)
        name = replicas.replica_name("web", i)
        owner = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="web",
                               uid="whatif-rs-web", controller=True)
        meta = attrs.evolve(tpl.metadata, name=name, uid=f"whatif-default-{name}",
                            owner_references=(owner,))  # the template's controller replaced
        want = Pod(api_version=tpl.api_version, kind=tpl.kind, metadata=meta, spec=tpl.spec,
                   status=attrs.evolve(tpl.status, nominated_node_name=""))
        assert got == want and type(got.metadata) is ObjectMeta
        assert got.spec is tpl.spec
        bound = maker.bound(got, "n7")
        assert bound == got.with_node_name("n7")
        assert maker.bound(make_replica(tpl, "web", i + 1), "n7").spec is bound.spec


def test_collector_is_paused_only_inside_the_loop() -> None:
    assert gc.isenabled()
    with loop.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with loop.collector_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def _cluster() -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=2)
    for i in range(30):
        labels = {HOST: f"n{i:02d}", "rack": f"r{i % 4}"}
        if i % 7:
            labels[ZONE] = f"z{i % 3}"
        s.add_node(Node.from_dict({"metadata": {"name": f"n{i:02d}", "labels": labels},
                                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}))
    prefer: dict[str, Any] = {"affinity": {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 7, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "rack"}}]}}}
    for k in range(12):
        s.add_pod(pod(f"r{k}", node_name=f"n{(k * 5) % 30:02d}", owner=None,
                      labels={"app": "web" if k % 3 else "db"}, spec=prefer if k % 4 == 0 else {}))
    return s


def test_affinity_window_scores_equal_the_plugin_node_by_node() -> None:
    s = _cluster()
    tpl = pod("web", labels={"app": "web"}, owner=None, spec={"affinity": {
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 40, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                              "topologyKey": ZONE}},
            {"weight": 9, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}},
                                             "topologyKey": HOST}}]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                             "topologyKey": "rack"}}]}}})
    fwk = s.framework_for(tpl)
    assert fwk is not None
    s.cache.update_snapshot(s.snapshot)
    nodes = s.snapshot.node_info_list
    pl = next(p for p in fwk.score_plugins if p.name == "InterPodAffinity")
    columns = window.LabelColumns(nodes)
    for feasible in ([3, 4, 5, 6, 7, 8, 9, 10], list(range(0, 30, 3)), [29, 0, 1, 2], [13]):
        state = CycleState()
        fwk.run_pre_filter_plugins(state, tpl)
        win = [nodes[p] for p in feasible]
        assert pl.pre_score(state, tpl, win) is None  # scored: not skipped
        want = [pl.score(state, tpl, ni)[0] for ni in win]
        scores = [NodeScore(ni.name, v) for ni, v in zip(win, want, strict=True)]
        assert pl.score_extensions().normalize_score(state, tpl, scores) is None
        got = window.window_scores(pl, pl.score_extensions(), state, tpl, win, feasible, columns)
        assert got == [ns.score for ns in scores]
        assert len(set(got)) > 1 or len(feasible) == 1
