"""Fuzzer: mutated real objects (Pods, Nodes, configurations, whole files) either load or
raise one of kschedlib's own error types, and every accepted pending pod ends pending,
waiting or bound (never lost).

The CI run is short; ``KSCHEDLIB_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz.py``
runs a longer campaign (a few minutes)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# celpy raises the recursion limit when imported: import it before hypothesis runs a test.
import kschedlib.plugins.dynamicresources.cel  # noqa: F401
from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.api.loader import load_objects
from kschedlib.config import load_config
from kschedlib.errors import KSchedError
from tests.builders import accounted
from tests.corpus import CORPUS

DATA = Path(__file__).parent / "data" / "realdata"
# Small real objects of several shapes (see data/realdata/SOURCES.md); the big dumps there
# would make each example slow.
SEED_FILES = [DATA / n for n in (
    "k9s__internal_render_testdata_no.json",
    "k9s__internal_render_testdata_po.json",
    "k9s__internal_render_testdata_po_sidecar.json",
    "kubectl-neat__list1-raw.json",
    "kwok__virtual-gpu-node.yaml",
    "popeye__internal_lint_testdata_core_pod_1.yaml",
)]
EXAMPLES = int(os.environ.get("KSCHEDLIB_FUZZ_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _docs(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    docs = list(yaml.safe_load_all(text)) if path.suffix == ".yaml" else [json.loads(text)]
    out: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and str(d.get("kind", "")).endswith("List"):
            out += [i for i in d.get("items", []) if isinstance(i, dict)]
        elif isinstance(d, dict):
            out.append(d)
    return out


def _seeds() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pods: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    for f in SEED_FILES:
        for d in _docs(f):
            (nodes if d.get("kind") == "Node" else pods).append(d)
    for name in ("mixed-001", "preemption-001", "topology-spread-001", "pod-affinity-001"):
        sc = json.loads((CORPUS / f"{name}.json").read_text())
        pods += sc.get("pending", [])[:3]
        nodes += sc.get("nodes", [])[:3]
    return pods, nodes


POD_SEEDS, NODE_SEEDS = _seeds()
CONFIG_SEEDS: list[dict[str, Any]] = [
    {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
     "percentageOfNodesToScore": 50,
     "profiles": [{"schedulerName": "default-scheduler",
                   "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
                   "pluginConfig": [
                       {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                           "type": "RequestedToCapacityRatio",
                           "resources": [{"name": "cpu", "weight": 1}],
                           "requestedToCapacityRatio": {"shape": [
                               {"utilization": 0, "score": 0},
                               {"utilization": 100, "score": 10}]}}}},
                       {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]},
]

LEAVES = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "1e400", "-1", " 1", "9223372036854775807", "1Ei", "0.000001m",
                     "Bad_Name", "a" * 300, "default", "kubernetes.io/hostname", "In",
                     "DoNotSchedule", "NoSchedule", "Exists", "\u00e9", "1.5.0", "2Gi",
                     "2025-09-01T06:00:00Z"]),
    st.text(max_size=12),
    st.just([]), st.just({}),
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: Any, seeds: list[dict[str, Any]]) -> dict[str, Any]:
    """A seed object with a few random edits: set a leaf, delete a key, deepen a value."""
    obj = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(obj)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent: Any = obj
        for p in path[:-1]:
            parent = parent[p]
        op = draw(st.sampled_from(["set", "set", "set", "delete", "deepen"]))
        key = path[-1]
        if op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "deepen":
            v: Any = draw(LEAVES)
            for _ in range(draw(st.integers(min_value=1, max_value=40))):
                v = [v] if draw(st.booleans()) else {"x": v}
            parent[key] = v
        else:
            parent[key] = draw(LEAVES)
    return obj


def _schedule_all(sched: Scheduler, clock: FakeClock, keys: list[str]) -> None:
    for _ in range(3):
        sched.run()
        clock.advance(20.0)
    where = accounted(sched, keys)
    assert "LOST" not in where.values(), where


def _try(fn: Any, *args: Any) -> Any:
    """Call; kschedlib's own errors are fine (None), anything else fails the test."""
    try:
        return fn(*args)
    except KSchedError:
        return None


@SETTINGS
@given(pod=mutated(POD_SEEDS), node=mutated(NODE_SEEDS))
def test_mutated_pod_and_node_never_escape_or_lose_a_pod(pod: Any, node: Any) -> None:
    clock = FakeClock()
    sched = Scheduler(clock=clock, seed=1)
    for n in NODE_SEEDS[:3]:
        _try(sched.add_node, Node.from_dict(n))
    n_obj = _try(Node.from_dict, node)
    if n_obj is not None:
        _try(sched.add_node, n_obj)
    p = _try(Pod.from_dict, pod)
    keys: list[str] = []
    if p is not None:
        p = p.with_node_name("") if p.spec.node_name else p
        before = {x.uid for x in sched.pending_pods()}
        _try(sched.add_pod, p)
        if p.uid not in before and any(x.uid == p.uid for x in sched.pending_pods()):
            keys.append(p.key)
    _schedule_all(sched, clock, keys)


