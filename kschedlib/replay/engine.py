"""Drive a Scheduler through a time-ordered stream of cluster events, sampling metrics.

Two ways in: ``replay_events`` (pods and nodes added and removed at trace times, by a
FakeClock) and ``inflate`` + ``replay_submissions`` (the FGD paper's "workload inflation": a
task list submitted in order, sampled again until the submitted requests reach a multiple of
the cluster's capacity, nothing deleted). Both return ``ReplayResult`` records.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.clock import FakeClock
from kschedlib.errors import KSchedError
from kschedlib.results import Outcome
from kschedlib.scheduler import Scheduler

Meter = Callable[[Pod], Mapping[str, int]]
"""A pod's amounts per resource (e.g. ``{"cpu": 4000, "gpu_milli": 500}``)."""
CapacityMeter = Callable[[Node], Mapping[str, int]]
"""A node's capacity per resource, in the units of the pod meter."""


class Sampler(Protocol):
    """A metric a plugin package contributes: called at sample points with the scheduler,
    returns named values (e.g. the fragmentation breakdown)."""

    def __call__(self, scheduler: Scheduler) -> Mapping[str, float]: ...


def requests_meter(pod: Pod) -> dict[str, int]:
    """milli-CPU and memory bytes the pod requests (its containers' requests)."""
    cpu = mem = 0
    for c in pod.spec.containers:
        q = c.resources.requests.get("cpu")
        if q is not None:
            cpu += q.milli_value()
        m = c.resources.requests.get("memory")
        if m is not None:
            mem += m.value()
    return {"cpu": cpu, "memory": mem}


def allocatable_meter(node: Node) -> dict[str, int]:
    """milli-CPU and memory bytes the node offers."""
    a = node.status.allocatable
    cpu, mem = a.get("cpu"), a.get("memory")
    return {"cpu": cpu.milli_value() if cpu is not None else 0,
            "memory": mem.value() if mem is not None else 0}


@attrs.frozen(slots=True)
class ReplayEvent:
    """One cluster event at ``time`` (seconds): ``add_pod``, ``delete_pod``, ``add_node`` or
    ``delete_node`` of ``obj`` (a Pod, a Node, or a name for deletions)."""

    time: float
    action: Literal["add_pod", "delete_pod", "add_node", "delete_node"]
    obj: Any


@attrs.define(slots=True)
class ReplayResult:
    """Records (one per pod submission, plus sampled metrics where taken) and totals."""

    records: list[dict[str, Any]]
    capacity: dict[str, int]
    scheduled: int = 0
    failed: int = 0
    meta: dict[str, Any] = attrs.field(factory=dict)

    def to_jsonl(self, path: str | Path | None = None) -> str:
        """The records as JSON Lines (each with ``meta`` merged in); written when ``path``."""
        lines = [json.dumps({**self.meta, **r}, sort_keys=True) for r in self.records]
        text = "\n".join(lines) + ("\n" if lines else "")
        if path is not None:
            Path(path).write_text(text)
        return text

    def to_csv(self, path: str | Path | None = None) -> str:
        """The records as CSV (columns: the union of the records' keys, meta first)."""
        rows = [{**self.meta, **r} for r in self.records]
        cols: list[str] = list(self.meta)
        for r in rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        if path is not None:
            Path(path).write_text(buf.getvalue())
        return buf.getvalue()


