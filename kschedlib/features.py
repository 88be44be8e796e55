"""Feature gates: v1.35's table for every gate kube-scheduler reads, and per-scheduler values.

Nothing here is global: a ``FeatureGates`` value is built per Scheduler (``feature_gates=``,
``--feature-gates``) and handed to the frameworks, the plugins (as ``PluginFeatures``, the
struct of pkg/scheduler/framework/plugins/feature), the queue and the config defaulting, so two
schedulers in one process can run with different gates.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from kschedlib.errors import ConfigError
from kschedlib.features_v1_35 import V1_35_GATE_LINES


class FeatureGateError(ConfigError):
    """An unknown gate, a locked gate set to the other value, or a malformed value; the message
    reads as kube-scheduler's ``--feature-gates`` reports it."""


class Stage(enum.Enum):
    """featuregate.prerelease; GA prints as the empty string in Go's flag help."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


@attrs.define(frozen=True, slots=True)
class FeatureSpec:
    """One gate at v1.35: default, stage, whether it is locked to its default, what it changes."""

    name: str
    default: bool
    stage: Stage
    lock_to_default: bool = False
    description: str = ""


def _s(name: str, default: bool, stage: Stage, locked: bool = False, desc: str = "") -> FeatureSpec:
    return FeatureSpec(name, default, stage, locked, desc)


A, B, GA, DEP = Stage.ALPHA, Stage.BETA, Stage.GA, Stage.DEPRECATED

# Every gate kube-scheduler v1.35 reads (pkg/scheduler and its plugins), as
# pkg/features/kube_features.go resolves it at 1.35 (the last versioned spec <= 1.35).
V1_35_SCHEDULER_FEATURES: Mapping[str, FeatureSpec] = {
    s.name: s
    for s in (
        _s("ClearingNominatedNodeNameAfterBinding", True, B,
           desc="Clear status.nominatedNodeName when a pod is bound."),
        _s("CSIMigrationPortworx", True, GA, True,
           desc="Portworx in-tree volumes count as CSI volumes (NodeVolumeLimits)."),
        _s("DRAAdminAccess", True, B, desc="DRA: admin-access requests (DynamicResources)."),
        _s("DRAConsumableCapacity", False, A, desc="DRA: devices with consumable capacity."),
        _s("DRADeviceBindingConditions", False, A, desc="DRA: binding conditions at PreBind."),
        _s("DRADeviceTaintRules", False, A, desc="DRA: DeviceTaintRule objects."),
        _s("DRADeviceTaints", False, A, desc="DRA: device taints and tolerations."),
        _s("DRAExtendedResource", False, A, desc="DRA: extended resources backed by DRA."),
        _s("DRAPartitionableDevices", False, A, desc="DRA: partitionable devices."),
        _s("DRAPrioritizedList", True, B, desc="DRA: firstAvailable request lists."),
        _s("DRAResourceClaimDeviceStatus", True, B, desc="DRA: ResourceClaim device status."),
        _s("DRASchedulerFilterTimeout", True, B, desc="DRA: time limit of the Filter call."),
        _s("DynamicResourceAllocation", True, GA, True,
           desc="DynamicResources plugin in the default plugin set."),
        _s("GangScheduling", False, A,
           desc="GangScheduling plugin (default plugin set): all-or-nothing pod groups."),
        _s("GenericWorkload", False, A,
           desc="scheduling.k8s.io/v1alpha1 Workload objects and pod spec.workloadRef."),
        _s("InPlacePodLevelResourcesVerticalScaling", False, A,
           desc="In-place resize of pod-level resources."),
        _s("InPlacePodVerticalScaling", True, GA, True,
           desc="Requests follow in-place resize status; Pod scale-down events."),
        _s("MatchLabelKeysInPodAffinity", True, GA, True,
           desc="matchLabelKeys/mismatchLabelKeys in pod (anti-)affinity terms."),
        _s("MatchLabelKeysInPodTopologySpread", True, B,
           desc="matchLabelKeys in topology spread constraints narrow the selector."),
        _s("MatchLabelKeysInPodTopologySpreadSelectorMerge", True, B,
           desc="matchLabelKeys are merged into the labelSelector at pod creation."),
        _s("NodeDeclaredFeatures", False, A,
           desc="NodeDeclaredFeatures plugin (default plugin set): node status.declaredFeatures."),
        _s("NodeInclusionPolicyInPodTopologySpread", True, GA, True,
           desc="nodeAffinityPolicy/nodeTaintsPolicy in topology spread constraints."),
        _s("NominatedNodeNameForExpectation", True, B,
           desc="Nominated pods are counted on their node while they wait or bind."),
        _s("OpportunisticBatching", True, B, desc="Reuse of filter results across equal pods."),
        _s("PodLevelResources", True, B,
           desc="Pod-level spec.resources count in NodeResourcesFit/BalancedAllocation."),
        _s("PodSchedulingReadiness", True, GA, True,
           desc="SchedulingGates plugin and spec.schedulingGates."),
        _s("SchedulerAsyncAPICalls", False, B, desc="API calls through an asynchronous dispatcher."),
        _s("SchedulerAsyncPreemption", True, B,
           desc="Preemption victims are deleted outside the scheduling cycle."),
        _s("SchedulerPopFromBackoffQ", True, B,
           desc="Pop from backoffQ when activeQ is empty; PreEnqueue on entering backoffQ."),
        _s("SchedulerQueueingHints", True, GA, True,
           desc="Plugins' QueueingHints decide requeueing."),
        _s("SidecarContainers", True, GA, True,
           desc="Restartable init containers count as sidecars (requests, ports)."),
        _s("StorageCapacityScoring", False, A,
           desc="VolumeBinding scores nodes by free storage capacity."),
        _s("TaintTolerationComparisonOperators", False, A,
           desc="Tolerations with operators Gt/Lt on integer taint values."),
        _s("VolumeAttributesClass", True, GA,
           desc="VolumeBinding watches VolumeAttributesClass objects."),
        _s("VolumeLimitScaling", False, A, desc="CSI volume limit scaling (NodeVolumeLimits)."),
    )
}

def _parse_table(text: str) -> tuple[dict[str, FeatureSpec], dict[str, tuple[str, ...]]]:
    specs: dict[str, FeatureSpec] = {}
    deps: dict[str, tuple[str, ...]] = {}
    for line in text.strip().splitlines():
        head, _, dep_text = line.partition(" -> ")
        name, stage, default, *rest = head.split()
        specs[name] = FeatureSpec(name, default == "true", Stage[stage], rest == ["locked"])
        if dep_text:
            deps[name] = tuple(sorted(dep_text.split(",")))
    return specs, deps


_ALL_SPECS, V1_35_DEPENDENCIES = _parse_table(V1_35_GATE_LINES)

V1_35_FEATURES: Mapping[str, FeatureSpec] = {**_ALL_SPECS, **V1_35_SCHEDULER_FEATURES}
"""Every gate a v1.35 component registers (kube-scheduler's flag accepts them all, with
``AllAlpha``/``AllBeta``); a gate outside ``V1_35_SCHEDULER_FEATURES`` is accepted and changes
nothing in a scheduler."""


def scheduler_reads(name: str) -> bool:
    """Whether kube-scheduler v1.35 (and so kschedlib) reads the gate at all."""
    return name in V1_35_SCHEDULER_FEATURES


_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def _parse_bool(name: str, text: str) -> bool:
    """strconv.ParseBool with featuregate.Set's error text."""
    v = text.strip()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise FeatureGateError(
        f'invalid value of {name}={v}, err: strconv.ParseBool: parsing "{v}": invalid syntax'
    )


