"""The storage plugins and DynamicResources against kube-scheduler's recorded decisions: every
corpus scenario replayed pod by pod through VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone and DynamicResources (PreFilter, Filter, Score, PostFilter, and
Reserve/PreBind on the selected node so that later pods see the assumed bindings)."""

from __future__ import annotations

import pytest

from kschedlib.api.objects import decode_any
from kschedlib.api.pod import Pod, is_terminal
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.status import Status
from kschedlib.plugins import (
    dynamicresources,
    nodevolumelimits,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from tests.plugins.simple_corpus import FILTER_ORDER, load, scenario_names

MINE = (
    volumerestrictions.NAME,
    nodevolumelimits.NAME,
    volumebinding.NAME,
    volumezone.NAME,
    dynamicresources.NAME,
)
STORAGE_KINDS = ("persistentVolumes", "persistentVolumeClaims", "storageClasses", "csiNodes")


def _view(st: Status | None) -> tuple[str, tuple[str, ...]] | None:
    return None if st is None else (st.code.name, tuple(st.reasons))


def _rank(plugin: str | None) -> int:
    return FILTER_ORDER.index(plugin) if plugin in FILTER_ORDER else -1


def replay(name: str) -> tuple[list[str], int]:
    """Mismatches between our plugins and the recorded results, and how many were compared."""
    scenario, expected = load(name)
    store = ObjectStore()
    for kind in ("namespaces", *STORAGE_KINDS):
        for obj in scenario.get(kind) or ():
            store.upsert(decode_any(obj))
    nodes = [decode_any(n) for n in scenario["nodes"]]
    running: list[Pod] = [p for p in map(Pod.from_dict, scenario["pods"]) if not is_terminal(p)]
    pending = {p.key: p for p in map(Pod.from_dict, scenario["pending"])}
    handle = BasicHandle(Snapshot.from_objects(running, nodes), store)
    plugins = {
        n: pkg.new(None, handle)
        for n, pkg in zip(
            MINE,
            (volumerestrictions, nodevolumelimits, volumebinding, volumezone, dynamicresources),
            strict=True,
        )
    }
    problems: list[str] = []
    compared = 0
    for entry in expected["results"]:
        pod = pending[entry["pod"]]
        where = f"{name} {entry['pod']}"
        snap = Snapshot.from_objects(running, nodes)
        handle.set_snapshot(snap)
        state = CycleState()
        infos = list(snap.list())
        # PreFilter, in profile order: the first rejection ends the cycle.
        exp_pre = entry["preFilter"]
        got_pre: tuple[str, Status] | None = None
        skipped: set[str] = set()
        if exp_pre is None or exp_pre["plugin"] in MINE:
            for n in MINE:
                _, st = plugins[n].pre_filter(state, pod, infos)
                if st is not None and st.is_skip():
                    skipped.add(n)
                elif st is not None:
                    got_pre = (n, st)
                    break
            compared += 1
            want_pre = None if exp_pre is None else (exp_pre["plugin"], exp_pre["code"])
            have_pre = None if got_pre is None else (got_pre[0], got_pre[1].code.name)
            if have_pre != want_pre or (
                exp_pre is not None
                and got_pre is not None
                and tuple(exp_pre["reasons"]) != got_pre[1].reasons
            ):
                problems.append(f"{where}: PreFilter {got_pre} != {exp_pre}")
        if exp_pre is None and not entry.get("retry"):
            feasible = set(entry["feasibleNodes"])
            for ni in infos:
                exp = entry["filterStatuses"].get(ni.name)
                limit = _rank(exp["plugin"]) if exp is not None else len(FILTER_ORDER)
                if exp is not None and limit < 0:
                    continue  # left out by a PreFilter result
                got: tuple[str, Status | None] | None = None
                for n in MINE:
                    if _rank(n) > limit or n in skipped:
                        continue
                    st = plugins[n].filter(state, pod, ni)
                    if st is not None:
                        got = (n, st)
                        break
                want = None
                if exp is not None and exp["plugin"] in MINE:
                    want = (exp["plugin"], (exp["code"], tuple(exp["reasons"])))
                have = None if got is None else (got[0], _view(got[1]))
                if ni.name in feasible or exp is not None:
                    compared += 1
                    if have != want:
                        problems.append(f"{where} {ni.name}: Filter {have} != {want}")
            for node_name, scores in (entry.get("scores") or {}).items():
                compared += 1
                ni = snap.get(node_name)
                if scores.get(dynamicresources.NAME) != 0:
                    problems.append(f"{where} {node_name}: no DynamicResources score of 0")
                if plugins[dynamicresources.NAME].score(state, pod, ni) != (0, None):
                    problems.append(f"{where} {node_name}: DynamicResources scored")
                if volumebinding.NAME in scores:
                    problems.append(f"{where} {node_name}: VolumeBinding scored")
            if entry.get("scores"):
                st = plugins[volumebinding.NAME].pre_score(state, pod, infos)
                if st is None or not st.is_skip():
                    problems.append(f"{where}: VolumeBinding PreScore did not skip")
        post_filter = entry["postFilter"]
        if post_filter is not None and entry["error"] and not post_filter["nominatedNodeName"]:
            # A failed PostFilter joins every plugin's message into the FitError.
            compared += 1
            _, post = plugins[dynamicresources.NAME].post_filter(state, pod, None)
            msg = "" if post is None else post.message()
            if f". {msg}" not in entry["error"]:
                problems.append(f"{where}: PostFilter {msg!r} not in {entry['error']!r}")
        selected = entry.get("selected")
        if selected:
            vb = plugins[volumebinding.NAME]
            if volumebinding.STATE_KEY in state and vb.reserve(state, pod, selected) is None:
                vb.pre_bind(state, pod, selected)
            running.append(pod.with_node_name(selected))
        victims = set((entry.get("postFilter") or {}).get("victims") or ())
        running = [p for p in running if p.key not in victims]
        nominated = (entry.get("postFilter") or {}).get("nominatedNodeName")
        if nominated:
            pending[pod.key] = pod.with_nominated_node_name(nominated)
    return problems, compared


VOLUME_SCENARIOS = scenario_names("volumes-")
# Pods with resource claims (the dra family) are DynamicResources' business: its own tests
# and the conformance runner check them.
OTHER_SCENARIOS = [n for n in scenario_names() if not n.startswith(("volumes-", "dra-"))]


@pytest.mark.parametrize("name", VOLUME_SCENARIOS)
def test_volumes_family(name: str) -> None:
    problems, compared = replay(name)
    assert not problems, "\n".join(problems)
    assert compared > 0


def test_volumes_family_is_present() -> None:
    assert len(VOLUME_SCENARIOS) >= 11


@pytest.mark.parametrize("name", OTHER_SCENARIOS)
def test_other_families_pass_through(name: str) -> None:
    """Pods without storage: our plugins skip or pass, and DynamicResources scores 0."""
    problems, _ = replay(name)
    assert not problems, "\n".join(problems)
