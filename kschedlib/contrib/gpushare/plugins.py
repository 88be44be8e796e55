"""GPU sharing as scheduler plugins: ``GpuShare`` (Filter, Reserve: which GPUs a pod gets)
and the FGD paper's six Score policies, as its simulator defines them."""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.contrib.gpushare.frag import FragMeter, TypicalPod, sigmoid
from kschedlib.contrib.gpushare.resources import (
    GPU_INDEX,
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    MILLI,
    NodeView,
    PodShape,
    gpu_state,
    node_view,
    pod_shape,
)
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState, StateNotFoundError
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

GPU_SHARE = "GpuShare"
RANDOM = "RandomScore"
DOT_PRODUCT = "DotProductScore"
GPU_CLUSTERING = "GpuClusteringScore"
GPU_PACKING = "GpuPackingScore"
BEST_FIT = "BestFitScore"
FGD = "FGDScore"
MAX_SCORE = 100

NO_GPU = "node(s) had no GPU"
MODEL_MISMATCH = "node(s) didn't match the pod's GPU model"
INSUFFICIENT_GPU = "node(s) didn't have enough free GPU"

#: GPU selection methods of GpuShare's Reserve (``gpuSelMethod``).
SELECTION_METHODS = ("best", "worst", "random", FGD, DOT_PRODUCT)


def parse_typical_pods(raw: Any, plugin: str) -> tuple[TypicalPod, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ConfigError(f"pluginConfig[{plugin}].args.typicalPods: expected a list")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, TypicalPod):
            out.append(item)
            continue
        try:
            out.append(TypicalPod.from_dict(item))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"pluginConfig[{plugin}].args.typicalPods[{i}]: {type(exc).__name__}: {exc}"
            ) from None
    return tuple(out)


def _args(raw: Any, plugin: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"pluginConfig[{plugin}].args: expected an object")
    return raw


def _shape(state: CycleState | None, pod: Pod) -> PodShape:
    """The pod's shape, computed once per cycle."""
    if state is None:
        return pod_shape(pod)
    try:
        held: _ShapeState = state.read(_SHAPE_KEY)
        return held.shape
    except StateNotFoundError:
        shape = pod_shape(pod)
        state.write(_SHAPE_KEY, _ShapeState(shape))
        return shape


_SHAPE_KEY = "gpushare/shape"


class _ShapeState:
    __slots__ = ("shape",)

    def __init__(self, shape: PodShape) -> None:
        self.shape = shape

    def clone(self) -> _ShapeState:
        return self


# ---- GPU choice ---------------------------------------------------------------------------


def exclusive_gpus(left: Sequence[int], count: int) -> tuple[int, ...] | None:
    """The first ``count`` fully free GPUs in device order."""
    out = [i for i, m in enumerate(left) if m == MILLI][:count]
    return tuple(out) if len(out) == count else None


def best_fit_gpu(left: Sequence[int], milli: int) -> int | None:
    """The fitting GPU with the least free milli-GPU (the first such in device order)."""
    best: int | None = None
    for i, m in enumerate(left):
        if m >= milli and (best is None or m < left[best]):
            best = i
    return best


def worst_fit_gpu(left: Sequence[int], milli: int) -> int | None:
    best: int | None = None
    for i, m in enumerate(left):
        if m >= milli and (best is None or m > left[best]):
            best = i
    return best


def random_fit_gpu(left: Sequence[int], milli: int, rng: random.Random) -> int | None:
    """A fitting GPU drawn uniformly (reservoir sampling in device order)."""
    chosen: int | None = None
    n = 0
    for i, m in enumerate(left):
        if m >= milli:
            n += 1
            if rng.randrange(n) == 0:
                chosen = i
    return chosen