def _go_bool(v: bool) -> str:
    return "true" if v else "false"


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate's text: one error as itself, several as ``[a, b]``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


_SPECIAL = {"AllAlpha": Stage.ALPHA, "AllBeta": Stage.BETA}


class FeatureGates:
    """An immutable set of gate values over v1.35's table (featuregate.FeatureGate)."""

    __slots__ = ("_dependencies", "_known", "_overrides", "_values", "warnings")

    def __init__(
        self,
        overrides: Mapping[str, bool] | None = None,
        *,
        known: Mapping[str, FeatureSpec] | None = None,
        dependencies: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._known: Mapping[str, FeatureSpec] = known if known is not None else V1_35_FEATURES
        if dependencies is None:
            dependencies = V1_35_DEPENDENCIES if known is None else {}
        self._overrides: dict[str, bool] = {}
        self.warnings: list[str] = []
        given = dict(overrides or {})
        for name in sorted(given):  # featuregate.Set stops at the first unknown gate
            if name not in self._known:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
        errors: list[str] = []
        for name in sorted(given):
            value = given[name]
            spec = self._known[name]
            if not isinstance(value, bool):
                raise FeatureGateError(
                    f"invalid value of {name}={value!r}, err: expected a boolean"
                )
            if spec.lock_to_default and value != spec.default:
                errors.append(
                    f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked "
                    f"to {_go_bool(spec.default)}"
                )
                continue
            if spec.stage is Stage.GA and name not in _SPECIAL:
                self.warnings.append(
                    f"Setting GA feature gate {name}={_go_bool(value)}. It will be removed in "
                    "a future release."
                )
            elif spec.stage is Stage.DEPRECATED:
                self.warnings.append(
                    f"Setting deprecated feature gate {name}={_go_bool(value)}. It will be "
                    "removed in a future release."
                )
            self._overrides[name] = value
        if errors:
            raise FeatureGateError(_aggregate(errors))
        values = {n: self._overrides.get(n, s.default) for n, s in self._known.items()}
        # AllAlpha / AllBeta set every gate of their stage that is not set explicitly.
        for special, stage in _SPECIAL.items():
            if special in self._overrides:
                for n, s in self._known.items():
                    if s.stage is stage and n not in _SPECIAL and n not in self._overrides:
                        values[n] = self._overrides[special]
        for feature in sorted(dependencies):
            if not values.get(feature, False):
                continue
            off = [d for d in dependencies[feature] if not values.get(d, False)]
            if off:
                errors.append(
                    f"{feature} is enabled, but depends on features that are disabled: "
                    f"[{' '.join(off)}]"
                )
        if errors:
            raise FeatureGateError(_aggregate(errors))
        self._dependencies = dependencies
        self._values = values

    # --- constructors ----------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """``A=true,B=false`` as ``--feature-gates`` takes it (whitespace ignored)."""
        values: dict[str, bool] = {}
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep:
                raise FeatureGateError(f"missing bool value for {name}")
            values[name] = _parse_bool(name, value)
        return cls(values)

    @classmethod
    def of(cls, value: FeatureGates | Mapping[str, bool] | str | None) -> FeatureGates:
        """Accept a FeatureGates, a mapping of overrides, a flag string or None (defaults)."""
        if isinstance(value, FeatureGates):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, Mapping):
            return cls(dict(value))
        raise FeatureGateError(f"feature gates must be a mapping or 'A=true,B=false', got {value!r}")

    def with_overrides(self, overrides: Mapping[str, bool]) -> FeatureGates:
        merged = dict(self._overrides)
        merged.update(overrides)
        return FeatureGates(merged, known=self._known, dependencies=self._dependencies)

    # --- reads -----------------------------------------------------------------------------

    def enabled(self, name: str) -> bool:
        """The value of a known gate; an unknown name raises FeatureGateError."""
        try:
            return self._values[name]
        except KeyError:
            raise FeatureGateError(f"feature {name!r} is not registered in FeatureGate") from None

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._values))

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def spec(self, name: str) -> FeatureSpec:
        return self._known[name]

    def known_features(self) -> list[str]:
        """Lines like ``--feature-gates`` help: ``Name=true|false (ALPHA - default=false)``."""
        out = []
        for name in sorted(self._known):
            s = self._known[name]
            stage = s.stage.value or "GA"
            out.append(f"{name}=true|false ({stage} - default={_go_bool(s.default)})")
        return out

    def overrides(self) -> dict[str, bool]:
        return dict(self._overrides)

    def to_dict(self) -> dict[str, bool]:
        return dict(sorted(self._values.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureGates) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        inner = ",".join(f"{k}={_go_bool(v)}" for k, v in sorted(self._overrides.items()))
        return f"FeatureGates({inner!r})"


DEFAULT_FEATURE_GATES = FeatureGates()
"""v1.35 defaults (immutable; safe to share)."""


@attrs.define(frozen=True, slots=True)
class PluginFeatures:
    """The gate values plugins read (feature.Features): fixed when a plugin is constructed."""

    enable_dra_extended_resource: bool = False
    enable_dra_prioritized_list: bool = True
    enable_dra_admin_access: bool = True
    enable_dra_consumable_capacity: bool = False
    enable_dra_device_taints: bool = False
    enable_dra_device_taint_rules: bool = False
    enable_dra_device_binding_conditions: bool = False
    enable_dra_partitionable_devices: bool = False
    enable_dra_resource_claim_device_status: bool = True
    enable_dra_scheduler_filter_timeout: bool = True
    enable_dynamic_resource_allocation: bool = True
    enable_volume_attributes_class: bool = True
    enable_csi_migration_portworx: bool = True
    enable_node_inclusion_policy_in_pod_topology_spread: bool = True
    enable_match_label_keys_in_pod_topology_spread: bool = True
    enable_match_label_keys_in_pod_topology_spread_selector_merge: bool = True
    enable_in_place_pod_vertical_scaling: bool = True
    enable_in_place_pod_level_resources_vertical_scaling: bool = False
    enable_sidecar_containers: bool = True
    enable_scheduling_queue_hint: bool = True
    enable_async_preemption: bool = True
    enable_pod_level_resources: bool = True
    enable_storage_capacity_scoring: bool = False
    enable_node_declared_features: bool = False
    enable_gang_scheduling: bool = False
    enable_generic_workload: bool = False
    enable_taint_toleration_comparison_operators: bool = False
    enable_volume_limit_scaling: bool = False

    @classmethod
    def from_gates(cls, gates: FeatureGates) -> PluginFeatures:
        """NewSchedulerFeaturesFromGates."""
        e = gates.enabled
        return cls(
            enable_dra_extended_resource=e("DRAExtendedResource"),
            enable_dra_prioritized_list=e("DRAPrioritizedList"),
            enable_dra_admin_access=e("DRAAdminAccess"),
            enable_dra_consumable_capacity=e("DRAConsumableCapacity"),
            enable_dra_device_taints=e("DRADeviceTaints"),
            enable_dra_device_taint_rules=e("DRADeviceTaintRules"),
            enable_dra_device_binding_conditions=e("DRADeviceBindingConditions"),
            enable_dra_partitionable_devices=e("DRAPartitionableDevices"),
            enable_dra_resource_claim_device_status=e("DRAResourceClaimDeviceStatus"),
            enable_dra_scheduler_filter_timeout=e("DRASchedulerFilterTimeout"),
            enable_dynamic_resource_allocation=e("DynamicResourceAllocation"),
            enable_volume_attributes_class=e("VolumeAttributesClass"),
            enable_csi_migration_portworx=e("CSIMigrationPortworx"),
            enable_node_inclusion_policy_in_pod_topology_spread=e(
                "NodeInclusionPolicyInPodTopologySpread"
            ),
            enable_match_label_keys_in_pod_topology_spread=e("MatchLabelKeysInPodTopologySpread"),
            enable_match_label_keys_in_pod_topology_spread_selector_merge=e(
                "MatchLabelKeysInPodTopologySpreadSelectorMerge"
            ),
            enable_in_place_pod_vertical_scaling=e("InPlacePodVerticalScaling"),
            enable_in_place_pod_level_resources_vertical_scaling=e(
                "InPlacePodLevelResourcesVerticalScaling"
            ),
            enable_sidecar_containers=e("SidecarContainers"),
            enable_scheduling_queue_hint=e("SchedulerQueueingHints"),
            enable_async_preemption=e("SchedulerAsyncPreemption"),
            enable_pod_level_resources=e("PodLevelResources"),
            enable_storage_capacity_scoring=e("StorageCapacityScoring"),
            enable_node_declared_features=e("NodeDeclaredFeatures"),
            enable_gang_scheduling=e("GangScheduling"),
            enable_generic_workload=e("GenericWorkload"),
            enable_taint_toleration_comparison_operators=e("TaintTolerationComparisonOperators"),
            enable_volume_limit_scaling=e("VolumeLimitScaling"),
        )


DEFAULT_PLUGIN_FEATURES = PluginFeatures.from_gates(DEFAULT_FEATURE_GATES)


def features_of(handle: Any) -> PluginFeatures:
    """The plugin features a handle carries (v1.35 defaults for a handle without any)."""
    f = getattr(handle, "features", None)
    return f if isinstance(f, PluginFeatures) else DEFAULT_PLUGIN_FEATURES


def gates_of(handle: Any) -> FeatureGates:
    """The feature gates a handle carries (v1.35 defaults for a handle without any)."""
    g = getattr(handle, "feature_gates", None)
    return g if isinstance(g, FeatureGates) else DEFAULT_FEATURE_GATES