@SETTINGS
@given(cfg=mutated(CONFIG_SEEDS))
def test_mutated_config_is_a_config_error_or_schedules(cfg: Any) -> None:
    loaded = _try(load_config, cfg)
    if loaded is None:
        return
    clock = FakeClock()
    sched = _try(lambda: Scheduler(loaded, clock=clock, seed=1))
    if sched is None:
        return
    for n in NODE_SEEDS[:4]:
        _try(sched.add_node, Node.from_dict(n))
    keys = []
    for d in POD_SEEDS[:4]:
        p = _try(Pod.from_dict, d)
        if p is None or p.spec.node_name:
            continue
        before = len(sched.pending_pods())
        _try(sched.add_pod, p)
        if len(sched.pending_pods()) > before:
            keys.append(p.key)
    _schedule_all(sched, clock, keys)


FILES = SEED_FILES


@SETTINGS
@given(
    f=st.sampled_from(FILES),
    edits=st.lists(st.tuples(st.floats(min_value=0, max_value=1),
                             st.sampled_from(["delete", "dup", "byte"]),
                             st.binary(min_size=1, max_size=3)), min_size=1, max_size=6),
)
def test_mutated_whole_file_loads_or_is_a_typed_error(f: Path, edits: Any) -> None:
    data = bytearray(f.read_bytes())
    for where, op, b in edits:
        i = int(where * (len(data) - 1))
        if op == "delete":
            del data[i : i + len(b)]
        elif op == "dup":
            data[i:i] = data[i : i + 16]
        else:
            data[i : i + 1] = b
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the CLI reports these (see test_validation); load_objects takes text
    objs = _try(load_objects, text)
    if objs is None:
        return
    clock = FakeClock()
    sched = Scheduler(clock=clock, seed=1)
    for n in NODE_SEEDS[:2]:
        sched.add_node(Node.from_dict(n))
    keys = []
    for o in objs:
        if isinstance(o, Node):
            _try(sched.add_node, o)
        elif isinstance(o, Pod):
            o = o.with_node_name("") if o.spec.node_name else o
            before = len(sched.pending_pods())
            _try(sched.add_pod, o)
            if len(sched.pending_pods()) > before:
                keys.append(o.key)
    _schedule_all(sched, clock, keys)


class _Chaos:
    """A plugin at every extension point that raises when its random stream says so."""

    name = "Chaos"

    def __init__(self, draws: list[bool]) -> None:
        self.draws = draws
        self.i = 0

    def _maybe(self) -> None:
        d = self.draws[self.i % len(self.draws)]
        self.i += 1
        if d:
            raise RuntimeError(f"chaos #{self.i}")

    def pre_filter(self, state: Any, p: Any, nodes: Any) -> Any:
        self._maybe()
        return None, None

    def pre_filter_extensions(self) -> Any:
        return self

    def add_pod(self, *a: Any) -> None:
        self._maybe()

    def remove_pod(self, *a: Any) -> None:
        self._maybe()

    def filter(self, *a: Any) -> None:
        self._maybe()

    def pre_score(self, *a: Any) -> None:
        self._maybe()

    def score(self, *a: Any) -> Any:
        self._maybe()
        return 0, None

    def score_extensions(self) -> None:
        return None

    def reserve(self, *a: Any) -> None:
        self._maybe()

    def unreserve(self, *a: Any) -> None:
        self._maybe()

    def permit(self, *a: Any) -> Any:
        self._maybe()
        return None, 0.0

    def pre_bind(self, *a: Any) -> None:
        self._maybe()

    def post_bind(self, *a: Any) -> None:
        self._maybe()


@SETTINGS
@given(
    draws=st.lists(st.booleans(), min_size=1, max_size=30),
    pods=st.lists(st.sampled_from(POD_SEEDS), min_size=1, max_size=6),
    deletes=st.lists(st.integers(min_value=0, max_value=20), max_size=3),
)
def test_randomly_raising_plugin_never_loses_a_pod(
    draws: list[bool], pods: list[dict[str, Any]], deletes: list[int]
) -> None:
    chaos = _Chaos(draws)
    clock = FakeClock()
    cfg = {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Chaos"}]}}}]}
    sched = Scheduler(cfg, clock=clock, seed=1, plugins={"Chaos": lambda a, h: chaos})
    for n in NODE_SEEDS[:4]:
        _try(sched.add_node, Node.from_dict(n))
    keys: list[str] = []
    for i, d in enumerate(pods):
        p = _try(Pod.from_dict, {**d, "metadata": {**d.get("metadata", {}),
                                                  "name": f"p{i}", "uid": f"u{i}"}})
        if p is None:
            continue
        p = p.with_node_name("") if p.spec.node_name else p
        before = len(sched.pending_pods())
        _try(sched.add_pod, p)
        if len(sched.pending_pods()) > before:
            keys.append(p.key)
    for k in deletes:  # some nodes go away mid-run
        sched.run(max_cycles=1)
        sched.delete_node(NODE_SEEDS[k % 4]["metadata"]["name"])
    _schedule_all(sched, clock, keys)
