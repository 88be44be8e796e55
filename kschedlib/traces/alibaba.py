"""Alibaba's GPU cluster trace v2023 (``cluster-trace-gpu-v2023``, the FGD paper's trace) as
Kubernetes objects.

Nodes (``openb_node_list_gpu_node.csv``): ``sn`` -> name (and the hostname label),
``cpu_milli`` -> cpu, ``memory_mib`` -> memory (Mi), ``gpu`` -> the extended resources
``alibabacloud.com/gpu-count`` and ``alibabacloud.com/gpu-milli`` (1000 per GPU), ``model`` ->
the label ``alibabacloud.com/gpu-card-model``; ``pods`` is ``max_pods`` (1001, as the paper's
simulator sets it).

Tasks (``openb_pod_list_*.csv``): ``name`` -> pod name (namespace ``openb``), ``cpu_milli``
and ``memory_mib`` -> requests (= limits) of one container; ``num_gpu`` and ``gpu_milli`` ->
the annotations ``alibabacloud.com/gpu-count`` and ``alibabacloud.com/gpu-milli`` (milli-GPU
per GPU: below 1000 is a share of one GPU; values above 1000 are capped at 1000, as the
simulator's converter does); ``gpu_spec`` (``A|B``) -> the annotation
``alibabacloud.com/gpu-card-model`` and, with ``gpu_model_affinity``, a required node affinity
on that label; ``qos`` (Alibaba's LS/BE/Burstable/Guaranteed) -> the label
``alibabacloud.com/qos``; ``pod_phase`` -> the label ``alibabacloud.com/trace-phase``;
``creation_time``/``deletion_time``/``scheduled_time`` (seconds) -> ``TraceTask`` fields
for event replay.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.contrib.gpushare.resources import GPU_COUNT, GPU_MILLI, GPU_MODEL, MILLI
from kschedlib.errors import InvalidObjectError

GPU_NODE_LIST = "openb_node_list_gpu_node.csv"
NAMESPACE = "openb"
QOS_LABEL = "alibabacloud.com/qos"
PHASE_LABEL = "alibabacloud.com/trace-phase"
HOSTNAME = "kubernetes.io/hostname"
DEFAULT_MAX_PODS = 1001


@attrs.frozen(slots=True)
class TraceTask:
    """One task of the trace: its pod and the trace's timestamps (seconds, None if absent)."""

    pod: Pod
    creation_time: float | None = None
    deletion_time: float | None = None
    scheduled_time: float | None = None


@attrs.frozen(slots=True)
class AlibabaGpuTrace:
    """The nodes and one task list of the trace."""

    nodes: tuple[Node, ...]
    tasks: tuple[TraceTask, ...]
    task_list: str

    @property
    def pods(self) -> list[Pod]:
        return [t.pod for t in self.tasks]

    @property
    def gpu_capacity_milli(self) -> int:
        total = 0
        for n in self.nodes:
            q = n.status.capacity.get(GPU_COUNT)
            total += (int(q.value()) if q is not None else 0) * MILLI
        return total


def task_lists(directory: str | Path) -> list[str]:
    """The task-list names in a trace directory (``default``, ``cpu050``, ...)."""
    d = Path(directory)
    names = [p.stem[len("openb_pod_list_"):] for p in d.glob("openb_pod_list_*.csv")]
    return sorted(names, key=lambda n: (n != "default", n))


def task_list_path(directory: str | Path, task_list: str) -> Path:
    """The CSV of a task list (a name like ``default`` or a path)."""
    p = Path(task_list)
    if p.suffix == ".csv" and p.exists():
        return p
    return Path(directory) / f"openb_pod_list_{task_list}.csv"