class _Tracker:
    """Arrived and allocated amounts per resource, and the records."""

    __slots__ = ("meter", "capacity", "arrived", "used", "placed", "keys_to_uid", "records",
                 "scheduled",
                 "failed", "samplers", "sample_every", "_next_sample", "ratios", "_ratio_i",
                 "ratio_resource", "keys")

    def __init__(self, meter: Meter, capacity: dict[str, int], samplers: Sequence[Sampler],
                 sample_every: int, sample_ratios: Sequence[float], ratio_resource: str) -> None:
        self.meter = meter
        self.capacity = capacity
        self.keys = list(capacity)
        self.arrived = dict.fromkeys(capacity, 0)
        self.used = dict.fromkeys(capacity, 0)
        self.placed: dict[str, Mapping[str, int]] = {}
        self.keys_to_uid: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        self.scheduled = 0
        self.failed = 0
        self.samplers = samplers
        self.sample_every = sample_every
        self.ratios = sorted(sample_ratios)
        self._ratio_i = 0
        self.ratio_resource = ratio_resource

    def submitted(self, pod: Pod) -> Mapping[str, int]:
        amounts = self.meter(pod)
        arrived = self.arrived
        for k in self.keys:
            v = amounts.get(k, 0)
            if v:
                arrived[k] += v
        return amounts

    def bound(self, pod: Pod, amounts: Mapping[str, int]) -> None:
        self.scheduled += 1
        self.placed[pod.uid] = amounts
        self.keys_to_uid[pod.key] = pod.uid
        used = self.used
        for k in self.keys:
            v = amounts.get(k, 0)
            if v:
                used[k] += v

    def released(self, uid: str) -> None:
        """A deleted pod (by UID or namespace/name) gives its amounts back."""
        uid = self.keys_to_uid.pop(uid, uid)
        amounts = self.placed.pop(uid, None)
        if amounts is None:
            return
        used = self.used
        for k in self.keys:
            used[k] -= amounts.get(k, 0)

    def record(self, sched: Scheduler, index: int, time: float, pod: Pod | None,
               outcome: str) -> None:
        rec: dict[str, Any] = {"event": index, "time": time, "outcome": outcome,
                               "pod": pod.key if pod is not None else "",
                               "scheduled": self.scheduled, "failed": self.failed}
        cap = self.capacity
        for k in self.keys:
            c = cap[k]
            rec[f"arrived_{k}"] = self.arrived[k]
            rec[f"used_{k}"] = self.used[k]
            rec[f"arrived_ratio_{k}"] = self.arrived[k] / c if c else 0.0
            rec[f"alloc_ratio_{k}"] = self.used[k] / c if c else 0.0
        if self.samplers and self._due(index):
            rec["sampled"] = True
            for s in self.samplers:
                rec.update(s(sched))
        self.records.append(rec)

    def _due(self, index: int) -> bool:
        due = False
        if self.sample_every and (index + 1) % self.sample_every == 0:
            due = True
        ratios = self.ratios
        if self._ratio_i < len(ratios):
            c = self.capacity.get(self.ratio_resource, 0)
            r = self.arrived.get(self.ratio_resource, 0) / c if c else 0.0
            while self._ratio_i < len(ratios) and r >= ratios[self._ratio_i]:
                self._ratio_i += 1
                due = True
        return due


def _capacity(nodes: Iterable[Node], capacity_meter: CapacityMeter) -> dict[str, int]:
    total: dict[str, int] = {}
    for n in nodes:
        for k, v in capacity_meter(n).items():
            total[k] = total.get(k, 0) + v
    return total


