"""Run one variant: the base cluster with the variant's changes, scheduled to completion by
the same Scheduler (framework, plugins, queue, preemption) as everything else."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kschedlib.api.meta import ObjectMeta
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import InvalidObjectError
from kschedlib.framework.handle import FakeClock
from kschedlib.results import Outcome, SchedulingResult
from kschedlib.scheduler import Scheduler
from kschedlib.sweep.cluster import BaseCluster, node_zone
from kschedlib.sweep.variant import Variant

#: Rounds of "schedule until idle, then let backoffs expire", as `kschedlib simulate` runs.
MAX_ROUNDS = 120
HOSTNAME = "kubernetes.io/hostname"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.String alphabet


def _suffix(*parts: object) -> str:
    """Five characters from the alphabet controllers use, derived from ``parts`` (stable)."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def _controller_kind(pod: Pod) -> str | None:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.kind
    return None


def _is_mirror(pod: Pod) -> bool:
    return "kubernetes.io/config.mirror" in pod.metadata.annotations


def _recreated(pod: Pod) -> Pod:
    """The replacement a controller creates for a pod whose node went away: same template,
    not bound, a new UID."""
    meta = attrs.evolve(pod.metadata, uid=f"{pod.metadata.uid or pod.key}-recreated",
                        resource_version="")
    return attrs.evolve(
        pod, metadata=meta, spec=attrs.evolve(pod.spec, node_name=""),
        status=attrs.evolve(pod.status, phase="Pending", nominated_node_name="",
                            conditions=(), container_statuses=(), init_container_statuses=()),
    )


def _new_node(template: Node, name: str) -> Node:
    labels = dict(template.metadata.labels)
    if HOSTNAME in labels:
        labels[HOSTNAME] = name
    meta = ObjectMeta(name=name, uid=f"sweep-node-{name}", labels=labels,
                      annotations=dict(template.metadata.annotations))
    spec = attrs.evolve(template.spec, unschedulable=False)
    return attrs.evolve(template, metadata=meta, spec=spec)


def _replicas(template: Mapping[str, Any], count: int, tag: str) -> list[Pod]:
    """``count`` pods of a template named ``<name>-<5 chars>`` like a ReplicaSet's pods."""
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", **template})
    base = pod.metadata.name or "replica"
    out = []
    for i in range(count):
        name = f"{base}-{_suffix(tag, base, i)}"
        meta = attrs.evolve(pod.metadata, name=name, uid=f"sweep-{tag}-{base}-{i}",
                            namespace=pod.metadata.namespace or "default")
        out.append(attrs.evolve(pod, metadata=meta, spec=attrs.evolve(pod.spec, node_name="")))
    return out


def _scaled(pending: tuple[Pod, ...], factor: float) -> list[Pod]:
    """The pending pods scaled by ``factor``: the first round(n * factor), cycling, copies
    after the first round renamed ``<name>-s<round>``."""
    n = len(pending)
    target = round(n * factor)
    out = []
    for k in range(target):
        pod = pending[k % n]
        r = k // n
        if r:
            meta = attrs.evolve(pod.metadata, name=f"{pod.metadata.name}-s{r}",
                                uid=f"{pod.metadata.uid or pod.key}-s{r}")
            pod = attrs.evolve(pod, metadata=meta)
        out.append(pod)
    return out


@attrs.define(slots=True)
class _Plan:
    """What a variant does to the base cluster, resolved against it."""

    nodes: list[Node]
    pods: list[Pod]
    pending: list[Pod]
    removed: list[str]
    added: list[Node]
    lost: list[Pod]
    removed_pods: list[Pod]


