"""NodeDeclaredFeatures (NodeDeclaredFeatures gate, alpha in v1.35): a pod that needs a
node-level feature goes only to nodes that list it in ``status.declaredFeatures``.

The features a pod needs are inferred from its spec by a registry of features (the
component-helpers nodedeclaredfeatures framework). v1.35.4 registers two:
``GuaranteedQoSPodCPUResize`` (resizes only, never needed at scheduling time) and
``RestartAllContainersOnContainerExits`` (a container or init container with a
``restartPolicyRules`` action ``RestartAllContainers``). Hosts can construct the plugin with
their own registry (``new_with_features``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Code, Status
from kschedlib.framework.types import NodeInfo

NAME = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_UNSATISFIED = "node declared features check failed - unsatisfied requirements"
"""The Filter reason's prefix; ``: A, B`` lists the features the node does not declare."""
SCHEDULER_VERSION = (1, 35)


class DeclaredFeature(Protocol):
    """A node feature: its name, whether a pod needs it, and the version it is GA from."""

    @property
    def name(self) -> str: ...

    def infer_for_scheduling(self, pod: Pod) -> bool: ...

    @property
    def max_version(self) -> tuple[int, int] | None: ...


@attrs.define(frozen=True, slots=True)
class GuaranteedQoSPodCPUResize:
    """In-place CPU resize of Guaranteed pods with exclusive CPUs: relevant to updates only."""

    name: str = "GuaranteedQoSPodCPUResize"
    max_version: tuple[int, int] | None = None

    def infer_for_scheduling(self, pod: Pod) -> bool:
        return False


@attrs.define(frozen=True, slots=True)
class RestartAllContainersOnContainerExits:
    """A pod whose containers or init containers have a restart rule with action
    ``RestartAllContainers`` needs a node that declares the feature."""

    name: str = "RestartAllContainersOnContainerExits"
    max_version: tuple[int, int] | None = None

    def infer_for_scheduling(self, pod: Pod) -> bool:
        return any(
            rule.action == "RestartAllContainers"
            for c in (*pod.spec.containers, *pod.spec.init_containers)
            for rule in c.restart_policy_rules
        )


DEFAULT_FEATURES: tuple[DeclaredFeature, ...] = (
    GuaranteedQoSPodCPUResize(),
    RestartAllContainersOnContainerExits(),
)


def infer_for_pod_scheduling(
    features: Sequence[DeclaredFeature], pod: Pod, version: tuple[int, int] = SCHEDULER_VERSION
) -> frozenset[str]:
    """InferForPodScheduling: the features the pod needs (ones GA before ``version`` are
    assumed present everywhere)."""
    out = set()
    for f in features:
        if f.max_version is not None and version > f.max_version:
            continue
        if f.infer_for_scheduling(pod):
            out.add(f.name)
    return frozenset(out)


@attrs.define(frozen=True, slots=True)
class PreFilterState:
    requirements: frozenset[str]

    def clone(self) -> PreFilterState:
        return self


class NodeDeclaredFeatures:
    """PreFilter (skips pods without requirements), Filter and EnqueueExtensions."""

    __slots__ = ("_enabled", "_features", "_name")

    def __init__(
        self,
        enabled: bool,
        features: Sequence[DeclaredFeature] = DEFAULT_FEATURES,
        name: str = NAME,
    ) -> None:
        self._enabled = enabled
        self._features = tuple(features)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._enabled:
            return None, SKIP
        reqs = infer_for_pod_scheduling(self._features, pod)
        if not reqs:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(reqs))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[str, ...]:
        """SignPod: pods needing the same features get the same verdicts on a node."""
        return tuple(sorted(infer_for_pod_scheduling(self._features, pod)))

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self._enabled:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found', self._name
            )
        node = node_info.node
        declared = node.status.declared_features if node is not None else ()
        missing = sorted(s.requirements.difference(declared))
        if missing:
            return Status(
                Code.UnschedulableAndUnresolvable,
                (f"{ERR_REASON_UNSATISFIED}: {', '.join(missing)}",),
                self._name,
            )
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self._enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Node, ActionType.Add | ActionType.UpdateNodeDeclaredFeature
                ),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Update), self._after_pod_update
            ),
        ]

    def _after_pod_update(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """The target pod's own requirements changed."""
        if not isinstance(new_obj, Pod) or not isinstance(old_obj, Pod):
            raise TypeError("expected Pod objects")
        if new_obj.uid != pod.uid:
            return QueueingHint.QueueSkip
        old = infer_for_pod_scheduling(self._features, old_obj)
        new = infer_for_pod_scheduling(self._features, new_obj)
        return QueueingHint.QueueSkip if old == new else QueueingHint.Queue


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Queue on a new node, or one whose declared features changed."""
    if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
        raise TypeError("expected Node objects")
    if old_obj is not None and old_obj.status.declared_features == new_obj.status.declared_features:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue


def new(args: Any, handle: Any) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(features_of(handle).enable_node_declared_features)


def new_with_features(features: Sequence[DeclaredFeature], name: str = NAME) -> Any:
    """A factory for a plugin (registered as ``name``) inferring requirements with
    ``features`` (host registries)."""

    def factory(args: Any, handle: Any) -> NodeDeclaredFeatures:
        enabled = features_of(handle).enable_node_declared_features
        return NodeDeclaredFeatures(enabled, features, name)

    return factory


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
