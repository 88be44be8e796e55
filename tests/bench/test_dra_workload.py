"""The DRA benchmark workload (scheduler_perf's structured-parameters case), small."""

from __future__ import annotations

import io

from kschedlib.bench.scheduling import run
from kschedlib.bench.workloads import dra_structured_scenario
from kschedlib.conformance.session import ScenarioSession


def test_workload_fills_every_free_device_once() -> None:
    sc = dra_structured_scenario(nodes=4, devices_per_node=3, init_pods=4, measure_pods=9)
    session = ScenarioSession(sc)
    results = session.run()
    assert [r["selected"] is not None for r in results] == [True] * 8 + [False]
    assert "cannot allocate all claims" in results[-1]["error"]
    devices = [
        (d["pool"], d["device"])
        for r in results if r.get("claims")
        for c in r["claims"].values() for d in c["devices"]
    ]
    assert len(devices) == len(set(devices)) == 8
    # The running pods hold device-0 of every node.
    assert all(dev != "device-0" for _, dev in devices)


def test_bench_runs_the_dra_workload() -> None:
    out = io.StringIO()
    figures = run(None, 5, out=out, workload="dra-structured-500n")
    assert figures["scheduled"] == 5
    assert out.getvalue().splitlines()[-1].startswith("pods/second: ")


def test_partitionable_workload_respects_counters() -> None:
    from kschedlib.bench.workloads import dra_partitionable_scenario

    # 2 nodes x 2 GPUs x 7 slices; the 25th pod asks for a whole GPU.
    sc = dra_partitionable_scenario(nodes=2, pods=30)
    assert sc.feature_gates == {"DRAPartitionableDevices": True}
    results = ScenarioSession(sc).run()
    placed = [r for r in results if r["selected"] is not None]
    slices_used = 0
    for r in placed:
        for c in r["claims"].values():
            for d in c["devices"]:
                dev = d["device"]
                slices_used += 7 if "mig" not in dev else (2 if "2g" in dev else 1)
    assert slices_used <= 2 * 2 * 7
    assert len(placed) < len(results)  # the counters run out before the pods do


def test_consumable_workload_shares_nics() -> None:
    from kschedlib.api.quantity import parse_quantity
    from kschedlib.bench.workloads import dra_consumable_scenario

    sc = dra_consumable_scenario(nodes=2, pods=12)
    results = ScenarioSession(sc).run()
    per_nic: dict[str, int] = {}
    for r in results:
        for c in (r.get("claims") or {}).values():
            for d in c["devices"]:
                assert d["shared"] is True
                q = parse_quantity(d["consumedCapacity"]["bandwidth"]).value()
                per_nic[d["pool"]] = per_nic.get(d["pool"], 0) + q
    assert per_nic and all(v <= 100 * 10**9 for v in per_nic.values())
    assert sum(1 for r in results if r["selected"]) > 2  # several pods per NIC
