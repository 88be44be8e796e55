"""The fused PrioritySort comparison with the arrival tie-break orders queued pods exactly as
PrioritySort.less wrapped with the tie-break does: every pair of random pods."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import Pod
from kschedlib.backend.queue import scheduling_queue as sq
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.plugins.queuesort.priority_sort import PrioritySort


def generic(less: sq.LessFn) -> sq.LessFn:
    def ordered(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return less(a, b) or (a.seq < b.seq and not less(b, a))

    return ordered


pods = st.lists(st.tuples(st.sampled_from([None, 0, 10, -5, 1000]),
                          st.sampled_from([0.0, 1.0, 1.5, 2.0]), st.integers(0, 5)),
                min_size=2, max_size=8)


@settings(max_examples=60, deadline=None)
@given(pods)
def test_fused_order_is_the_wrapped_order(specs: list[tuple[int | None, float, int]]) -> None:
    infos = []
    for i, (prio, ts, seq) in enumerate(specs):
        spec: dict[str, object] = {"containers": [{"name": "c"}]}
        if prio is not None:
            spec["priority"] = prio
        qpi = QueuedPodInfo.of(Pod.from_dict({"metadata": {"name": f"p{i}"}, "spec": spec}), ts)
        qpi.seq = seq
        infos.append(qpi)
    plugin = PrioritySort()
    fused_plugin = sq._with_arrival_tie_break(plugin.less)
    fused_default = sq._with_arrival_tie_break(sq.priority_sort_less)
    assert fused_plugin is PrioritySort.ordered_less
    assert fused_default is sq._priority_ordered
    want_plugin, want_default = generic(plugin.less), generic(sq.priority_sort_less)
    for a in infos:
        for b in infos:
            assert fused_plugin(a, b) == want_plugin(a, b)
            assert fused_default(a, b) == want_default(a, b)
