"""NodeResourcesFit / BalancedAllocation against kube-scheduler v1.35's recorded decisions for
every pod of every resources-* and scoring-strategies-* conformance scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle
from kschedlib.plugins.noderesources import (
    BALANCED_ALLOCATION_NAME,
    FIT_NAME,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    new_balanced_allocation,
    new_fit,
)
from tests.corpus import CORPUS  # noqa: E402

SCENARIOS = sorted(
    p
    for family in ("resources", "scoring-strategies")
    for p in CORPUS.glob(f"{family}-*.json")
    if not p.name.endswith(".expected.json")
)

def _param(path: Path) -> Any:
    return pytest.param(path, id=path.stem)


# Filter plugins that kube-scheduler's default profile runs after NodeResourcesFit: a node
# they reject has passed NodeResourcesFit.
AFTER_FIT = {
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
}


def _profile(config: dict[str, Any] | None) -> dict[str, Any]:
    return config["profiles"][0] if config else {}


def _plugin_args(profile: dict[str, Any], name: str) -> dict[str, Any] | None:
    for pc in profile.get("pluginConfig") or []:
        if pc.get("name") == name:
            args: dict[str, Any] = pc.get("args") or {}
            return args
    return None


def _score_weight(profile: dict[str, Any], name: str) -> int:
    plugins = profile.get("plugins") or {}
    for point in ("score", "multiPoint"):
        for p in (plugins.get(point) or {}).get("enabled") or []:
            if p.get("name") == name and p.get("weight"):
                return int(p["weight"])
    return 1


def _score_enabled(profile: dict[str, Any], name: str) -> bool:
    plugins = profile.get("plugins") or {}
    for point in ("score", "multiPoint"):
        for p in (plugins.get(point) or {}).get("disabled") or []:
            if p.get("name") in (name, "*"):
                return False
    return True


def test_corpus_is_present() -> None:
    assert SCENARIOS, f"conformance corpus not found at {CORPUS}"


def _running(pods: list[Pod]) -> list[Pod]:
    return [p for p in pods if p.status.phase not in ("Succeeded", "Failed")]


@pytest.mark.parametrize("path", [_param(p) for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text())
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    profile = _profile(scenario.get("config"))
    fit_raw = _plugin_args(profile, FIT_NAME)
    ba_raw = _plugin_args(profile, BALANCED_ALLOCATION_NAME)
    fit_args = decode(NodeResourcesFitArgs, fit_raw) if fit_raw else NodeResourcesFitArgs()
    ba_args = (
        decode(NodeResourcesBalancedAllocationArgs, ba_raw)
        if ba_raw
        else NodeResourcesBalancedAllocationArgs()
    )
    fit_weight = _score_weight(profile, FIT_NAME)
    ba_weight = _score_weight(profile, BALANCED_ALLOCATION_NAME)
    ba_enabled = _score_enabled(profile, BALANCED_ALLOCATION_NAME)

    nodes = [Node.from_dict(n) for n in scenario["nodes"]]
    running = _running([Pod.from_dict(p) for p in scenario["pods"]])
    pending = {}
    for raw in scenario["pending"]:
        pod = Pod.from_dict(raw)
        pending[pod.key] = pod

    checked_filters = checked_scores = 0
    for result in expected["results"]:
        pod = pending[result["pod"]]
        snapshot = Snapshot.from_objects(running, nodes)
        handle = BasicHandle(snapshot)
        fit = new_fit(fit_args, handle)
        ba = new_balanced_allocation(ba_args, handle)
        state = CycleState()
        node_infos = snapshot.list()
        _, st = fit.pre_filter(state, pod, node_infos)
        assert st is None

        statuses = result["filterStatuses"]
        for ni in node_infos:
            exp = statuses.get(ni.name)
            got = fit.filter(state, pod, ni)
            where = f"{result['pod']} on {ni.name}"
            if exp is None or exp["plugin"] in AFTER_FIT:
                assert got is None, f"{where}: {got}"
                checked_filters += 1
            elif exp["plugin"] == FIT_NAME:
                assert got is not None, where
                assert (got.code.name, list(got.reasons)) == (exp["code"], exp["reasons"]), where
                checked_filters += 1

        scores = result["scores"]
        if scores:
            feasible = [snapshot.get(n) for n in result["feasibleNodes"]]
            assert fit.pre_score(state, pod, feasible) is None
            ba_status = ba.pre_score(state, pod, feasible)
            some = next(iter(scores.values()))
            if ba_enabled:
                assert (ba_status is None) == (BALANCED_ALLOCATION_NAME in some), result["pod"]
            for ni in feasible:
                exp_scores = scores[ni.name]
                if FIT_NAME in exp_scores:
                    got_score, st = fit.score(state, pod, ni)
                    assert st is None
                    assert got_score * fit_weight == exp_scores[FIT_NAME], (
                        f"{FIT_NAME} {result['pod']} on {ni.name}"
                    )
                    checked_scores += 1
                if BALANCED_ALLOCATION_NAME in exp_scores:
                    got_score, st = ba.score(state, pod, ni)
                    assert st is None
                    assert got_score * ba_weight == exp_scores[BALANCED_ALLOCATION_NAME], (
                        f"{BALANCED_ALLOCATION_NAME} {result['pod']} on {ni.name}"
                    )
                    checked_scores += 1

        if result["selected"]:
            running.append(pod.with_node_name(result["selected"]))
    assert checked_filters > 0
    has_scores = any(
        FIT_NAME in s or BALANCED_ALLOCATION_NAME in s
        for r in expected["results"]
        for s in r["scores"].values()
    )
    assert checked_scores > 0 or not has_scores