def replay_submissions(
    scheduler: Scheduler,
    nodes: Sequence[Node],
    pods: Iterable[Pod],
    *,
    meter: Meter = requests_meter,
    capacity_meter: CapacityMeter = allocatable_meter,
    samplers: Sequence[Sampler] = (),
    sample_every: int = 0,
    sample_ratios: Sequence[float] = (),
    ratio_resource: str = "cpu",
    drop_unschedulable: bool = True,
    meta: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Add ``nodes``, then submit ``pods`` one at a time, each scheduled at once; a pod that
    does not fit is deleted (``drop_unschedulable``, as the paper's simulator does) or left
    pending. One record per pod; ``samplers`` run every ``sample_every`` pods and when the
    arrived share of ``ratio_resource`` crosses each of ``sample_ratios``."""
    for n in nodes:
        scheduler.add_node(n)
    cap = _capacity(nodes, capacity_meter)
    tr = _Tracker(meter, cap, samplers, sample_every, sample_ratios, ratio_resource)
    for i, pod in enumerate(pods):
        tr.submitted(pod)
        scheduler.add_pod(pod)
        outcome = _schedule_until_idle(scheduler, tr, pod, drop_unschedulable)
        tr.record(scheduler, i, float(i), pod, outcome)
    return ReplayResult(tr.records, cap, tr.scheduled, tr.failed, dict(meta or {}))


def _schedule_until_idle(sched: Scheduler, tr: _Tracker, pod: Pod | None,
                         drop_unschedulable: bool) -> str:
    """Run cycles until the queue has nothing ready; account bindings and failures. Returns
    the outcome of ``pod``'s attempt ("" when it had none)."""
    outcome = ""
    while True:
        res = sched.schedule_one()
        if res is None:
            return outcome
        p = res.pod
        if pod is not None and p.uid == pod.uid:
            outcome = res.outcome.value
        if res.outcome is Outcome.Scheduled:
            tr.bound(p, tr.meter(p))
        elif drop_unschedulable and res.outcome in (
            Outcome.Unschedulable, Outcome.Error, Outcome.BindFailed
        ):
            tr.failed += 1
            sched.delete_pod(p)


def replay_events(
    scheduler: Scheduler,
    events: Iterable[ReplayEvent],
    *,
    meter: Meter = requests_meter,
    capacity_meter: CapacityMeter = allocatable_meter,
    samplers: Sequence[Sampler] = (),
    sample_every: int = 0,
    sample_ratios: Sequence[float] = (),
    ratio_resource: str = "cpu",
    drop_unschedulable: bool = False,
    meta: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Apply ``events`` in time order (stable for equal times), moving the scheduler's
    FakeClock to each event's time (backoffs expire as they would), scheduling after each.
    Capacity is that of the nodes present at the end of the replay's node events."""
    clock = scheduler.clock
    if not isinstance(clock, FakeClock):
        raise KSchedError("replay_events needs a Scheduler built with clock=FakeClock()")
    ordered = sorted(events, key=lambda e: e.time)
    nodes: dict[str, Node] = {}
    for e in ordered:
        if e.action == "add_node":
            nodes[e.obj.metadata.name] = e.obj
    tr = _Tracker(meter, _capacity(nodes.values(), capacity_meter), samplers, sample_every,
                  sample_ratios, ratio_resource)
    for i, e in enumerate(ordered):
        if e.time > clock.now():
            clock.advance_to(e.time)
        scheduler.tick()
        pod: Pod | None = None
        if e.action == "add_node":
            scheduler.add_node(e.obj)
        elif e.action == "delete_node":
            scheduler.delete_node(e.obj)
        elif e.action == "add_pod":
            pod = e.obj
            tr.submitted(pod)
            scheduler.add_pod(pod)
        elif e.action == "delete_pod":
            uid = e.obj if isinstance(e.obj, str) else e.obj.uid
            tr.released(uid)
            scheduler.delete_pod(e.obj)
        else:
            raise KSchedError(f"replay: unknown event action {e.action!r}")
        outcome = _schedule_until_idle(scheduler, tr, pod, drop_unschedulable)
        tr.record(scheduler, i, e.time, pod, outcome)
    return ReplayResult(tr.records, tr.capacity, tr.scheduled, tr.failed, dict(meta or {}))


class TimedTask(Protocol):
    """A task with trace times (``kschedlib.traces.TraceTask``)."""

    @property
    def pod(self) -> Pod: ...
    @property
    def creation_time(self) -> float | None: ...
    @property
    def deletion_time(self) -> float | None: ...


def events_from_tasks(nodes: Iterable[Node], tasks: Iterable[TimedTask]) -> list[ReplayEvent]:
    """Nodes added at time 0, each task's pod added at its creation time and deleted at its
    deletion time (tasks without a creation time arrive at 0; without a deletion time they
    stay), in time order."""
    events = [ReplayEvent(0.0, "add_node", n) for n in nodes]
    for t in tasks:
        created = t.creation_time or 0.0
        events.append(ReplayEvent(created, "add_pod", t.pod))
        if t.deletion_time is not None and t.deletion_time >= created:
            events.append(ReplayEvent(t.deletion_time, "delete_pod", t.pod.uid))
    events.sort(key=lambda e: e.time)
    return events


def inflate(
    pods: Sequence[Pod],
    *,
    meter: Callable[[Pod], int],
    capacity: int,
    ratio: float,
    seed: int,
    shuffle: bool = True,
) -> list[Pod]:
    """The paper's workload inflation: the task list (by name, shuffled with ``seed`` when
    ``shuffle``), then tasks drawn again at random (copies named ``<name>-clone-<i>``) until
    the next one would take the submitted total of ``meter`` past ``ratio * capacity``; a
    list already above the target loses random tasks instead."""
    rng = random.Random(seed)
    by_name = sorted(pods, key=lambda p: p.metadata.name)
    order = list(by_name)
    if shuffle:
        rng.shuffle(order)
    target = ratio * capacity
    total = sum(meter(p) for p in order)
    if total > target:
        while total > target and order:
            p = order.pop(rng.randrange(len(order)))
            total -= meter(p)
        return order
    i = 0
    while by_name:
        src = by_name[rng.randrange(len(by_name))]
        amount = meter(src)
        if total + amount > target:
            break
        total += amount
        name = f"{src.metadata.name}-clone-{i}"
        meta = attrs.evolve(src.metadata, name=name, uid=f"{src.metadata.namespace}/{name}")
        order.append(attrs.evolve(src, metadata=meta))
        i += 1
    return order


def discretize(
    records: Sequence[Mapping[str, Any]],
    *,
    resource: str = "cpu",
    points: Iterable[int] = range(0, 131),
) -> dict[int, float]:
    """Allocation ratio (percent) against arrived workload (percent of capacity), as the
    paper's analysis reads its logs: at each integer percent x, the mean allocation of the
    records whose arrived share rounds to x (those within one point when none does)."""
    arrived_key, alloc_key = f"arrived_ratio_{resource}", f"alloc_ratio_{resource}"
    buckets: dict[int, list[float]] = {}
    for r in records:
        x = round(100.0 * r[arrived_key])
        buckets.setdefault(x, []).append(100.0 * r[alloc_key])
    out: dict[int, float] = {}
    for x in points:
        vals = buckets.get(x)
        if not vals:
            vals = [v for k in (x - 1, x, x + 1) for v in buckets.get(k, ())]
            if not vals:
                continue
        out[x] = round(sum(vals) / len(vals), 2)
    return out
