"""python -m kschedlib.bench --churn [--events N] [--nodes N] [--alive N]: a long-running host.

The shape of scheduler_perf's SchedulingWithMixedChurn: a steady state of ``--alive`` pods on
``--nodes`` nodes, then host events in rounds: ``--batch`` pods created (and scheduled), the
oldest ``--batch`` deleted, and every ``--node-every`` events a node added and the oldest
added node removed (its pods deleted first, as the pod GC does). Prints the event rate (events
per CPU second and per wall second) of each tenth, and the resident memory after each tenth:
a scheduler that stays fast keeps the last tenth's rate near the first's and memory flat.
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Sequence
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.handle import FakeClock
from kschedlib.scheduler import Scheduler


def _rss_mb() -> float:
    """Current resident memory of this process (VmRSS), in MB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _node(name: str) -> Node:
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": f"zone-{hash(name) % 3}",
        }},
        "status": {"allocatable": res, "capacity": res},
    })


_TEMPLATE = Pod.from_dict({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "churn", "namespace": "churn", "labels": {"app": "churn"}},
    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                             "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]},
})


def _pod(i: int) -> Pod:
    meta = attrs.evolve(_TEMPLATE.metadata, name=f"churn-{i}", uid=f"churn-uid-{i}")
    return attrs.evolve(_TEMPLATE, metadata=meta)


@attrs.define(slots=True)
class ChurnResult:
    """Events, CPU and wall seconds, and resident memory (MB) after each tenth."""

    events: list[int]
    cpu: list[float]
    wall: list[float]
    rss: list[float]
    attempts: int
    scheduled: int
    fill_seconds: float

    def rate(self, tenth: int) -> float:
        return self.events[tenth] / self.cpu[tenth] if self.cpu[tenth] > 0 else 0.0


def run_churn(
    events: int = 1_000_000,
    nodes: int = 1000,
    alive: int = 20_000,
    batch: int = 100,
    node_every: int = 1000,
    explain: bool | None = None,
) -> ChurnResult:
    """Run the workload (``explain=None``: the Scheduler's default) and measure each tenth."""
    kw: dict[str, Any] = {} if explain is None else {"explain": explain}
    sched = Scheduler(clock=FakeClock(), seed=1, **kw)
    for i in range(nodes):
        sched.add_node(_node(f"node-{i}"))
    live: collections.OrderedDict[str, None] = collections.OrderedDict()  # oldest first
    added: collections.deque[str] = collections.deque()
    seq = 0
    attempts = scheduled = 0

    def create() -> None:
        nonlocal seq
        p = _pod(seq)
        seq += 1
        sched.add_pod(p)
        live[p.key] = None

    def schedule() -> None:
        nonlocal attempts, scheduled
        for r in sched.run():
            attempts += 1
            scheduled += r.outcome.value == "Scheduled"

    t0 = time.process_time()
    while len(live) < alive:
        for _ in range(min(batch, alive - len(live))):
            create()
        schedule()
    fill = time.process_time() - t0
    tenth = max(1, events // 10)
    out = ChurnResult([], [], [], [], 0, 0, fill)
    done = 0
    next_node = nodes
    since_node = 0
    while done < events:
        c0, w0, start = time.process_time(), time.perf_counter(), done
        goal = min(events, done + tenth)
        while done < goal:
            n = min(batch, goal - done)
            creates = max(1, n // 2)
            for _ in range(creates):
                create()
            for _ in range(n - creates):
                sched.delete_pod(live.popitem(last=False)[0])
            done += n
            schedule()
            since_node += n
            if since_node >= node_every:
                since_node = 0
                name = f"node-{next_node}"
                next_node += 1
                sched.add_node(_node(name))
                added.append(name)
                done += 1
                if len(added) > 1:  # the oldest added node goes, its pods deleted first
                    gone = added.popleft()
                    for pi in list(sched.cache.get_node(gone).pods):
                        sched.delete_pod(pi.pod.key)
                        live.pop(pi.pod.key, None)
                        done += 1
                    sched.delete_node(gone)
                    done += 1
        out.events.append(done - start)
        out.cpu.append(time.process_time() - c0)
        out.wall.append(time.perf_counter() - w0)
        out.rss.append(_rss_mb())
    out.attempts, out.scheduled = attempts, scheduled
    return out


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.bench --churn", description=__doc__)
    ap.add_argument("--events", type=int, default=1_000_000, help="host events after the fill")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--alive", type=int, default=20_000, help="pods alive in the steady state")
    ap.add_argument("--batch", type=int, default=100, help="events between scheduling runs")
    ap.add_argument("--node-every", type=int, default=1000, help="pod events per node change")
    ap.add_argument("--explain", choices=["default", "on", "off"], default="default",
                    help="explanations (default: the Scheduler's default, on)")
    args = ap.parse_args(argv)
    explain = None if args.explain == "default" else args.explain == "on"
    r = run_churn(args.events, args.nodes, args.alive, args.batch, args.node_every, explain)
    print(f"churn: {args.nodes} nodes, {args.alive} pods alive, {sum(r.events)} events "
          f"(fill {r.fill_seconds:.1f} s CPU), explain={args.explain}, "
          f"{r.attempts} attempts, {r.scheduled} scheduled")
    for i in range(len(r.events)):
        print(f"  tenth {i + 1:>2}: {r.rate(i):>9.0f} events/CPU-s, "
              f"{r.events[i] / r.wall[i] if r.wall[i] else 0:>9.0f} events/s wall, "
              f"RSS {r.rss[i]:.0f} MB")
    first, last = r.rate(0), r.rate(len(r.events) - 1)
    steady = r.rss[min(1, len(r.rss) - 1)]
    print(f"churn rate: first tenth {first:.0f}, last tenth {last:.0f} events/CPU-s "
          f"({100.0 * last / first if first else 0:.0f}% of the first); "
          f"memory: {steady:.0f} MB after the second tenth, peak {max(r.rss):.0f} MB "
          f"({100.0 * max(r.rss) / steady if steady else 0:.0f}%)")
    return 0