def plan_variant(base: BaseCluster, variant: Variant, index: int = 0) -> _Plan:
    where = f"variant {variant.name}"
    by_name = {n.metadata.name: n for n in base.nodes}
    for n in variant.remove_nodes:
        if n not in by_name:
            raise InvalidObjectError(where, "removeNodes", f"node {n!r} is not in the cluster")
    zones = set(variant.remove_zones)
    unknown = zones - set(base.zones())
    if unknown:
        raise InvalidObjectError(where, "removeZones", f"no node in zone(s) {sorted(unknown)}")
    gone = set(variant.remove_nodes)
    for node in base.nodes:
        labels = node.metadata.labels
        if node_zone(node) in zones or (
            variant.remove_node_labels
            and all(labels.get(k) == v for k, v in variant.remove_node_labels.items())
        ):
            gone.add(node.metadata.name)
    nodes = [n for n in base.nodes if n.metadata.name not in gone]
    added: list[Node] = []
    taken = set(by_name)
    for i, a in enumerate(variant.add_nodes):
        if isinstance(a.template, str):
            tpl = by_name.get(a.template)
            if tpl is None:
                raise InvalidObjectError(where, f"addNodes[{i}].template",
                                         f"node {a.template!r} is not in the cluster")
        else:
            tpl = Node.from_dict({"apiVersion": "v1", "kind": "Node", **a.template})
        prefix = a.prefix or f"{tpl.metadata.name}-new"
        for j in range(a.count):
            name = f"{prefix}-{j}"
            if name in taken:
                raise InvalidObjectError(where, f"addNodes[{i}]", f"node name {name!r} is taken")
            taken.add(name)
            new = _new_node(tpl, name)
            nodes.append(new)
            added.append(new)
    pods: list[Pod] = []
    displaced: list[Pod] = []
    lost: list[Pod] = []
    removed_pods: list[Pod] = []
    for pod in base.pods:
        if pod.spec.node_name not in gone:
            pods.append(pod)
            continue
        removed_pods.append(pod)
        kind = _controller_kind(pod)
        if kind == "DaemonSet" or _is_mirror(pod):
            continue
        if kind is None:
            lost.append(pod)
        else:
            displaced.append(_recreated(pod))
    pending = displaced + _scaled(base.pending, variant.pending_scale)
    for p in variant.add_pods:
        pending += _replicas(p.template, p.count, f"{index}")
    return _Plan(nodes, pods, pending, sorted(gone), added, lost, removed_pods)


def _run_to_completion(
    sched: Scheduler, clock: Any, held: dict[str, Pod]
) -> tuple[dict[str, SchedulingResult], list[SchedulingResult]]:
    """Schedule until nothing is ready, letting backoffs expire: (last attempt per pod,
    every attempt that preempted). A held pod is added once its predecessor is bound."""
    last: dict[str, SchedulingResult] = {}
    preempting: list[SchedulingResult] = []
    for after, pod in held.items():  # added by the scheduler, as simulate does
        sched.hold(pod, after=after)
    for _ in range(MAX_ROUNDS):
        for r in sched.run():
            last[r.key] = r
            if r.victims:
                preempting.append(r)
        if not sched.queue.pods_in_backoff_q() and not sched.queue.pods_in_active_q():
            break
        clock.advance(1.0)
    return last, preempting


def _utilization(sched: Scheduler) -> dict[str, dict[str, float]]:
    """Requested / allocatable per zone (percent, two decimals) for cpu, memory and pods."""
    sched.cache.update_snapshot(sched.snapshot)
    sums: dict[str, list[int]] = {}
    for ni in sched.snapshot.list():
        zone = node_zone(ni.node) if ni.node is not None else ""
        s = sums.setdefault(zone or "(none)", [0, 0, 0, 0, 0, 0])
        a, r = ni.allocatable, ni.requested
        s[0] += r.milli_cpu
        s[1] += a.milli_cpu
        s[2] += r.memory
        s[3] += a.memory
        s[4] += len(ni.pods)
        s[5] += a.allowed_pod_number

    def pct(used: int, total: int) -> float:
        return round(100.0 * used / total, 2) if total else 0.0

    return {
        zone: {"cpu": pct(s[0], s[1]), "memory": pct(s[2], s[3]), "pods": pct(s[4], s[5])}
        for zone, s in sorted(sums.items())
    }


@attrs.define(slots=True)
class _BaseMemo:
    """Per-process memo: the scheduler built for one base cluster, forked for each variant
    (a Dask worker keeps the scattered base and so builds it once)."""

    lock: threading.Lock = attrs.field(factory=threading.Lock)
    base: BaseCluster | None = None
    seed: int = 0
    sched: Scheduler | None = None


