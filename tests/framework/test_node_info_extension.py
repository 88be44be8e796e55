"""NodeInfo extensions follow the NodeInfo's pods through add/remove, clones and snapshots,
and a Reserve plugin's amend_assumed_pod reaches the cache, Bind and the bound pod."""

from __future__ import annotations

from typing import Any

from kschedlib import Scheduler
from kschedlib.backend.cache.cache import copy_node_info
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.testing import make_node, make_pod


class Names:
    """An extension listing the pod names on a node, with a build counter."""

    built = 0

    def __init__(self, ni: NodeInfo) -> None:
        Names.built += 1
        self.names = {pi.pod.metadata.name for pi in ni.pods}

    def add_pod(self, pod_info: PodInfo) -> None:
        self.names.add(pod_info.pod.metadata.name)

    def remove_pod(self, pod_info: PodInfo) -> None:
        self.names.discard(pod_info.pod.metadata.name)

    def clone(self) -> Names:
        c = Names.__new__(Names)
        c.names = set(self.names)
        return c


def test_extension_is_built_once_then_follows_pods_and_clones() -> None:
    node = make_node("n").capacity(cpu="4").obj()
    a, b = make_pod("a").node("n").obj(), make_pod("b").node("n").obj()
    ni = NodeInfo(node, a)
    Names.built = 0
    ext = ni.extension("names", Names)
    assert ext.names == {"a"} and Names.built == 1
    assert ni.extension("names", Names) is ext and Names.built == 1
    ni.add_pod(b)
    assert ext.names == {"a", "b"}
    c = ni.clone()
    c.remove_pod(a)
    assert c.extension("names", Names).names == {"b"}
    assert ext.names == {"a", "b"}  # the clone's copy is independent
    dst = NodeInfo()
    copy_node_info(dst, ni)
    assert dst.extension("names", Names).names == {"a", "b"}
    assert dst.extensions is not None and dst.extensions["names"] is not ext
    ni.set_node(node)  # a node update drops the state; it is rebuilt on the next request
    assert ni.extensions is None
    assert ni.extension("names", Names).names == {"a", "b"} and Names.built == 2


class Tagger:
    """Reserve records the chosen node on the pod through amend_assumed_pod."""

    name = "Tagger"

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        self.handle.host.amend_assumed_pod(pod, {"example.com/slot": f"{node_name}-0"})

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None


def test_amend_assumed_pod_reaches_the_cache_and_the_bound_pod() -> None:
    config = {"profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"reserve": {"enabled": [{"name": "Tagger"}]}}}]}
    sched = Scheduler(config, plugins={"Tagger": lambda args, h: Tagger(h)}, deterministic=True)
    sched.add_node(make_node("n1").capacity(cpu="2", pods="10").obj())
    sched.add_pod(make_pod("p").req(cpu="1").obj())
    (res,) = sched.run()
    assert res.node == "n1"
    (bound,) = sched.bound_pods()
    assert bound.metadata.annotations["example.com/slot"] == "n1-0"
    info = sched.cache.get_node("n1")
    assert [pi.pod.metadata.annotations.get("example.com/slot") for pi in info.pods] == ["n1-0"]
    assert info.requested.milli_cpu == 1000
