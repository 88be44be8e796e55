"""The FGD paper's fragmentation measure: a node's idle GPU that the workload's typical task
shapes cannot use, weighted by how often each shape occurs (Weng et al., ATC '23, Sec. 4)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from kschedlib.contrib.gpushare.resources import PodShape, model_accepted

#: The paper's quadrants and extra classes, in its reporting order.
FRAG_CLASSES = (
    "q1_lack_both", "q2_lack_gpu", "q3_satisfied", "q4_lack_cpu",
    "xl_satisfied", "xr_lack_cpu", "no_access",
)


@attrs.frozen(slots=True)
class TypicalPod:
    """A task shape and its share of the workload (0..1)."""

    shape: PodShape
    weight: float

    def to_dict(self) -> dict[str, Any]:
        s = self.shape
        return {"milliCpu": s.milli_cpu, "milliGpu": s.milli_gpu, "gpuCount": s.gpu_count,
                "gpuType": s.gpu_types, "weight": self.weight}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TypicalPod:
        shape = PodShape(int(d.get("milliCpu", 0)), int(d.get("milliGpu", 0)),
                         int(d.get("gpuCount", 0)), str(d.get("gpuType", "") or ""))
        return cls(shape, float(d["weight"]))


def typical_pods(
    shapes: Iterable[PodShape], *, popularity: float = 95.0, include_cpu_pods: bool = True
) -> tuple[TypicalPod, ...]:
    """The most frequent shapes covering ``popularity`` percent of the tasks, weights
    renormalised to sum to 1 (the simulator's default: 95 %, CPU-only tasks included)."""
    counts: Counter[PodShape] = Counter()
    for s in shapes:
        if not include_cpu_pods and s.gpu_count == 0:
            continue
        counts[s] += 1
    total = sum(counts.values())
    if total == 0:
        return ()

    def order(item: tuple[PodShape, int]) -> tuple[int, int, int, int, str]:
        s, n = item
        return (n, s.milli_cpu, s.milli_gpu, s.gpu_count, s.gpu_types)

    ranked = sorted(counts.items(), key=order, reverse=True)
    want = popularity * total / 100.0
    chosen: list[tuple[PodShape, int]] = []
    cum = 0
    for s, n in ranked:
        if cum >= want:
            break
        chosen.append((s, n))
        cum += n
    return tuple(TypicalPod(s, n / cum) for s, n in chosen)


def node_frag_amounts(
    cpu_left: int, milli_left: Sequence[int], model: str, typical: Sequence[TypicalPod]
) -> list[float]:
    """The node's idle milli-GPU split into FRAG_CLASSES, weighted by the typical pods."""
    out = [0.0] * 7
    total = sum(milli_left)
    for tp in typical:
        s, w = tp.shape, tp.weight
        if s.milli_gpu == 0:
            out[4 if cpu_left >= s.milli_cpu else 5] += w * total
            continue
        if not model_accepted(s.gpu_types, model):
            out[6] += w * total
            continue
        fits = sum(1 for m in milli_left if m >= s.milli_gpu) >= s.gpu_count
        cpu_ok = cpu_left >= s.milli_cpu
        if fits:
            if cpu_ok:
                frag = sum(m for m in milli_left if m < s.milli_gpu)
                out[1] += w * frag
                out[2] += w * (total - frag)
            else:
                out[3] += w * total
        else:
            out[1 if cpu_ok else 0] += w * total
    return out


class FragMeter:
    """The fragmentation score (idle milli-GPU not in q3_satisfied) of node states, memoised
    per (CPU left, sorted free milli-GPU, model): the measure does not depend on GPU order."""

    __slots__ = ("typical", "_memo", "_gpu_pods", "_cpu_pods")

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = tuple(typical)
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}
        self._gpu_pods = [tp for tp in self.typical if tp.shape.milli_gpu > 0]
        self._cpu_pods = [tp for tp in self.typical if tp.shape.milli_gpu == 0]

    def score(self, cpu_left: int, milli_left: Sequence[int], model: str) -> float:
        key = (cpu_left, tuple(sorted(milli_left)), model)
        v = self._memo.get(key)
        if v is None:
            v = self._compute(cpu_left, key[1], model)
            if len(self._memo) > 500_000:
                self._memo.clear()
            self._memo[key] = v
        return v

    def _compute(self, cpu_left: int, milli_left: tuple[int, ...], model: str) -> float:
        total = sum(milli_left)
        if total == 0:
            return 0.0
        frag = 0.0
        for tp in self._cpu_pods:
            frag += tp.weight * total  # xl_satisfied and xr_lack_cpu both count
        for tp in self._gpu_pods:
            s = tp.shape
            if s.gpu_types and not model_accepted(s.gpu_types, model):
                frag += tp.weight * total
                continue
            need = s.milli_gpu
            if cpu_left >= s.milli_cpu and sum(1 for m in milli_left if m >= need) >= s.gpu_count:
                frag += tp.weight * sum(m for m in milli_left if m < need)
            else:
                frag += tp.weight * total
        return frag


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