def _read(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(newline="") as f:
            return list(csv.DictReader(f))
    except OSError as exc:
        raise InvalidObjectError("trace", str(path), f"cannot read: {exc}") from None


def _int(row: dict[str, str], field: str, where: str, default: int | None = None) -> int:
    raw = (row.get(field) or "").strip()
    if not raw:
        if default is not None:
            return default
        raise InvalidObjectError("trace", f"{where}.{field}", "missing value")
    try:
        return int(float(raw))
    except ValueError:
        raise InvalidObjectError("trace", f"{where}.{field}", f"not a number: {raw!r}") from None


def _time(row: dict[str, str], field: str) -> float | None:
    raw = (row.get(field) or "").strip()
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def node_from_row(row: dict[str, str], where: str, max_pods: int = DEFAULT_MAX_PODS) -> Node:
    name = (row.get("sn") or "").strip()
    if not name:
        raise InvalidObjectError("trace", f"{where}.sn", "missing node name")
    cpu = _int(row, "cpu_milli", where)
    mem = _int(row, "memory_mib", where)
    gpus = _int(row, "gpu", where, 0)
    model = (row.get("model") or "").strip()
    res: dict[str, str] = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(max_pods)}
    labels = {HOSTNAME: name, "kubernetes.io/os": "linux"}
    if gpus > 0:
        res[GPU_COUNT] = str(gpus)
        res[GPU_MILLI] = str(gpus * MILLI)
        if model:
            labels[GPU_MODEL] = model
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": name, "labels": labels},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    })


def pod_from_row(row: dict[str, str], where: str, gpu_model_affinity: bool = True) -> Pod:
    name = (row.get("name") or "").strip()
    if not name:
        raise InvalidObjectError("trace", f"{where}.name", "missing task name")
    cpu = _int(row, "cpu_milli", where)
    mem = _int(row, "memory_mib", where, 0)
    num_gpu = _int(row, "num_gpu", where, 0)
    if num_gpu < 0 or cpu < 0 or mem < 0:
        raise InvalidObjectError("trace", where, "negative request")
    requests = {"cpu": f"{cpu}m"}
    if mem:
        requests["memory"] = f"{mem}Mi"
    labels = {}
    if row.get("qos"):
        labels[QOS_LABEL] = row["qos"].strip()
    if row.get("pod_phase"):
        labels[PHASE_LABEL] = row["pod_phase"].strip()
    annotations: dict[str, str] = {}
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [{"name": "main", "image": "trace",
                        "resources": {"requests": requests, "limits": dict(requests)}}],
    }
    if num_gpu > 0:
        milli = _int(row, "gpu_milli", where, MILLI)
        milli = milli if 0 < milli <= MILLI else (MILLI if milli > MILLI else 0)
        annotations[GPU_MILLI] = str(milli)
        annotations[GPU_COUNT] = str(num_gpu)
        types = [t for t in (row.get("gpu_spec") or "").split("|") if t.strip()]
        if types:
            annotations[GPU_MODEL] = "|".join(t.strip() for t in types)
            if gpu_model_affinity:
                spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": GPU_MODEL, "operator": "In", "values": [t.strip() for t in types]},
                    ]}],
                }}}
    return Pod.from_dict({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"{NAMESPACE}/{name}",
                     "labels": labels, "annotations": annotations},
        "spec": spec,
    })


def load_nodes(path: str | Path, max_pods: int = DEFAULT_MAX_PODS) -> list[Node]:
    p = Path(path)
    return [node_from_row(r, f"{p.name}[{i}]", max_pods) for i, r in enumerate(_read(p))]


def load_tasks(path: str | Path, gpu_model_affinity: bool = True) -> list[TraceTask]:
    p = Path(path)
    out = []
    for i, r in enumerate(_read(p)):
        pod = pod_from_row(r, f"{p.name}[{i}]", gpu_model_affinity)
        out.append(TraceTask(pod, _time(r, "creation_time"), _time(r, "deletion_time"),
                             _time(r, "scheduled_time")))
    return out


def load_alibaba_gpu_trace(
    directory: str | Path,
    task_list: str = "default",
    *,
    node_list: str = GPU_NODE_LIST,
    max_pods: int = DEFAULT_MAX_PODS,
    gpu_model_affinity: bool = True,
    node_names: Iterable[str] | None = None,
    limit_tasks: int | None = None,
) -> AlibabaGpuTrace:
    """Nodes and one task list of the trace in ``directory``; ``node_names`` and
    ``limit_tasks`` cut it down (for tests)."""
    d = Path(directory)
    nodes = load_nodes(d / node_list, max_pods)
    if node_names is not None:
        keep = set(node_names)
        nodes = [n for n in nodes if n.metadata.name in keep]
    tasks = load_tasks(task_list_path(d, task_list), gpu_model_affinity)
    if limit_tasks is not None:
        tasks = tasks[:limit_tasks]
    return AlibabaGpuTrace(tuple(nodes), tuple(tasks), Path(task_list).stem
                           if task_list.endswith(".csv") else task_list)


def pods_of(tasks: Sequence[TraceTask]) -> list[Pod]:
    return [t.pod for t in tasks]
