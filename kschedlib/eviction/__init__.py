"""Eviction, as Kubernetes v1.35 does it, with no I/O.

- Node-pressure eviction (the kubelet's eviction manager): :class:`EvictionConfig`,
  :class:`Summary`, :class:`NodeEvictionManager`.
- API-initiated eviction (the Eviction subresource with PodDisruptionBudgets) and
  ``kubectl drain``: :func:`evaluate_eviction`, :class:`DrainOptions`.
- Taint-based eviction (the taint-eviction controller): :class:`TaintEvictionController`.
- :class:`Evictions` applies all of them to a ``Scheduler`` (``sched.eviction``).
"""

from kschedlib.eviction.config import (
    DEFAULT_EVICTION_HARD,
    LAYOUT_IMAGEFS,
    LAYOUT_SINGLE,
    LAYOUT_SPLIT,
    EvictionConfig,
    Threshold,
    ThresholdValue,
    parse_threshold_statement,
)
from kschedlib.eviction.controller import Evictions, NodePressureReport
from kschedlib.eviction.disruption import EvictionResponse, evaluate_eviction, pdb_status
from kschedlib.eviction.drain import DrainOptions, DrainResult, StuckPod
from kschedlib.eviction.kubelet import (
    EvictionDecision,
    LocalStorageEviction,
    NodeEvictionManager,
    NodeReclaim,
    Observation,
    RankedPod,
    SyncResult,
    make_signal_observations,
)
from kschedlib.eviction.qos import (
    compute_pod_qos,
    container_oom_score_adjust,
    get_pod_qos,
    pod_oom_score_adjust,
)
from kschedlib.eviction.stats import Summary
from kschedlib.eviction.taints import (
    TaintEviction,
    TaintEvictionController,
    with_default_tolerations,
    with_lifecycle_taints,
)
from kschedlib.scheduler import register_tool

__all__ = [
    "DEFAULT_EVICTION_HARD",
    "LAYOUT_IMAGEFS",
    "LAYOUT_SINGLE",
    "LAYOUT_SPLIT",
    "DrainOptions",
    "DrainResult",
    "EvictionConfig",
    "EvictionDecision",
    "EvictionResponse",
    "Evictions",
    "LocalStorageEviction",
    "NodeEvictionManager",
    "NodePressureReport",
    "NodeReclaim",
    "Observation",
    "RankedPod",
    "StuckPod",
    "Summary",
    "SyncResult",
    "TaintEviction",
    "TaintEvictionController",
    "Threshold",
    "ThresholdValue",
    "compute_pod_qos",
    "container_oom_score_adjust",
    "evaluate_eviction",
    "get_pod_qos",
    "make_signal_observations",
    "parse_threshold_statement",
    "pdb_status",
    "pod_oom_score_adjust",
    "with_default_tolerations",
    "with_lifecycle_taints",
]

register_tool("eviction", Evictions)
