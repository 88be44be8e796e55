"""PodTopologySpread: spread pods evenly across topology domains; DoNotSchedule constraints
filter, ScheduleAnyway constraints score (podtopologyspread/plugin.go)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import ConfigError
from kschedlib.features import features_of
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.interface import NodeScore, PreFilterResult
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import SKIP, Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins.helper.spread import default_selector
from kschedlib.plugins.podtopologyspread.args import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from kschedlib.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    NAME,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    filter_topology_spread_constraints,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)
from kschedlib.plugins.podtopologyspread.counting import SpreadCounter, counter_enabled
from kschedlib.plugins.podtopologyspread.filtering import (
    MISSING_LABEL,
    SKEW_TOO_BIG,
    PreFilterState,
    cal_pre_filter_state,
)
from kschedlib.plugins.podtopologyspread.scoring import (
    PreScoreState,
    normalize_scores,
    normalize_values,
    pre_score_state,
    score_node,
    score_nodes,
)

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _state_error(key: str, prefix: str) -> Status:
    return Status.error(f'{prefix} "{key}" from cycleState: not found', NAME)


class PodTopologySpread:
    """Checks and scores the pod's topology spread constraints (or the default ones for a pod
    that has none and is selected by a Service or a replicated controller)."""

    __slots__ = (
        "_cmp_ops",
        "_counter",
        "_handle",
        "_match_label_keys",
        "default_constraints",
        "system_defaulted",
    )

    def __init__(self, args: PodTopologySpreadArgs, handle: Any) -> None:
        self._handle = handle
        fts = features_of(handle)
        self._match_label_keys = fts.enable_match_label_keys_in_pod_topology_spread
        self._cmp_ops = fts.enable_taint_toleration_comparison_operators
        # Counts kept up to date across cycles (None: recount every cycle).
        self._counter = SpreadCounter() if counter_enabled(handle) else None
        self.default_constraints = args.effective_default_constraints()
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when the pod has constraints, its own or the default
        ones (whatever its labels: kube-scheduler does not look for a selecting Service);
        otherwise nothing to add."""
        if pod.spec.topology_spread_constraints or self.default_constraints:
            return None
        return ()

    # --- constraints ---

    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """The default constraints for ``action`` with the pod's Services' and controllers'
        selector; none when nothing selects the pod."""
        if not any(c.when_unsatisfiable == action for c in self.default_constraints):
            return []  # none for this action (PreFilter with the System defaults)
        # The selector first: with none (the common case of a pod no Service or controller
        # selects) the constraints need not be compiled; both are pure lookups.
        selector = default_selector(pod, self._handle.objects)
        if selector.is_empty():
            return []
        constraints = filter_topology_spread_constraints(
            self.default_constraints,
            pod.metadata.labels,
            action,
            self._match_label_keys,
            self._cmp_ops,
        )
        if not constraints:
            return []
        return [
            SpreadConstraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
                c.comparison_operators,
            )
            for c in constraints
        ]

    def get_constraints(self, pod: Pod, action: str = DO_NOT_SCHEDULE) -> list[SpreadConstraint]:
        """The pod's own constraints for ``action``, or the defaults when it has none."""
        tsc = pod.spec.topology_spread_constraints
        if tsc:
            return filter_topology_spread_constraints(
                tsc, pod.metadata.labels, action, self._match_label_keys, self._cmp_ops
            )
        return self.build_default_constraints(pod, action)

    # --- PreFilter / Filter ---

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        lister = self._handle.snapshot_shared_lister().node_infos()
        state.write(
            PRE_FILTER_STATE_KEY,
            cal_pre_filter_state(pod, constraints, nodes, self._counter, lister),
        )
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, "reading")
        s.update_with_pod(pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)
        return None

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, "reading")
        s.update_with_pod(pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, "reading")
        node = node_info.node
        if node is None:
            return Status.error("node not found", NAME)
        # filter_node, from the per-constraint limits PreFilter worked out: one label and
        # one count lookup per constraint.
        labels = node.metadata.labels
        for key, counts, limit in s.checks:
            value = labels.get(key)
            if value is None:
                return MISSING_LABEL
            if counts.get(value, 0) > limit:
                return SKEW_TOO_BIG
        return None

    # --- PreScore / Score ---

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        lister = self._handle.snapshot_shared_lister().node_infos()
        all_nodes = lister.list()
        if not all_nodes:
            return SKIP
        # Only explicit or List-defaulted constraints require every topology key on a node:
        # with System defaults, nodes without a zone label still get hostname spreading.
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        constraints = self.get_constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        s = pre_score_state(constraints, nodes, pod, all_nodes, require_all, self._counter, lister)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _state_error(PRE_SCORE_STATE_KEY, "error reading")
        return score_node(s, pod, node_info), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (same results as ``score`` node by node)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return [], _state_error(PRE_SCORE_STATE_KEY, "error reading")
        out = score_nodes(s, pod, nodes)
        ignored = s.ignored_nodes
        s.batch = (out, [i for i, ni in enumerate(nodes) if ni.name in ignored]) if ignored else None
        return out, None

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score_values(
        self, state: CycleState, pod: Pod, values: list[int]
    ) -> Status | None:
        """normalize_score over the scores ``score_nodes`` returned, in place (the ignored
        nodes are known by position from that call)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _state_error(PRE_SCORE_STATE_KEY, "error reading")
        if not s.ignored_nodes:
            normalize_values(values, ())
            return None
        batch = s.batch
        if batch is None or batch[0] is not values:
            return Status.error(
                "normalizing scores without node names: pass the list score_nodes returned",
                NAME,
            )
        normalize_values(values, batch[1])
        return None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _state_error(PRE_SCORE_STATE_KEY, "error reading")
        normalize_scores(s, scores)
        return None

    # --- EnqueueExtensions ---

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = (
            ActionType.Add
            | ActionType.UpdatePodLabel
            | ActionType.UpdatePodToleration
            | ActionType.Delete
        )
        node_actions = (
            ActionType.Add
            | ActionType.Delete
            | ActionType.UpdateNodeLabel
            | ActionType.UpdateNodeTaint
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, node_actions),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when an assigned pod of the same namespace that matches (or stopped matching)
        a constraint's selector appears, changes labels or goes; or when the pod itself gets
        new tolerations and a constraint honors taints."""
        original = _as_pod(old_obj)
        modified = _as_pod(new_obj)
        if (modified is not None and not _involved_in_spreading(modified, pod)) or (
            original is not None and not _involved_in_spreading(original, pod)
        ):
            return QueueingHint.QueueSkip
        constraints = self.get_constraints(pod)
        if modified is not None and original is not None:
            if (
                pod.uid == modified.uid
                and modified.spec.tolerations != original.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.Queue
            old_labels = original.metadata.labels
            new_labels = modified.metadata.labels
            if old_labels == new_labels:
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.selector.matches(old_labels) != c.selector.matches(new_labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip
        changed = modified if modified is not None else original
        if changed is not None and pod_labels_match_spread_constraints(
            constraints, changed.metadata.labels
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a node carrying every topology key appears or goes, when a node gains
        or loses a key, or when such a node's topology values or taints change."""
        original = _as_node(old_obj)
        modified = _as_node(new_obj)
        constraints = self.get_constraints(pod)
        original_matching = original is not None and node_labels_match_spread_constraints(
            original.metadata.labels, constraints
        )
        modified_matching = modified is not None and node_labels_match_spread_constraints(
            modified.metadata.labels, constraints
        )
        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return QueueingHint.Queue
            if modified_matching and (
                _topology_key_labels_changed(
                    original.metadata.labels, modified.metadata.labels, constraints
                )
                or original.spec.taints != modified.spec.taints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            return QueueingHint.Queue if modified_matching else QueueingHint.QueueSkip
        return QueueingHint.Queue if original_matching else QueueingHint.QueueSkip


def _as_pod(obj: Any) -> Pod | None:
    if obj is None or isinstance(obj, Pod):
        return obj
    raise TypeError(f"expected a Pod, got {type(obj).__name__}")


def _as_node(obj: Any) -> Node | None:
    if obj is None or isinstance(obj, Node):
        return obj
    raise TypeError(f"expected a Node, got {type(obj).__name__}")


def _involved_in_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """The pod itself, or an assigned pod of its namespace."""
    return incoming.uid == pod_with_spreading.uid or (
        incoming.spec.node_name != ""
        and incoming.metadata.namespace == pod_with_spreading.metadata.namespace
    )


def _topology_key_labels_changed(
    original: Mapping[str, str],
    modified: Mapping[str, str],
    constraints: Sequence[SpreadConstraint],
) -> bool:
    return any(
        original.get(c.topology_key, "") != modified.get(c.topology_key, "") for c in constraints
    )


def new(args: Any, handle: Any) -> PodTopologySpread:
    """Plugin factory: ``args`` is a PodTopologySpreadArgs (None means the defaults)."""
    if args is None:
        args = PodTopologySpreadArgs()
    if not isinstance(args, PodTopologySpreadArgs):
        raise ConfigError(
            f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}"
        )
    errs = args.validate()
    if errs:
        raise ConfigError(", ".join(f"{path}: {msg}" for path, msg in errs))
    return PodTopologySpread(args, handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new, PodTopologySpreadArgs),)