def fits(left: Sequence[int], shape: PodShape) -> bool:
    """Whether the GPUs can hold the pod (several of its GPUs may share one device when the
    per-GPU request leaves room, as the GPU-sharing scheduler allows)."""
    need = shape.milli_gpu
    if shape.gpu_count == 1:
        return any(m >= need for m in left)
    return sum(m // need for m in left) >= shape.gpu_count


# ---- GpuShare: Filter and Reserve ------------------------------------------------------------


class GpuShare:
    """Filter: the node has a GPU model the pod accepts and enough free milli-GPU on its
    devices. Reserve: picks the devices (``gpuSelMethod``) and records them on the pod
    (``gpu-index``) through ``handle.host.amend_assumed_pod``."""

    name = GPU_SHARE
    node_local = True

    def __init__(self, args: Any, handle: Any) -> None:
        a = _args(args, GPU_SHARE)
        method = str(a.get("gpuSelMethod", "best"))
        if method not in SELECTION_METHODS:
            raise ConfigError(
                f"pluginConfig[{GPU_SHARE}].args.gpuSelMethod: {method!r} is not one of "
                + ", ".join(SELECTION_METHODS)
            )
        self.method = method
        self.handle = handle
        self.meter = FragMeter(parse_typical_pods(a.get("typicalPods"), GPU_SHARE))
        seed = getattr(handle, "rng_seed", None)
        self.rng = random.Random(seed if seed is not None else 0)

    def sign_pod(self, pod: Pod) -> Hashable | None:
        s = pod_shape(pod)
        return (s.milli_gpu, s.gpu_count, s.gpu_types)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        shape = _shape(state, pod)
        if shape.milli_gpu <= 0:
            return None
        st = gpu_state(node_info)
        if not st.milli_left:
            return Status(Code.Unschedulable, (NO_GPU,))
        if not shape.accepts(st.model):
            return Status(Code.Unschedulable, (MODEL_MISMATCH,))
        if not fits(st.milli_left, shape):
            return Status(Code.Unschedulable, (INSUFFICIENT_GPU,))
        return None

    def choose(self, shape: PodShape, view: NodeView) -> tuple[int, ...] | None:
        """The devices the pod gets on a node in state ``view``."""
        left = view.milli_left
        if not shape.is_share:
            if shape.milli_gpu >= MILLI:
                return exclusive_gpus(left, shape.gpu_count)
            out: list[int] = []
            work = list(left)
            for i in range(len(work)):
                while len(out) < shape.gpu_count and work[i] >= shape.milli_gpu:
                    work[i] -= shape.milli_gpu
                    out.append(i)
            return tuple(out) if len(out) == shape.gpu_count else None
        m = self.method
        if m == FGD:
            _, gpu = fgd_score(view, shape, self.meter)
        elif m == "random":
            gpu = random_fit_gpu(left, shape.milli_gpu, self.rng)
        elif m == "worst":
            gpu = worst_fit_gpu(left, shape.milli_gpu)
        else:  # best, and DotProductScore (its merged-dimension choice is best fit)
            gpu = best_fit_gpu(left, shape.milli_gpu)
        return None if gpu is None else (gpu,)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        shape = _shape(state, pod)
        if shape.milli_gpu <= 0:
            return None
        node_info = self.handle.snapshot_shared_lister().node_infos().get(node_name)
        ids = self.choose(shape, node_view(node_info))
        if ids is None:
            return Status(Code.Error, (f"no GPU of node {node_name} fits pod {pod.key}",))
        self.handle.host.amend_assumed_pod(pod, {GPU_INDEX: "-".join(map(str, ids))})
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None  # forgetting the assumed pod releases its devices

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A GPU pod leaving frees devices; a node added or changed may bring some."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 _gpu_pod_deleted),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                             | ActionType.UpdateNodeLabel),
                _node_changed),
        ]


