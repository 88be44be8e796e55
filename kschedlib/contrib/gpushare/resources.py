"""GPU-sharing accounting: pod shapes read from annotations and per-GPU milli-GPU state per node.

The conventions are those of Alibaba's GPU-sharing scheduler and of the FGD paper's simulator:
a pod asks for ``gpu-count`` GPUs of ``gpu-milli`` thousandths each (a fraction of one GPU
when the count is 1 and the milli below 1000), optionally restricted to GPU models
(``gpu-card-model``, ``A|B``); the GPUs it got are recorded in ``gpu-index`` (``0-1``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.types import NodeInfo, PodInfo

GPU_MILLI = "alibabacloud.com/gpu-milli"
"""Pod annotation: milli-GPU per requested GPU (1000 = a whole GPU); node resource: total."""
GPU_COUNT = "alibabacloud.com/gpu-count"
"""Pod annotation: number of GPUs; node capacity: number of GPUs."""
GPU_INDEX = "alibabacloud.com/gpu-index"
"""Pod annotation set at Reserve: the GPU indices the pod got, ``-``-separated."""
GPU_MODEL = "alibabacloud.com/gpu-card-model"
"""Pod annotation: the accepted GPU models (``A|B``); node label: the node's GPU model."""
MILLI = 1000
MAX_SPEC_CPU = 128000
"""The largest node's milli-CPU, which the paper's policies normalise by."""
MAX_SPEC_GPU = 8000
"""The largest node's milli-GPU, which the paper's policies normalise by."""
EXTENSION_KEY = "gpushare"
DEFAULT_NON_ZERO_CPU = 100


@attrs.frozen(slots=True)
class PodShape:
    """What the GPU policies read of a pod: milli-CPU (100 when unset, as kube-scheduler's
    non-zero requests), milli-GPU per GPU, GPU count and accepted models."""

    milli_cpu: int
    milli_gpu: int = 0
    gpu_count: int = 0
    gpu_types: str = ""
    """The raw ``A|B`` annotation ("" = any model)."""

    @property
    def total_milli_gpu(self) -> int:
        return self.milli_gpu * self.gpu_count

    @property
    def is_share(self) -> bool:
        """One GPU, partly."""
        return self.gpu_count == 1 and self.milli_gpu < MILLI

    @property
    def affinity_tag(self) -> str:
        """GpuClustering's class of the pod: ``no-gpu``, ``share-gpu`` or ``<n>-gpu``."""
        if self.gpu_count == 0 or self.milli_gpu <= 0:
            return "no-gpu"
        if self.is_share:
            return "share-gpu"
        return f"{self.gpu_count}-gpu"

    def accepts(self, model: str) -> bool:
        """Whether a node with GPU ``model`` matches the pod's model constraint."""
        return model_accepted(self.gpu_types, model)


def model_accepted(gpu_types: str, model: str) -> bool:
    """A pod's ``A|B`` constraint against a node's model (no constraint: any node)."""
    if not gpu_types:
        return True
    wanted = [t for t in gpu_types.split("|") if t]
    if not wanted:
        return True
    return bool(model) and model in wanted


def _int(value: str | None) -> int:
    if not value:
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


_SHAPES: dict[int, tuple[Pod, PodShape]] = {}


def pod_shape(pod: Pod) -> PodShape:
    """The pod's shape from its CPU requests and GPU annotations (remembered per pod object:
    pods are immutable)."""
    hit = _SHAPES.get(id(pod))
    if hit is not None and hit[0] is pod:
        return hit[1]
    shape = _pod_shape(pod)
    if len(_SHAPES) >= 8192:
        _SHAPES.clear()
    _SHAPES[id(pod)] = (pod, shape)
    return shape


def _pod_shape(pod: Pod) -> PodShape:
    cpu = 0
    for c in pod.spec.containers:
        q = c.resources.requests.get("cpu")
        cpu += q.milli_value() if q is not None else DEFAULT_NON_ZERO_CPU
    if cpu == 0:
        cpu = DEFAULT_NON_ZERO_CPU
    ann = pod.metadata.annotations
    milli = _int(ann.get(GPU_MILLI))
    count = _int(ann.get(GPU_COUNT))
    if milli <= 0 or count <= 0:
        return PodShape(cpu)
    return PodShape(cpu, milli, count, ann.get(GPU_MODEL, ""))


