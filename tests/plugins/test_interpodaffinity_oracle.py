"""Oracle tests: InterPodAffinity and PodTopologySpread reproduce kube-scheduler v1.35's filter
statuses and final weighted scores on the conformance corpus (pod-affinity, mixed here;
topology-spread in test_podtopologyspread_oracle.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.plugins import interpodaffinity, podtopologyspread
from tests.corpus import CORPUS  # noqa: E402

# The default profile's Filter order: a node rejected by an earlier plugin says nothing about
# ours; a node rejected by a later one (or feasible) must pass ours.
FILTER_ORDER = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
)

PLUGIN_MODULES: dict[str, Any] = {
    interpodaffinity.NAME: interpodaffinity,
    podtopologyspread.NAME: podtopologyspread,
}


def scenario_paths(family: str) -> list[Path]:
    return sorted(
        p
        for p in CORPUS.glob(f"{family}-*.json")
        if not p.name.endswith(".expected.json") and p.stem.rsplit("-", 1)[0] == family
    )


def _profile_settings(config: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """Score weights and plugin args of our plugins in profiles[0]."""
    weights = {interpodaffinity.NAME: 2, podtopologyspread.NAME: 2}
    raw_args: dict[str, Any] = {}
    if not config:
        return weights, {name: None for name in PLUGIN_MODULES}
    profile = config["profiles"][0]
    plugins = profile.get("plugins") or {}
    for point in ("multiPoint", "score"):
        for ref in (plugins.get(point) or {}).get("enabled") or ():
            if ref["name"] in weights and ref.get("weight"):
                weights[ref["name"]] = ref["weight"]
    for pc in profile.get("pluginConfig") or ():
        if pc["name"] in PLUGIN_MODULES:
            raw_args[pc["name"]] = {
                k: v for k, v in (pc.get("args") or {}).items() if k not in ("apiVersion", "kind")
            }
    args: dict[str, Any] = {}
    for name, mod in PLUGIN_MODULES.items():
        args_type = mod.PLUGINS[0].args_type
        args[name] = decode(args_type, raw_args[name]) if name in raw_args else None
    return weights, args


def _live(pod: Pod) -> bool:
    return pod.status.phase not in ("Succeeded", "Failed")


def _status_json(st: Any) -> dict[str, Any] | None:
    if st is None or st.code == Code.Success:
        return None
    return {"code": st.code.name, "plugin": st.plugin, "reasons": list(st.reasons)}


def run_scenario(path: Path) -> list[str]:
    """Replay a scenario and return the mismatches with the expectation for our plugins."""
    data = json.loads(path.read_text())
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    objects = ObjectStore()
    for ns in data.get("namespaces") or ():
        objects.upsert(Namespace.from_dict(ns))
    nodes = [Node.from_dict(n) for n in data["nodes"]]
    running = [p for p in (Pod.from_dict(x) for x in data["pods"]) if _live(p)]
    pending = {p.key: p for p in (Pod.from_dict(x) for x in data["pending"])}
    weights, args = _profile_settings(data.get("config"))
    mismatches: list[str] = []

    for idx, res in enumerate(expected["results"]):
        pod = pending[res["pod"]]
        where = f"{path.stem} #{idx} {res['pod']}"
        if not res.get("retry") and res.get("preFilter") is None:
            snapshot = Snapshot.from_objects(running, nodes)
            handle = BasicHandle(snapshot, objects)
            plugins = {name: mod.new(args[name], handle) for name, mod in PLUGIN_MODULES.items()}
            mismatches.extend(_check_pod(where, pod, res, snapshot, plugins, weights))
        post = res.get("postFilter") or {}
        victims = set(post.get("victims") or ())
        if victims:
            running = [p for p in running if p.key not in victims]
        if post.get("nominatedNodeName"):
            pending[pod.key] = pod.with_nominated_node_name(post["nominatedNodeName"])
        if res.get("selected"):
            running.append(pending[pod.key].with_node_name(res["selected"]))
    return mismatches


def _check_pod(
    where: str,
    pod: Pod,
    res: dict[str, Any],
    snapshot: Snapshot,
    plugins: dict[str, Any],
    weights: dict[str, int],
) -> list[str]:
    out: list[str] = []
    state = CycleState()
    all_nodes = snapshot.list()
    skipped: set[str] = set()
    for name, pl in plugins.items():
        _, st = pl.pre_filter(state, pod, all_nodes)
        if st is not None and st.code == Code.Skip:
            skipped.add(name)
        elif st is not None:
            out.append(f"{where}: {name} PreFilter returned {st}")
    statuses = res.get("filterStatuses") or {}
    feasible = set(res.get("feasibleNodes") or ())
    for ni in all_nodes:
        exp = statuses.get(ni.name)
        exp_plugin = exp.get("plugin") if exp else None
        if exp is not None and exp_plugin is None:
            continue  # left out by a PreFilter result
        for name, pl in plugins.items():
            if exp is not None and FILTER_ORDER.index(exp_plugin) < FILTER_ORDER.index(name):
                continue
            got = None if name in skipped else _status_json(pl.filter(state, pod, ni))
            want = exp if exp_plugin == name else None
            if exp is None and ni.name not in feasible:
                continue
            if got != want:
                out.append(f"{where}: {name} filter on {ni.name}: got {got}, want {want}")
    exp_scores: dict[str, dict[str, int]] = res.get("scores") or {}
    if not exp_scores:
        return out
    feasible_infos = [ni for ni in all_nodes if ni.name in feasible]
    for name, pl in plugins.items():
        want_present = any(name in s for s in exp_scores.values())
        st = pl.pre_score(state, pod, feasible_infos)
        if st is not None and st.code == Code.Skip:
            if want_present:
                out.append(f"{where}: {name} PreScore skipped, scores expected")
            continue
        if st is not None:
            out.append(f"{where}: {name} PreScore returned {st}")
            continue
        if not want_present:
            out.append(f"{where}: {name} PreScore ran, expected Skip")
            continue
        scores = []
        for ni in feasible_infos:
            s, sst = pl.score(state, pod, ni)
            assert sst is None, sst
            scores.append(NodeScore(ni.name, s))
        ext = pl.score_extensions()
        assert ext.normalize_score(state, pod, scores) is None
        got = {ns.name: ns.score * weights[name] for ns in scores}
        want = {n: s[name] for n, s in exp_scores.items()}
        if got != want:
            out.append(f"{where}: {name} scores: got {got}, want {want}")
    return out


@pytest.mark.parametrize("path", scenario_paths("pod-affinity"), ids=lambda p: p.stem)
def test_pod_affinity_scenarios(path: Path) -> None:
    mismatches = run_scenario(path)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("path", scenario_paths("mixed"), ids=lambda p: p.stem)
def test_mixed_scenarios(path: Path) -> None:
    mismatches = run_scenario(path)
    assert not mismatches, "\n".join(mismatches)


def test_corpus_is_present() -> None:
    assert len(scenario_paths("pod-affinity")) >= 22
    assert len(scenario_paths("mixed")) >= 10