_MEMO = _BaseMemo()


def _populate(sched: Scheduler, nodes: Iterable[Node], objects: Iterable[Any],
              pods: Iterable[Pod]) -> None:
    for n in nodes:
        sched.add_node(n)
    for o in objects:
        sched.add_object(o)
    for p in pods:
        sched.add_pod(p)


def _forked_scheduler(base: BaseCluster, plan: _Plan, seed: int) -> tuple[Scheduler, Any]:
    """A fork of the base cluster's scheduler with the plan's node changes applied."""
    with _MEMO.lock:
        if _MEMO.base is not base or _MEMO.seed != seed or _MEMO.sched is None:
            parent = Scheduler(base.config, clock=FakeClock(), seed=seed, explain=False)
            _populate(parent, base.nodes, base.objects, base.pods)
            _MEMO.base, _MEMO.seed, _MEMO.sched = base, seed, parent
        sched = _MEMO.sched.fork()
    _apply_node_changes(sched, plan)
    return sched, sched.clock


def _apply_node_changes(sched: Scheduler, plan: _Plan) -> None:
    """The variant's node changes as events on a scheduler holding the base cluster: the
    same history (nodes existed, then went) whether the scheduler is a fork or built anew,
    so the node tree's zone order, and with it every decision, is the same."""
    for p in plan.removed_pods:
        sched.delete_pod(p)
    for name in plan.removed:
        sched.delete_node(name)
    for n in plan.added:
        sched.add_node(n)


def _fresh_scheduler(
    base: BaseCluster, variant: Variant, plan: _Plan, seed: int
) -> tuple[Scheduler, FakeClock]:
    """A scheduler holding the variant's cluster, built event by event from the objects."""
    clock = FakeClock()
    config = variant.config if variant.config is not None else base.config
    sched = Scheduler(config, clock=clock, seed=seed, explain=False,
                      feature_gates=dict(variant.feature_gates) or None)
    _populate(sched, base.nodes, base.objects, base.pods)
    _apply_node_changes(sched, plan)
    return sched, clock


def run_variant(
    base: BaseCluster, variant: Variant, index: int = 0, seed: int = 0, *, fork: bool = True
) -> dict[str, Any]:
    """Schedule the variant to completion and return its compact record (plain data).

    The variant runs in a fork of the base cluster's scheduler (built once per process), or,
    when it changes the configuration or feature gates (or ``fork=False``), in a scheduler
    built from the objects; both give the same decisions."""
    plan = plan_variant(base, variant, index)
    if fork and variant.config is None and not variant.feature_gates:
        sched, clock = _forked_scheduler(base, plan, seed)
    else:
        sched, clock = _fresh_scheduler(base, variant, plan, seed)
    for p in plan.pending:
        sched.add_pod(p)
    held = dict(base.held)
    to_schedule = plan.pending + list(held.values())
    last, preempting = _run_to_completion(sched, clock, held)
    bound = {p.uid for p in sched.bound_pods()}
    scheduled = sum(1 for p in to_schedule if p.uid in bound)
    reasons: Counter[str] = Counter()
    for p in to_schedule:
        if p.uid in bound:
            continue
        r = last.get(p.key)
        reasons[r.message if r is not None and r.outcome != Outcome.Scheduled else "never attempted"] += 1
    record: dict[str, Any] = {
        "index": index,
        "variant": variant.name,
        "description": variant.description,
        "nodes": len(plan.nodes),
        "nodes_removed": len(plan.removed),
        "nodes_added": len(plan.added),
        "pods_to_schedule": len(to_schedule),
        "scheduled": scheduled,
        "unschedulable": len(to_schedule) - scheduled,
        "preemptions": len(preempting),
        "victims": sum(len(r.victims) for r in preempting),
        "lost_pods": len(plan.lost),
        "reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        "utilization": _utilization(sched),
        "capacity": None,
        "capacity_stop_reason": None,
    }
    if variant.capacity is not None:
        template = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", **variant.capacity.template})
        report = sched.capacity(template, limit=variant.capacity.limit)
        record["capacity"] = report.count
        record["capacity_stop_reason"] = report.stop_reason
    return record
