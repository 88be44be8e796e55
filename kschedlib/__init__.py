"""kschedlib: kube-scheduler v1.35 in pure Python, with no I/O.

The public API is what this module re-exports; everything else is internal.
"""

from __future__ import annotations

from kschedlib.api import (
    Cluster,
    DeviceClass,
    Namespace,
    Node,
    Pod,
    Quantity,
    Resource,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    expand_workloads,
    load_cluster,
    load_objects,
    parse_quantity,
)
from kschedlib.api.pod import WorkloadReference
from kschedlib.api.scheduling import Workload
from kschedlib.backend.snapshot import Snapshot
from kschedlib.config import KubeSchedulerConfiguration, Profile, load_config
from kschedlib.errors import (
    CacheError,
    ConfigError,
    EvictionConfigError,
    EvictionError,
    InvalidObjectError,
    KSchedError,
    QuantityError,
    QueueError,
    QueueingHintError,
)
from kschedlib.eviction import (
    DrainOptions,
    DrainResult,
    EvictionConfig,
    EvictionDecision,
    EvictionResponse,
    Evictions,
    NodeEvictionManager,
    NodePressureReport,
    TaintEvictionController,
)
from kschedlib.features import FeatureGateError, FeatureGates, FeatureSpec, PluginFeatures
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.extender import Extender
from kschedlib.framework.handle import FakeClock, RealClock
from kschedlib.framework.interface import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeScore,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.registry import PluginSpec, Registry
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.results import (
    Event,
    Explanation,
    NodeScoreDetail,
    NodeVerdict,
    Outcome,
    PluginScoreDetail,
    SchedulerMetrics,
    SchedulingResult,
)
from kschedlib.scheduler import AcceptingBinder, Binder, Scheduler

__version__ = "0.1.0"

__all__ = [
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "SKIP",
    "AcceptingBinder",
    "ActionType",
    "BindPlugin",
    "Binder",
    "CacheError",
    "Cluster",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "ConfigError",
    "CycleState",
    "Diagnosis",
    "DrainOptions",
    "DrainResult",
    "EnqueueExtensions",
    "Event",
    "EvictionConfig",
    "EvictionConfigError",
    "EvictionDecision",
    "EvictionError",
    "EvictionResponse",
    "Evictions",
    "EventResource",
    "Explanation",
    "Extender",
    "FakeClock",
    "FeatureGateError",
    "FeatureGates",
    "FeatureSpec",
    "FilterPlugin",
    "FitError",
    "Framework",
    "InvalidObjectError",
    "KSchedError",
    "KubeSchedulerConfiguration",
    "Namespace",
    "NoNodesAvailableError",
    "Node",
    "NodeEvictionManager",
    "NodeInfo",
    "NodePressureReport",
    "NodeScore",
    "NodeScoreDetail",
    "NodeVerdict",
    "Outcome",
    "PermitPlugin",
    "PluginScoreDetail",
    "PluginFeatures",
    "PluginSpec",
    "Pod",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "Profile",
    "Quantity",
    "QuantityError",
    "QueueError",
    "QueueingHintError",
    "QueueSortPlugin",
    "QueueingHint",
    "RealClock",
    "Registry",
    "ReservePlugin",
    "Resource",
    "SchedulerMetrics",
    "Scheduler",
    "SchedulingResult",
    "ScoreExtensions",
    "ScorePlugin",
    "Snapshot",
    "Status",
    "TaintEvictionController",
    "Workload",
    "WorkloadReference",
    "expand_workloads",
    "load_cluster",
    "load_config",
    "load_objects",
    "parse_quantity",
    "__version__",
]
