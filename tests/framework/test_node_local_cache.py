"""The node-local result cache and the incrementally kept PodTopologySpread and
InterPodAffinity counts give bit-for-bit what recomputation gives: random workloads
scheduled with and without it, every decision, verdict and score compared."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.framework.node_local_cache import NodeLocalCache

ZONES = ("z1", "z2", "z3")
CPUS = ("100m", "250m", "500m", "1")
MEMS = ("128Mi", "500Mi", "1Gi")


def make_node(i: int, cpu: int, zone: str, taint: str | None, unschedulable: bool) -> Node:
    spec: dict[str, Any] = {"unschedulable": unschedulable}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": taint}]
    name = f"n{i:03d}"
    labels = {"kubernetes.io/hostname": name, "tier": "a" if i % 2 else "b"}
    if i % 17 != 5:  # a few nodes without a zone: left out of zone spreading
        labels["topology.kubernetes.io/zone"] = zone
    return Node.from_dict({
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "20"},
                   "images": [{"names": ["img:1"], "sizeBytes": 300 * 1024 * 1024}]
                   if i % 3 == 0 else []},
    })


@st.composite
def pod_templates(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": draw(st.sampled_from(["img:1", "img:2"])),
                        "resources": {"requests": {"cpu": draw(st.sampled_from(CPUS)),
                                                   "memory": draw(st.sampled_from(MEMS))}}}],
        "priority": draw(st.sampled_from([0, 0, 10])),
    }
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"tier": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": draw(st.integers(1, 100)),
             "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone",
                                                  "operator": "In",
                                                  "values": [draw(st.sampled_from(ZONES))]}]}}]}}
    if draw(st.integers(0, 4)) == 0:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    kind = draw(st.integers(0, 7))
    if kind == 3:
        spec.setdefault("affinity", {})["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}},
                 "topologyKey": "topology.kubernetes.io/zone"}]}
    elif kind == 4:
        spec.setdefault("affinity", {})["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": {},
                 "topologyKey": draw(st.sampled_from(["kubernetes.io/hostname",
                                                      "topology.kubernetes.io/zone"]))}]}
    elif kind in (5, 6):
        which = "podAffinity" if kind == 5 else "podAntiAffinity"
        spec.setdefault("affinity", {})[which] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": draw(st.integers(1, 100)),
                 "podAffinityTerm": {
                     "labelSelector": {"matchLabels": {"app": "web"}},
                     "topologyKey": draw(st.sampled_from(["kubernetes.io/hostname",
                                                          "topology.kubernetes.io/zone"]))}}]}
    elif kind == 0:
        spec.setdefault("affinity", {})["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}},
                 "topologyKey": "kubernetes.io/hostname"}]}
    elif kind in (1, 2):
        spec["topologySpreadConstraints"] = [
            {"maxSkew": draw(st.integers(1, 2)),
             "topologyKey": draw(st.sampled_from(["topology.kubernetes.io/zone",
                                                  "topology.kubernetes.io/zone",
                                                  "kubernetes.io/hostname"])),
             "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
             "nodeAffinityPolicy": draw(st.sampled_from(["Honor", "Ignore"])),
             "nodeTaintsPolicy": draw(st.sampled_from(["Honor", "Ignore"])),
             "labelSelector": {"matchLabels": {"app": "web"}}}]
    return spec


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    n_nodes = draw(st.integers(101, 130))  # over 100: adaptive sampling and the start index
    nodes = [
        (i, draw(st.sampled_from([2, 4])), ZONES[i % 3],
         draw(st.sampled_from([None, None, None, "NoSchedule", "PreferNoSchedule"])),
         draw(st.integers(0, 15)) == 0)
        for i in range(n_nodes)
    ]
    templates = draw(st.lists(pod_templates(), min_size=1, max_size=4))
    n_pods = draw(st.integers(20, 60))
    pods = [(draw(st.integers(0, len(templates) - 1)), draw(st.booleans())) for _ in range(n_pods)]
    # Events between cycles: (after pod index, kind, target)
    events = draw(st.lists(
        st.tuples(st.integers(0, n_pods), st.sampled_from(["relabel", "taint", "delete", "delete"]),
                  st.integers(0, n_nodes - 1)), max_size=6))
    return {"nodes": nodes, "templates": templates, "pods": pods, "events": events}


def run(w: dict[str, Any], cache: bool, explain: bool) -> list[Any]:
    sched = Scheduler(clock=FakeClock(), seed=7, explain=explain, node_local_cache=cache)
    for args in w["nodes"]:
        sched.add_node(make_node(*args))
    out: list[Any] = []
    bound: list[str] = []
    for idx, (t, web) in enumerate(w["pods"]):
        for after, kind, target in w["events"]:
            if after != idx:
                continue
            i, cpu, zone, taint, unsched = w["nodes"][target]
            if kind == "relabel":
                sched.update_node(make_node(i, cpu, ZONES[(ZONES.index(zone) + 1) % 3], taint,
                                            unsched))
            elif kind == "taint":
                sched.update_node(make_node(i, cpu, zone, "NoSchedule" if not taint else None,
                                            unsched))
            elif bound:
                sched.delete_pod(bound.pop(0))
        labels = {"app": "web"} if web else {"app": f"other-{idx}"}
        sched.add_pod(Pod.from_dict({
            "metadata": {"name": f"p{idx:03d}", "namespace": "default", "uid": f"u{idx}",
                         "labels": labels},
            "spec": w["templates"][t],
        }))
        for r in sched.run():
            if r.node and r.outcome.value == "Scheduled":
                bound.append(r.pod.key)
            out.append((r.pod.key, r.outcome.value, r.node, r.message, r.nominated_node,
                        tuple(v.key for v in r.victims),
                        r.explanation.to_dict() if r.explanation is not None else None))
    out.append(sched.algorithm.next_start_node_index)
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_same_decisions_verdicts_and_scores_with_and_without_reuse(w: dict[str, Any]) -> None:
    with_cache = run(w, cache=True, explain=True)
    assert with_cache == run(w, cache=False, explain=True)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_totals_only_path_decides_as_the_detailed_one(w: dict[str, Any]) -> None:
    """Without explanations the cycle keeps totals only (and the cache): same decisions and
    the same random tie-breaks as the detailed path without the cache."""
    fast = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=True, explain=False)]
    slow = [r[:6] if isinstance(r, tuple) else r for r in run(w, cache=False, explain=True)]
    assert fast == slow


def test_tables_are_bounded_least_recently_used_first() -> None:
    c = NodeLocalCache(max_tables=2)
    a = c.table("a")
    a["n"] = (1, None)
    c.table("b")
    assert c.table("a") is a  # touched: now the most recent
    c.table("c")  # drops "b"
    assert len(c) == 2 and c.table("a") is a and c.table("b") == {}


def test_stored_verdicts_are_used_only_for_the_same_node_generation() -> None:
    sched = Scheduler(clock=FakeClock(), seed=1, explain=False)
    for i in range(3):
        sched.add_node(make_node(i, 2, "z1", None, False))
    fwk = sched.frameworks["default-scheduler"]
    assert fwk.node_local_cache is not None

    def add(i: int) -> str | None:
        sched.add_pod(Pod.from_dict({
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]},
        }))
        (r,) = sched.run()
        return r.node

    assert add(0) == "n000"
    # filter verdicts, score totals, raw scores to normalize, raw scores for explanations
    assert len(fwk.node_local_cache) == 4
    # n000 changed (a pod on it): its stored verdict is stale and recomputed; the others hold.
    assert add(1) == "n001"
    assert add(2) == "n002"
    assert add(3) is None  # every node is full now: recomputed, not a stale "fits"


def _shrink_tables(sched: Scheduler, max_entries: int) -> None:
    for fwk in sched.frameworks.values():
        if fwk.node_local_cache is not None:
            fwk.node_local_cache.max_entries = max_entries


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_pruned_tables_decide_as_recomputation(w: dict[str, Any]) -> None:
    """Tables keyed by NodeInfo generation are pruned to the live generations when they grow:
    pruning at every cycle changes no decision, verdict or score."""
    import kschedlib.scheduler as scheduler_module

    made: list[Scheduler] = []
    real = scheduler_module.Scheduler

    class Tiny(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            _shrink_tables(self, 1)
            made.append(self)

    globals()["Scheduler"] = Tiny
    try:
        pruned = run(w, cache=True, explain=False)
    finally:
        globals()["Scheduler"] = real
    assert made
    plain = run(w, cache=False, explain=False)
    assert pruned == plain


def test_generation_table_prunes_dead_generations_only() -> None:
    c = NodeLocalCache(max_entries=4)
    t = c.generation_table("k", lambda: {1, 2})
    t.update({1: "a", 2: "b", 3: "c", 4: "d", 5: "e"})
    t = c.generation_table("k", lambda: {1, 2})
    assert t == {1: "a", 2: "b"}
    assert c.generation_table("k", lambda: set()) is t  # within bounds: untouched


class _OutOfRange:
    """A node-local Score plugin that signs every pod and scores one node out of range."""

    name = "OutOfRange"
    node_local = True

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def sign_pod(self, pod: Pod) -> Any:
        return ()

    def score(self, state: Any, pod: Pod, node_info: Any) -> tuple[int, None]:
        return (101 if node_info.name == "n001" else 7), None

    def score_extensions(self) -> None:
        return None


def _out_of_range_run(cache: bool) -> list[tuple[str, str]]:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"score": {"enabled": [{"name": "OutOfRange"}]}}}],
    }
    sched = Scheduler(cfg, clock=FakeClock(), seed=1, explain=False, node_local_cache=cache,
                      plugins={"OutOfRange": _OutOfRange})
    for i in range(4):
        sched.add_node(make_node(i, 4, "z1", None, False))
    sched.add_pod(Pod.from_dict({
        "metadata": {"name": "p", "namespace": "default", "uid": "u"},
        "spec": {"containers": [{"name": "c"}]},
    }))
    return [(r.outcome.value, r.message) for r in sched.run()]


def test_stored_scores_out_of_range_fail_as_recomputed_ones() -> None:
    with_cache = _out_of_range_run(True)
    assert with_cache == _out_of_range_run(False)
    assert "returns an invalid score 101" in with_cache[0][1]


def _nominated_run(cache: bool) -> list[str | None]:
    """Two-pass verdicts on a node with nominated pods: stored with the pods counted, so a
    changed nomination on an unchanged node is seen."""
    sched = Scheduler(clock=FakeClock(), seed=1, explain=False, node_local_cache=cache)
    for i in range(2):
        sched.add_node(make_node(i, 4, "z1", None, False))

    def pod(name: str, cpu: str, priority: int, nominated: str = "") -> Pod:
        return Pod.from_dict({
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"priority": priority, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"nominatedNodeName": nominated} if nominated else {},
        })

    out: list[str | None] = []
    sched.add_pod(pod("a", "3", 10, "n000"))  # counted on n000 for pods of priority <= 10
    b = pod("b", "2", 10)
    sched.add_pod(b)
    r = sched.schedule_pod(b)
    out.append(r.node if r is not None else None)
    sched.delete_pod("default/a")
    sched.add_pod(pod("a2", "3", 0, "n000"))  # lower priority: not counted for c
    c = pod("c", "2", 10)
    sched.add_pod(c)
    r = sched.schedule_pod(c)
    out.append(r.node if r is not None else None)
    return out


def test_two_pass_verdicts_follow_the_nominated_pods() -> None:
    assert _nominated_run(True) == _nominated_run(False) == ["n001", "n000"]


def _without_images(node: Node, images: bool) -> Node:
    if images:
        return node
    d = node.to_dict()
    d["status"]["images"] = []
    return Node.from_dict(d)


def run_node_churn(w: dict[str, Any], cache: bool, images: bool) -> list[Any]:
    """Pods scheduled while nodes go and come back (ImageLocality's stored scores leave the
    node count out when no node lists an image)."""
    sched = Scheduler(clock=FakeClock(), seed=7, explain=True, node_local_cache=cache)
    for args in w["nodes"]:
        sched.add_node(_without_images(make_node(*args), images))
    gone: list[int] = []
    out: list[Any] = []
    for idx, (t, web) in enumerate(w["pods"]):
        for after, _kind, target in w["events"]:
            if after != idx:
                continue
            if target in gone:
                gone.remove(target)
                sched.add_node(_without_images(make_node(*w["nodes"][target]), images))
            else:
                gone.append(target)
                sched.delete_node(make_node(*w["nodes"][target]).metadata.name)
        labels = {"app": "web"} if web else {"app": f"other-{idx}"}
        sched.add_pod(Pod.from_dict({
            "metadata": {"name": f"p{idx:03d}", "namespace": "default", "uid": f"u{idx}",
                         "labels": labels},
            "spec": w["templates"][t],
        }))
        for r in sched.run():
            out.append((r.pod.key, r.outcome.value, r.node, r.message,
                        r.explanation.to_dict() if r.explanation is not None else None))
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.booleans())
def test_nodes_coming_and_going_decide_as_recomputation(w: dict[str, Any], images: bool) -> None:
    assert run_node_churn(w, True, images) == run_node_churn(w, False, images)