def _gpu_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    if not isinstance(old_obj, Pod):
        raise TypeError(f"expected a Pod, got {type(old_obj).__name__}")
    if pod_shape(old_obj).gpu_count and pod_shape(pod).gpu_count:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _node_changed(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    return QueueingHint.Queue if pod_shape(pod).gpu_count else QueueingHint.QueueSkip


# ---- Score policies ---------------------------------------------------------------------


class _ScoreBase:
    name = ""
    node_local = True

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return pod_shape(pod)

    def score_extensions(self) -> Any:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self.score_view(_shape(state, pod), node_view(node_info))

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        shape = _shape(state, pod)
        fn = self.score_view
        out: list[int] = []
        for ni in nodes:
            v, st = fn(shape, node_view(ni))
            if st is not None:
                return [], st
            out.append(v)
        return out, None

    def score_view(self, shape: PodShape, view: NodeView) -> tuple[int, Status | None]:
        raise NotImplementedError


class RandomScore:
    """Random: one feasible node drawn uniformly at PreScore scores 100, the others 0."""

    name = RANDOM

    def __init__(self, args: Any, handle: Any) -> None:
        seed = getattr(handle, "rng_seed", None)
        self.rng = random.Random(seed if seed is not None else 0)

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write("PreScore" + RANDOM, _Chosen(nodes[self.rng.randrange(len(nodes))].name))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        chosen: _Chosen = state.read("PreScore" + RANDOM)
        return (MAX_SCORE if node_info.name == chosen.name else 0), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        name = state.read("PreScore" + RANDOM).name
        return [MAX_SCORE if ni.name == name else 0 for ni in nodes], None

    def score_extensions(self) -> Any:
        return None


class _Chosen:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def clone(self) -> _Chosen:
        return self


class DotProductScore(_ScoreBase):
    """DotProd: 1 - <free, request> over (CPU, total GPU), each normalised by the largest
    node's capacity; aligned free and requested vectors score low."""

    name = DOT_PRODUCT

    def score_view(self, shape: PodShape, view: NodeView) -> tuple[int, Status | None]:
        if view.milli_cpu_left < shape.milli_cpu:
            return 0, None
        dot = (view.milli_cpu_left / MAX_SPEC_CPU) * (shape.milli_cpu / MAX_SPEC_CPU) + (
            view.total_left / MAX_SPEC_GPU
        ) * (shape.total_milli_gpu / MAX_SPEC_GPU)
        return int(MAX_SCORE * (1 - dot / 2)), None


class GpuClusteringScore(_ScoreBase):
    """GpuClustering: prefer nodes whose GPU pods are of the pod's class (share-GPU, one
    GPU, two GPUs, ...), then fuller nodes; CPU-only pods score 0 everywhere."""

    name = GPU_CLUSTERING

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        shape = _shape(state, pod)
        st = gpu_state(node_info)
        return self._score(shape, st.affinity, st.total_left, st.model), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        shape = _shape(state, pod)
        out = []
        for ni in nodes:
            st = gpu_state(ni)
            out.append(self._score(shape, st.affinity, st.total_left, st.model))
        return out, None

    @staticmethod
    def _score(shape: PodShape, affinity: Mapping[str, int], total_left: int, model: str) -> int:
        tag = shape.affinity_tag
        if tag == "no-gpu":
            return 0
        if not shape.accepts(model):
            return 0
        fill = MAX_SCORE // 4 * (MAX_SPEC_GPU - total_left) // MAX_SPEC_GPU
        if affinity.get(tag, 0) > 0:
            return fill + (MAX_SCORE * 3 // 4 if len(affinity) == 1 else MAX_SCORE * 2 // 4)
        if not affinity:
            return fill + MAX_SCORE // 4
        return fill


class GpuPackingScore(_ScoreBase):
    """GpuPacking: prefer partly used GPUs (fuller first), then partly used nodes, then
    idle nodes; CPU-only pods score 0 everywhere."""

    name = GPU_PACKING

    def score_view(self, shape: PodShape, view: NodeView) -> tuple[int, Status | None]:
        if shape.milli_gpu <= 0:
            return 0, None
        left = view.milli_left
        free = view.fully_free
        if free == len(left):
            return max(MAX_SCORE // 3 - free, free), None
        order = sorted(range(len(left)), key=lambda i: left[i])
        need = shape.gpu_count
        used: list[int] = []
        fresh = 0
        for i in order:
            if need == 0:
                break
            if shape.milli_gpu <= left[i]:
                need -= 1
                used.append(i)
                if left[i] == MILLI:
                    fresh += 1
        if need != 0:
            return 0, Status(Code.Error, (f"no GPU of the node fits the pod ({shape})",))
        if fresh > 0:
            return max(MAX_SCORE // 2 - fresh, MAX_SCORE // 3), None
        free_pct = sum(left[i] * 100 // MILLI for i in used)
        return max(MAX_SCORE - free_pct // 10, MAX_SCORE // 2), None


class BestFitScore(_ScoreBase):
    """BestFit: least (CPU, total GPU) left after placing the pod, equally weighted and
    normalised by the largest node; scores min-max normalised to 0..100."""

    name = BEST_FIT

    def score_view(self, shape: PodShape, view: NodeView) -> tuple[int, Status | None]:
        cpu_free, gpu_free = view.milli_cpu_left, view.total_left
        if cpu_free < shape.milli_cpu or gpu_free < shape.total_milli_gpu:
            return 0, Status(Code.Error, (f"free resources below the pod's request ({shape})",))
        s = (cpu_free - shape.milli_cpu) / MAX_SPEC_CPU * 0.5 + (
            gpu_free - shape.total_milli_gpu
        ) / MAX_SPEC_GPU * 0.5
        return int((1.0 - s) * MAX_SCORE), None

    def score_extensions(self) -> BestFitScore:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        values = [s.score for s in scores]
        self.normalize_score_values(state, pod, values)
        for s, v in zip(scores, values, strict=True):
            s.score = v
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> None:
        if not values:
            return
        hi, lo = max(values), min(values)
        span = hi - lo
        for i, v in enumerate(values):
            values[i] = 0 if span == 0 else (v - lo) * MAX_SCORE // span


def fgd_score(view: NodeView, shape: PodShape, meter: FragMeter) -> tuple[int, int | None]:
    """FGD's score of placing ``shape`` on a node (sigmoid of the fragmentation it removes,
    per 1000 milli-GPU) and, for a GPU-sharing pod, the device that scores best."""
    cpu, left, model = view.milli_cpu_left, view.milli_left, view.model
    before = meter.score(cpu, left, model)
    if shape.is_share:
        best, gpu = 0, None
        work = list(left)
        for i, m in enumerate(left):
            if m >= shape.milli_gpu:
                work[i] = m - shape.milli_gpu
                after = meter.score(cpu - shape.milli_cpu, work, model)
                work[i] = m
                s = int(sigmoid((before - after) / 1000) * MAX_SCORE)
                if gpu is None or s > best:
                    best, gpu = s, i
        return best, gpu
    work = list(left)
    if shape.gpu_count:
        need = shape.gpu_count
        for i in sorted(range(len(work)), key=lambda k: work[k]):
            if shape.milli_gpu <= work[i]:
                work[i] -= shape.milli_gpu
                need -= 1
                if need <= 0:
                    break
    after = meter.score(cpu - shape.milli_cpu, work, model)
    return int(sigmoid((before - after) / 1000) * MAX_SCORE), None


class FGDScore(_ScoreBase):
    """FGD: the placement that most reduces the node's fragmentation measured against the
    workload's typical task shapes (``typicalPods`` args)."""

    name = FGD

    def __init__(self, args: Any, handle: Any) -> None:
        super().__init__(args, handle)
        a = _args(args, FGD)
        typical = parse_typical_pods(a.get("typicalPods"), FGD)
        self.meter = FragMeter(typical)
        self._memo: dict[tuple[NodeView, PodShape], int] = {}

    def node_local_fragment(self, pod: Pod) -> Hashable | None:
        return (pod_shape(pod), id(self.meter))

    def score_view(self, shape: PodShape, view: NodeView) -> tuple[int, Status | None]:
        key = (view, shape)
        v = self._memo.get(key)
        if v is None:
            v = fgd_score(view, shape, self.meter)[0]
            if len(self._memo) > 500_000:
                self._memo.clear()
            self._memo[key] = v
        return v, None


FACTORIES: dict[str, Any] = {
    GPU_SHARE: GpuShare,
    RANDOM: RandomScore,
    DOT_PRODUCT: DotProductScore,
    GPU_CLUSTERING: GpuClusteringScore,
    GPU_PACKING: GpuPackingScore,
    BEST_FIT: BestFitScore,
    FGD: FGDScore,
}