def gpu_indices(pod: Pod) -> tuple[int, ...]:
    """The GPU indices recorded on the pod (empty before Reserve)."""
    raw = pod.metadata.annotations.get(GPU_INDEX, "")
    if not raw:
        return ()
    try:
        return tuple(int(x) for x in raw.split("-"))
    except ValueError:
        return ()


def node_gpu_count(node: Node | None) -> int:
    if node is None:
        return 0
    q = node.status.capacity.get(GPU_COUNT)
    return int(q.value()) if q is not None else 0


def node_gpu_model(node: Node | None) -> str:
    return "" if node is None else node.metadata.labels.get(GPU_MODEL, "")


class GpuNodeState:
    """Per-GPU free milli-GPU of one node and the GPU classes of its pods: a NodeInfo
    extension, so it follows assume/forget, snapshots and forks with the NodeInfo."""

    __slots__ = ("model", "milli_left", "affinity", "_placed")

    def __init__(self, model: str, gpu_count: int) -> None:
        self.model = model
        self.milli_left = [MILLI] * gpu_count
        self.affinity: dict[str, int] = {}
        self._placed: dict[str, tuple[int, tuple[int, ...]]] = {}

    @classmethod
    def of(cls, node_info: NodeInfo) -> GpuNodeState:
        state = cls(node_gpu_model(node_info.node), node_gpu_count(node_info.node))
        for pi in node_info.pods:
            state.add_pod(pi)
        return state

    def add_pod(self, pod_info: PodInfo) -> None:
        pod = pod_info.pod
        shape = pod_shape(pod)
        if shape.gpu_count == 0:
            return
        tag = shape.affinity_tag
        self.affinity[tag] = self.affinity.get(tag, 0) + 1
        ids = gpu_indices(pod)
        left = self.milli_left
        ids = tuple(i for i in ids if 0 <= i < len(left))
        for i in ids:
            left[i] -= shape.milli_gpu
        self._placed[pod.uid] = (shape.milli_gpu, ids)

    def remove_pod(self, pod_info: PodInfo) -> None:
        pod = pod_info.pod
        placed = self._placed.pop(pod.uid, None)
        if placed is None:
            return
        milli, ids = placed
        for i in ids:
            self.milli_left[i] += milli
        tag = pod_shape(pod).affinity_tag
        n = self.affinity.get(tag, 0) - 1
        if n > 0:
            self.affinity[tag] = n
        else:
            self.affinity.pop(tag, None)

    def clone(self) -> GpuNodeState:
        c = GpuNodeState.__new__(GpuNodeState)
        c.model = self.model
        c.milli_left = list(self.milli_left)
        c.affinity = dict(self.affinity)
        c._placed = dict(self._placed)
        return c

    @property
    def gpu_count(self) -> int:
        return len(self.milli_left)

    @property
    def total_left(self) -> int:
        return sum(self.milli_left)

    @property
    def fully_free(self) -> int:
        return sum(1 for m in self.milli_left if m == MILLI)


def gpu_state(node_info: NodeInfo) -> GpuNodeState:
    """The node's GPU accounting (built from its pods on first use, then kept current)."""
    state: GpuNodeState = node_info.extension(EXTENSION_KEY, GpuNodeState.of)
    return state


@attrs.frozen(slots=True)
class NodeView:
    """An immutable summary of a node for the policies: CPU left and capacity, free milli-GPU
    per GPU (device order), model. Hashable, so policies can memoise on it."""

    milli_cpu_left: int
    milli_cpu_capacity: int
    milli_left: tuple[int, ...]
    model: str

    @property
    def total_left(self) -> int:
        return sum(self.milli_left)

    @property
    def fully_free(self) -> int:
        return sum(1 for m in self.milli_left if m == MILLI)


def node_view(node_info: NodeInfo) -> NodeView:
    st = gpu_state(node_info)
    cap = node_info.allocatable.milli_cpu
    return NodeView(cap - node_info.requested.milli_cpu, cap, tuple(st.milli_left), st.model)


def annotations_for_shape(shape: PodShape) -> Mapping[str, str]:
    """The annotations that give a pod ``shape``'s GPU request."""
    if shape.gpu_count == 0:
        return {}
    out = {GPU_MILLI: str(shape.milli_gpu), GPU_COUNT: str(shape.gpu_count)}
    if shape.gpu_types:
        out[GPU_MODEL] = shape.gpu_types
    return out
