"""The FailedScheduling message, the plugins noted and the nodes preemption considers are
computed per distinct Status object; they equal the node-by-node computation for random
verdicts where many nodes share a Status object (stored verdicts) and some do not."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import Node
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kschedlib.framework.status import Code, Status
from kschedlib.schedule_one import Pod

SHARED = [
    Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit"),
    Status(Code.UnschedulableAndUnresolvable, ("node(s) didn't match Pod's node affinity/selector",),
           "NodeAffinity"),
    Status(Code.Unschedulable, ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit"),
]


def reference_message(d: Diagnosis, num_all: int) -> str:
    histogram: dict[str, int] = {}
    for _, s in d.node_to_status.items():
        for r in s.reasons:
            histogram[r] = histogram.get(r, 0) + 1
    absent = num_all - len(d.node_to_status)
    if absent > 0:
        for r in d.node_to_status.absent_nodes_status.reasons:
            histogram[r] = histogram.get(r, 0) + absent
    parts = sorted(f"{n} {r}" for r, n in histogram.items())
    return f"0/{num_all} nodes are available:" + (" " + ", ".join(parts) + "." if parts else "")


verdicts = st.lists(st.one_of(st.sampled_from(range(len(SHARED))),
                              st.sampled_from(["fresh-fit", "fresh-ports"])), max_size=40)


@settings(max_examples=80, deadline=None)
@given(verdicts, st.integers(0, 5))
def test_per_object_equals_per_node(picks: list[Any], extra_nodes: int) -> None:
    d = Diagnosis()
    pairs = []
    for i, p in enumerate(picks):
        if p == "fresh-fit":
            s = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
        elif p == "fresh-ports":
            s = Status(Code.Unschedulable, ("node(s) didn't have free ports for the requested "
                                            "pod ports",), "NodePorts")
        else:
            s = SHARED[p]
        pairs.append((f"n{i:02d}", s))
    d.node_to_status.update(pairs)
    num_all = len(picks) + extra_nodes
    pod = Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}})
    assert FitError(pod, num_all, d).message() == reference_message(d, num_all)

    nodes = [Node.from_dict({"metadata": {"name": f"n{i:02d}"}}) for i in range(num_all)]
    snap = Snapshot.from_objects([], nodes)
    for code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable):
        explicit = dict(pairs)
        if d.node_to_status.absent_nodes_status.code == code:  # every node, lister order
            absent = d.node_to_status.absent_nodes_status
            want = [n.metadata.name for n in nodes
                    if explicit.get(n.metadata.name, absent).code == code]
        else:
            want = [n for n, s in explicit.items() if s.code == code]
        got = d.node_to_status.nodes_for_status_code(snap, code)
        assert [ni.name for ni in got] == want


def test_update_is_set_in_order() -> None:
    a, b = NodeToStatus(), NodeToStatus()
    pairs = [("x", SHARED[0]), ("y", SHARED[1]), ("x", SHARED[2])]
    a.update(pairs)
    for n, s in pairs:
        b.set(n, s)
    assert list(a.items()) == list(b.items())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 3, allow_nan=False),
                          st.sampled_from([0.0005, 0.001, 0.1, 1.0, 1.0000001])), max_size=30))
def test_histogram_buckets_as_a_linear_scan(samples: list[float]) -> None:
    from kschedlib.results import Histogram

    h = Histogram()
    want = [0] * 11
    for x in samples:
        h.observe(x)
        for i, b in enumerate(h.buckets):
            if x <= b:
                want[i] += 1
                break
        else:
            want[-1] += 1
    assert h.counts == want and h.count == len(samples)
