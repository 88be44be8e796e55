"""Replays conformance scenarios through one plugin at a time and compares its verdicts and
scores with kube-scheduler's recorded ones (used by the simple plugins' tests)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod, is_terminal
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Status
from tests.corpus import CORPUS  # noqa: E402

DEFAULT_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
    "InterPodAffinity": 2,
    "PodTopologySpread": 2,
}

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


def scenario_names(prefix: str = "") -> list[str]:
    """Scenario names starting with ``prefix``, of the families the conformance test asserts
    (a family joins ASSERTED once kschedlib passes it)."""
    from tests.conformance.test_conformance import ASSERTED

    assert CORPUS.is_dir(), f"conformance corpus not found at {CORPUS}"
    return sorted(
        p.name[: -len(".json")]
        for p in CORPUS.glob(f"{prefix}*.json")
        if not p.name.endswith(".expected.json") and p.stem.rsplit("-", 1)[0] in ASSERTED
    )


def load(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    scenario = json.loads((CORPUS / f"{name}.json").read_text())
    expected = json.loads((CORPUS / f"{name}.expected.json").read_text())
    return scenario, expected


def _profile(scenario: dict[str, Any]) -> dict[str, Any]:
    cfg = scenario.get("config")
    return cfg["profiles"][0] if cfg else {}


def plugin_weight(scenario: dict[str, Any], plugin: str) -> int | None:
    """The plugin's score weight in the scenario's profile; None when scoring is disabled."""
    plugins = _profile(scenario).get("plugins") or {}
    weight = DEFAULT_WEIGHTS.get(plugin, 1)
    for point in ("multiPoint", "score"):
        cfg = plugins.get(point) or {}
        if any(d.get("name") in (plugin, "*") for d in cfg.get("disabled") or ()):
            return None
        for e in cfg.get("enabled") or ():
            if e.get("name") == plugin and e.get("weight"):
                weight = e["weight"]
    return weight


def plugin_args(scenario: dict[str, Any], plugin: str, args_type: type | None) -> Any:
    if args_type is None:
        return None
    for pc in _profile(scenario).get("pluginConfig") or ():
        if pc.get("name") == plugin:
            return decode(args_type, pc.get("args") or {})
    return args_type()


def _bracketed(reasons: list[str]) -> set[str]:
    """The plugin names in "node(s) didn't satisfy plugin(s) [A B]"."""
    out: set[str] = set()
    for r in reasons:
        if "[" in r and r.endswith("]"):
            out.update(r[r.index("[") + 1 : -1].split())
    return out


def _status_view(st: Status | None) -> tuple[str, tuple[str, ...]] | None:
    return None if st is None else (st.code.name, tuple(st.reasons))


def _entries(
    scenario: dict[str, Any], expected: dict[str, Any]
) -> Iterator[tuple[dict[str, Any], Pod, Snapshot, list[Node]]]:
    """Each non-retry result entry with its pod and the snapshot it was scheduled against."""
    nodes = [Node.from_dict(n) for n in scenario["nodes"]]
    running = [p for p in (Pod.from_dict(d) for d in scenario["pods"]) if not is_terminal(p)]
    pending = {}
    for d in scenario["pending"]:
        p = Pod.from_dict(d)
        pending[p.key] = p
    for entry in expected["results"]:
        pod = pending[entry["pod"]]
        if not entry.get("retry"):
            snap = Snapshot.from_objects(running, nodes)
            yield entry, pod, snap, nodes
        victims = set((entry.get("postFilter") or {}).get("victims") or ())
        if victims:
            running = [p for p in running if p.key not in victims]
        if entry.get("postFilter") and entry["postFilter"].get("nominatedNodeName"):
            pending[pod.key] = pod.with_nominated_node_name(
                entry["postFilter"]["nominatedNodeName"]
            )
        if entry.get("selected"):
            running.append(pending[pod.key].with_node_name(entry["selected"]))


def check_scenario(
    name: str,
    plugin_name: str,
    factory: Callable[[Any, Any], Any],
    args_type: type | None = None,
) -> tuple[list[str], int]:
    """Replay ``name`` through the plugin; returns the mismatches and how many verdicts and
    scores were compared."""
    scenario, expected = load(name)
    args = plugin_args(scenario, plugin_name, args_type)
    weight = plugin_weight(scenario, plugin_name)
    my_rank = FILTER_ORDER.index(plugin_name) if plugin_name in FILTER_ORDER else len(FILTER_ORDER)
    problems: list[str] = []
    compared = 0
    for entry, pod, snap, _nodes in _entries(scenario, expected):
        where = f"{name} {entry['pod']}"
        plugin = factory(args, BasicHandle(snap))
        state = CycleState()
        node_infos = list(snap.list())
        pre = entry.get("preFilter")
        allowed: frozenset[str] | None = None
        skip_filter = False
        if hasattr(plugin, "pre_filter"):
            result, st = plugin.pre_filter(state, pod, node_infos)
            if pre is not None:
                if pre["plugin"] == plugin_name:
                    compared += 1
                    want_pre = (pre["code"], tuple(pre["reasons"]))
                    if _status_view(st) != want_pre:
                        problems.append(f"{where}: PreFilter {_status_view(st)} != {want_pre}")
                continue
            if st is not None and st.is_skip():
                skip_filter = True
            elif st is not None:
                problems.append(f"{where}: unexpected PreFilter status {st}")
                continue
            if result is not None and not result.all_nodes():
                allowed = result.node_names
            # kube-scheduler names the plugins whose PreFilterResult left a node out.
            excluded = {n.name for n in node_infos} - set(allowed) if allowed is not None else set()
            by_me = {
                n
                for n, s in entry["filterStatuses"].items()
                if s["plugin"] is None and plugin_name in _bracketed(s["reasons"])
            }
            compared += 1
            if excluded != by_me:
                problems.append(f"{where}: PreFilter excluded {sorted(excluded)}")
        if pre is not None:
            continue
        feasible = set(entry["feasibleNodes"])
        for ni in node_infos:
            if allowed is not None and ni.name not in allowed:
                continue
            got = None
            if hasattr(plugin, "filter") and not skip_filter:
                got = _status_view(plugin.filter(state, pod, ni))
            exp = entry["filterStatuses"].get(ni.name)
            if ni.name in feasible or (
                exp is not None
                and exp["plugin"] in FILTER_ORDER
                and FILTER_ORDER.index(exp["plugin"]) > my_rank
            ):
                want: tuple[str, tuple[str, ...]] | None = None
            elif exp is not None and exp["plugin"] == plugin_name:
                want = (exp["code"], tuple(exp["reasons"]))
            else:
                continue
            compared += 1
            if got != want:
                problems.append(f"{where} {ni.name}: Filter {got} != {want}")
        scores = entry.get("scores") or {}
        if not scores or not hasattr(plugin, "score") or weight is None:
            continue
        present = any(plugin_name in s for s in scores.values())
        feasible_infos = [ni for ni in node_infos if ni.name in feasible]
        if hasattr(plugin, "pre_score"):
            st = plugin.pre_score(state, pod, feasible_infos)
            if st is not None and st.is_skip():
                compared += 1
                if present:
                    problems.append(f"{where}: PreScore skipped but kube-scheduler scored")
                continue
        compared += 1
        if not present:
            problems.append(f"{where}: scored but kube-scheduler skipped the plugin")
            continue
        raw = [NodeScore(ni.name, plugin.score(state, pod, ni)[0]) for ni in feasible_infos]
        ext = plugin.score_extensions()
        if ext is not None:
            ext.normalize_score(state, pod, raw)
        got_scores = {ns.name: ns.score * weight for ns in raw}
        want_scores = {n: s[plugin_name] for n, s in scores.items()}
        if got_scores != want_scores:
            problems.append(f"{where}: scores {got_scores} != {want_scores}")
    return problems, compared
