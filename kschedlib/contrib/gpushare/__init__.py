"""GPU sharing as kschedlib plugins: per-GPU milli-GPU accounting (a NodeInfo extension),
``GpuShare`` (Filter, and Reserve choosing the devices) and the six Score policies of the FGD
paper (Weng et al., USENIX ATC '23) as its simulator defines them.

``profile_config(policy, typical)`` gives the KubeSchedulerConfiguration the paper's
experiments use, and ``plugins()`` the factories to pass as ``Scheduler(plugins=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kschedlib.contrib.gpushare.frag import (
    FRAG_CLASSES,
    FragMeter,
    TypicalPod,
    node_frag_amounts,
    typical_pods,
)
from kschedlib.contrib.gpushare.plugins import (
    BEST_FIT,
    DOT_PRODUCT,
    FACTORIES,
    FGD,
    GPU_CLUSTERING,
    GPU_PACKING,
    GPU_SHARE,
    RANDOM,
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    GpuShare,
    RandomScore,
    fgd_score,
)
from kschedlib.contrib.gpushare.resources import (
    GPU_COUNT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    MILLI,
    GpuNodeState,
    NodeView,
    PodShape,
    gpu_indices,
    gpu_state,
    node_view,
    pod_shape,
)
from kschedlib.errors import ConfigError

#: The paper's policies: name -> (Score plugin, GpuShare's GPU selection method).
POLICIES: dict[str, tuple[str, str]] = {
    "Random": (RANDOM, "random"),
    "DotProd": (DOT_PRODUCT, "best"),
    "GpuClustering": (GPU_CLUSTERING, "best"),
    "GpuPacking": (GPU_PACKING, "best"),
    "BestFit": (BEST_FIT, "best"),
    "FGD": (FGD, FGD),
}


def plugins() -> dict[str, Any]:
    """The plugin factories by name, for ``Scheduler(plugins=...)``."""
    return dict(FACTORIES)


def profile_config(
    policy: str,
    typical: Sequence[TypicalPod] = (),
    *,
    scheduler_name: str = "default-scheduler",
    node_affinity: bool = True,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration (as a dict) with the plugins the paper's simulator has
    effectively on: NodeResourcesFit (and NodeAffinity for GPU-model affinity) and GpuShare
    as filters, the policy as the only Score plugin, every node scored."""
    if policy not in POLICIES:
        raise ConfigError(f"gpushare: unknown policy {policy!r}; one of {', '.join(POLICIES)}")
    score, method = POLICIES[policy]
    tp = [t.to_dict() for t in typical]
    filters = [{"name": "NodeResourcesFit"}]
    if node_affinity:
        filters.append({"name": "NodeAffinity"})
    filters.append({"name": GPU_SHARE})
    pre_score = [{"name": RANDOM}] if score == RANDOM else []
    plugin_config: list[dict[str, Any]] = [
        {"name": GPU_SHARE, "args": {"gpuSelMethod": method, "typicalPods": tp}},
    ]
    if score == FGD:
        plugin_config.append({"name": FGD, "args": {"typicalPods": tp}})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": scheduler_name,
            "plugins": {
                "multiPoint": {"disabled": [{"name": "*"}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "preFilter": {"enabled": filters[:-1]},
                "filter": {"enabled": filters},
                "preScore": {"enabled": pre_score},
                "score": {"enabled": [{"name": score, "weight": 1}]},
                "reserve": {"enabled": [{"name": GPU_SHARE}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
            "pluginConfig": plugin_config,
        }],
    }


__all__ = [
    "BEST_FIT", "DOT_PRODUCT", "FGD", "FRAG_CLASSES", "GPU_CLUSTERING", "GPU_COUNT",
    "GPU_INDEX", "GPU_MILLI", "GPU_MODEL", "GPU_PACKING", "GPU_SHARE", "MILLI", "POLICIES",
    "RANDOM", "BestFitScore", "DotProductScore", "FGDScore", "FragMeter", "GpuClusteringScore",
    "GpuNodeState", "GpuPackingScore", "GpuShare", "NodeView", "PodShape", "RandomScore",
    "TypicalPod", "fgd_score", "gpu_indices", "gpu_state", "node_frag_amounts", "node_view",
    "plugins", "pod_shape", "profile_config", "typical_pods",
]
