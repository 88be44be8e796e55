"""A generated cluster for report tests: zones, a GPU pool, pods that fit, pods that fit
nowhere and a high-priority pod that preempts (built with kschedlib.testing)."""

from __future__ import annotations

import functools

from kschedlib.cli.simulate import Simulation, simulate
from kschedlib.report.build import pending_order
from kschedlib.testing import make_node, make_pod


def generated_objects(n_nodes: int = 90, n_pods: int = 240) -> list[object]:
    objs: list[object] = []
    zones = ["zone-a", "zone-b", "zone-c"]
    for i in range(n_nodes):
        node = make_node(f"node-{i:04d}").zone(zones[i % 3], "r1").capacity(
            cpu="4", memory="8Gi", pods=30
        )
        if i % 15 == 0:
            node.capacity({"nvidia.com/gpu": 2}).taint("gpu", "true", "NoSchedule")
        objs.append(node.obj())
    # Low-priority pods already running on node-0001, one of which a critical pod evicts.
    for j in range(2):
        objs.append(make_pod(f"batch-{j}", "batch").req(cpu="1900m").priority(0)
                    .node("node-0001").obj())
    for k in range(n_pods):
        p = make_pod(f"web-{k:05d}", "shop").label("app", "web").req(cpu="250m", memory="256Mi")
        if k % 40 == 0:
            p.req(cpu="64")  # fits nowhere: Insufficient cpu
        elif k % 50 == 7:
            p.node_selector({"disk": "ssd"})  # no node has the label
        objs.append(p.obj())
    objs.append(make_pod("critical", "ops").req(cpu="3800m").priority(1000)
                .node_selector({"kubernetes.io/hostname": "node-0001"}).obj())
    return objs


@functools.lru_cache(maxsize=4)
def generated_simulation(n_nodes: int = 90, n_pods: int = 240) -> Simulation:
    """Shared between tests (cached): treat the result as read-only."""
    objs = generated_objects(n_nodes, n_pods)
    sim = simulate(None, objs, seed=0, explain=True)
    assert sim.order == pending_order(objs)
    return sim
