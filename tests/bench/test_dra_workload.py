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
