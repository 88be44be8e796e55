"""The framework runtime: a profile's plugins wired into extension points, run with
kube-scheduler v1.35's semantics. A Framework is also the Handle its plugins receive."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.config.types import EXTENSION_POINTS, PluginRef, Profile
from kschedlib.errors import ConfigError
from kschedlib.features import DEFAULT_FEATURE_GATES, FeatureGates, PluginFeatures
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ClusterEventWithHint
from kschedlib.framework.handle import FakeClock, NoopHostHooks, ObjectStore
from kschedlib.framework.interface import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    NodeToStatusReader,
    PostFilterResult,
    PreFilterResult,
    SharedLister,
)
from kschedlib.framework.node_local_cache import (
    NodeLocalCache,
)
from kschedlib.framework.registry import Registry
from kschedlib.framework.reuse import ScoreBreakdown
from kschedlib.framework.runtime_binding import MAX_PERMIT_TIMEOUT, BindingPoints
from kschedlib.framework.runtime_score import (
    NodePluginScores,
    PluginScore,
    ScorePoints,
)
from kschedlib.framework.status import Code, Status, from_exception
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.framework.waiting_pods import WaitingPod, WaitingPodsMap

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "POINT_METHODS",
    "Framework",
    "NodePluginScores",
    "Nominator",
    "PluginScore",
    "ScoreBreakdown",
]

# Method that makes a plugin implement each extension point.
POINT_METHODS: Mapping[str, str] = {
    "pre_enqueue": "pre_enqueue",
    "queue_sort": "less",
    "pre_filter": "pre_filter",
    "filter": "filter",
    "post_filter": "post_filter",
    "pre_score": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "pre_bind": "pre_bind",
    "bind": "bind",
    "post_bind": "post_bind",
}

class Nominator:
    """What the framework needs from the queue's nominator (this one nominates nothing)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []

    def has_nominated_pods(self) -> bool:
        return False

    def nominated_node_names(self) -> Collection[str]:
        return ()


def _implements(plugin: Any, point: str) -> bool:
    return callable(getattr(plugin, POINT_METHODS[point], None))


def _ok(status: Status | None) -> bool:
    return status is None or status.code == Code.Success


class Framework(ScorePoints, BindingPoints):
    """One profile's plugins, run per extension point (frameworkImpl); Score in
    runtime_score.py, Reserve to PostBind in runtime_binding.py, result reuse in reuse.py."""

    def __init__(
        self,
        profile: Profile,
        registry: Registry,
        *,
        objects: ObjectStore | None = None,
        clock: Any = None,
        host: Any = None,
        binder: Any = None,
        nominator: Any = None,
        percentage_of_nodes_to_score: int | None = None,
        snapshot: SharedLister | None = None,
        rng_seed: int | None = None,
        deterministic: bool = False,
        extenders: Sequence[Any] = (),
        feature_gates: FeatureGates | None = None,
        workload_manager: Any = None,
        pod_activator: Any = None,
        node_local_cache: bool = True,
    ) -> None:
        self.profile = profile
        # Stored node-local Filter/Score results (exact reuse; see node_local_cache.py).
        self.node_local_cache: NodeLocalCache | None = NodeLocalCache() if node_local_cache else None
        # The one place plugins read gates from (feature.Features through the handle).
        self.feature_gates = feature_gates if feature_gates is not None else DEFAULT_FEATURE_GATES
        self.features = PluginFeatures.from_gates(self.feature_gates)
        # Gang scheduling: the pod-group state and the queue's Activate (None when unused).
        self.workload_manager = workload_manager
        self.pod_activator = pod_activator
        self.profile_name = profile.scheduler_name
        self.objects = objects if objects is not None else ObjectStore()
        self.clock = clock if clock is not None else FakeClock()
        self.host = host if host is not None else NoopHostHooks()
        self.binder = binder
        # Read by plugins that break ties or call extenders (DefaultPreemption).
        self.rng_seed = rng_seed
        self.deterministic = deterministic
        self.extenders = list(extenders)
        self.nominator: Any = nominator if nominator is not None else Nominator()
        self.waiting_pods = WaitingPodsMap()
        self._snapshot: SharedLister | None = snapshot
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score = pct if pct is not None else percentage_of_nodes_to_score

        self.plugins: dict[str, Any] = {}
        needed = self._plugins_needed()
        for name in needed:
            spec = registry.get(name)
            if spec is None:
                continue  # reported as "does not exist" when lists are built
            try:
                plugin = spec.factory(profile.args_for(name), self)
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError(
                    f'profile "{self.profile_name}": initializing plugin "{name}": {exc}'
                ) from exc
            reported = getattr(plugin, "name", None)
            if reported != name:
                raise ConfigError(
                    f'profile "{self.profile_name}": plugin "{name}" reports the name '
                    f"{reported!r}: a plugin's name must be the name it is registered under"
                )
            self.plugins[name] = plugin

        self.points: dict[str, list[Any]] = {p: [] for p in EXTENSION_POINTS}
        for point in EXTENSION_POINTS:
            self._update_plugin_list(point)
        if profile.plugins.multi_point.enabled:
            self._expand_multi_point()
        self.score_weights = self._score_weights()
        if not self.points["queue_sort"]:
            raise ConfigError(f'profile "{self.profile_name}": no queue sort plugin is enabled')
        if len(self.points["queue_sort"]) > 1:
            raise ConfigError(
                f'profile "{self.profile_name}": only one queue sort plugin can be enabled'
            )
        if not self.points["bind"]:
            raise ConfigError(f'profile "{self.profile_name}": at least one bind plugin is needed')

        self.pre_enqueue_plugins = self.points["pre_enqueue"]
        self.pre_filter_plugins = self.points["pre_filter"]
        self.filter_plugins = self.points["filter"]
        self.post_filter_plugins = self.points["post_filter"]
        self.pre_score_plugins = self.points["pre_score"]
        self.score_plugins = self.points["score"]
        self.reserve_plugins = self.points["reserve"]
        self.permit_plugins = self.points["permit"]
        self.pre_bind_plugins = self.points["pre_bind"]
        self.bind_plugins = self.points["bind"]
        self.post_bind_plugins = self.points["post_bind"]
        self.enqueue_extensions = [
            p for p in self.plugins.values() if callable(getattr(p, "events_to_register", None))
        ]

    # --- construction -------------------------------------------------------------------

    def _plugins_needed(self) -> list[str]:
        seen: dict[str, None] = {}
        for point in (*EXTENSION_POINTS, "multi_point"):
            for p in self.profile.plugins.point(point).enabled:
                seen.setdefault(p.name, None)
        return list(seen)

    def _get(self, name: str, point: str) -> Any:
        plugin = self.plugins.get(name)
        if plugin is None:
            raise ConfigError(
                f'profile "{self.profile_name}": {_point_type(point)} "{name}" does not exist'
            )
        return plugin

    def _update_plugin_list(self, point: str) -> None:
        target = self.points[point]
        names: set[str] = set()
        for ref in self.profile.plugins.point(point).enabled:
            plugin = self._get(ref.name, point)
            if not _implements(plugin, point):
                raise ConfigError(
                    f'profile "{self.profile_name}": plugin "{ref.name}" does not extend '
                    f"{_point_type(point)} plugin"
                )
            if ref.name in names:
                raise ConfigError(
                    f'profile "{self.profile_name}": plugin "{ref.name}" already registered as '
                    f'"{_point_type(point)}"'
                )
            names.add(ref.name)
            target.append(plugin)

    def _expand_multi_point(self) -> None:
        """expandMultiPointPlugins: overrides first, then multiPoint, then specific plugins."""
        for point in EXTENSION_POINTS:
            pset = self.profile.plugins.point(point)
            enabled = [p.name for p in pset.enabled]
            disabled = pset.disabled_names()
            if "*" in disabled:
                continue
            multi: list[str] = []
            overrides: list[str] = []
            for ref in self.profile.plugins.multi_point.enabled:
                plugin = self._get(ref.name, point)
                if not _implements(plugin, point) or ref.name in disabled:
                    continue
                if ref.name in enabled:
                    overrides.append(ref.name)
                    continue
                if ref.name in multi:
                    raise ConfigError(
                        f'profile "{self.profile_name}": plugin "{ref.name}" already registered '
                        f'as "{_point_type(point)}"'
                    )
                multi.append(ref.name)
            order: dict[str, None] = {}
            for name in (*overrides, *multi, *enabled):
                order.setdefault(name, None)
            self.points[point] = [self.plugins[n] for n in order]

    def _score_weights(self) -> dict[str, int]:
        weights: dict[str, int] = {}
        total = 0
        refs: list[PluginRef] = [
            *self.profile.plugins.score.enabled,
            *self.profile.plugins.multi_point.enabled,
        ]
        for ref in refs:
            plugin = self.plugins.get(ref.name)
            if plugin is None or not _implements(plugin, "score") or ref.name in weights:
                continue
            w = ref.weight or 1
            weights[ref.name] = w
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise ConfigError("total score of Score plugins could overflow")
            total += w * MAX_NODE_SCORE
        return weights

    # --- handle -------------------------------------------------------------------------

    def snapshot_shared_lister(self) -> SharedLister:
        if self._snapshot is None:
            raise RuntimeError("no snapshot set on the framework")
        return self._snapshot

    def set_snapshot(self, snapshot: SharedLister) -> None:
        self._snapshot = snapshot

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        self.waiting_pods.iterate(callback)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        result: list[PodInfo] = self.nominator.nominated_pods_for_node(node_name)
        return result

    def has_nominated_pods(self) -> bool:
        """Whether any pod is nominated anywhere (a nominator without the method: assume so)."""
        has = getattr(self.nominator, "has_nominated_pods", None)
        return True if has is None else bool(has())

    def nominated_node_names(self) -> Collection[str] | None:
        """The nodes some pod is nominated to, or None when the nominator cannot tell."""
        names = getattr(self.nominator, "nominated_node_names", None)
        return None if names is None else names()

    def list_plugins(self) -> dict[str, list[str]]:
        return {point: [p.name for p in pls] for point, pls in self.points.items() if pls}

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def queue_sort_less(self) -> Callable[[Any, Any], bool]:
        less: Callable[[Any, Any], bool] = self.points["queue_sort"][0].less
        return less

    def events_to_register(self) -> list[tuple[str, ClusterEventWithHint]]:
        """(plugin name, event with hint) for every EnqueueExtensions plugin."""
        out = []
        for p in self.enqueue_extensions:
            for ev in p.events_to_register():
                out.append((p.name, ev))
        return out

    # --- PreEnqueue ---------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for pl in self.pre_enqueue_plugins:
            st: Status | None
            try:
                st = pl.pre_enqueue(pod)
            except Exception as exc:
                st = from_exception(exc, pl.name)
            if not _ok(st):
                assert st is not None
                return st.with_plugin(pl.name)
        return None

    # --- PreFilter ----------------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Returns (result, status, plugins that narrowed the node set)."""
        nodes = self.snapshot_shared_lister().node_infos().list()
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        skip: set[str] = set()
        return_status: Status | None = None
        try:
            for pl in self.pre_filter_plugins:
                try:
                    r, s = pl.pre_filter(state, pod, nodes)
                except Exception as exc:
                    r, s = None, from_exception(exc, pl.name)
                if s is not None and s.code == Code.Skip:
                    skip.add(pl.name)
                    continue
                if not _ok(s):
                    assert s is not None
                    s = s.with_plugin(pl.name)
                    if s.code == Code.UnschedulableAndUnresolvable:
                        return None, s, set()
                    if s.code == Code.Unschedulable:
                        return_status = s
                        continue
                    return (
                        None,
                        Status.error(
                            f'running PreFilter plugin "{pl.name}": {s.message()}', pl.name
                        ),
                        set(),
                    )
                if r is not None and not r.all_nodes():
                    plugins_with_nodes.add(pl.name)
                result = r if result is None else result.merge(r)
                if result is not None and not result.all_nodes() and not result.node_names:
                    names = sorted(plugins_with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status(Code.UnschedulableAndUnresolvable, (msg,)), plugins_with_nodes
            return result, return_status, plugins_with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Tell PreFilter plugins a pod was added to ``node_info`` (nominated pods, preemption)."""
        return self._run_pre_filter_extension("AddPod", state, pod, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Tell PreFilter plugins a pod was removed from ``node_info`` (preemption dry runs)."""
        return self._run_pre_filter_extension(
            "RemovePod", state, pod, pod_info_to_remove, node_info
        )

    def _run_pre_filter_extension(
        self, op: str, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for pl in self.pre_filter_plugins:
            try:
                ext = pl.pre_filter_extensions()
                if ext is None or pl.name in state.skip_filter_plugins:
                    continue
                fn = ext.add_pod if op == "AddPod" else ext.remove_pod
                st = fn(state, pod, pod_info, node_info)
            except Exception as exc:
                st = from_exception(exc, pl.name)
            if not _ok(st):
                assert st is not None
                return Status.error(
                    f'running {op} on PreFilter plugin "{pl.name}": {st.message()}', pl.name
                )
        return None

    # --- Filter -------------------------------------------------------------------------

    def filter_functions(self, state: CycleState) -> list[tuple[str, Any]]:
        """The (name, bound filter) pairs to run this cycle, PreFilter skips removed."""
        skip = state.skip_filter_plugins
        return [(pl.name, pl.filter) for pl in self.filter_plugins if pl.name not in skip]

    def run_filter_plugins(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        filters: Sequence[tuple[str, Any]] | None = None,
    ) -> Status | None:
        if filters is None:
            filters = self.filter_functions(state)
        for name, fn in filters:
            st: Status | None
            try:
                st = fn(state, pod, node_info)
            except Exception as exc:  # a raising plugin is the plugin's error status
                st = from_exception(exc, name)
            if st is not None and st.code != Code.Success:
                if not st.is_rejected():
                    st = Status.error(f'running "{name}" filter plugin: {st.message()}', name)
                return st.with_plugin(name)
        return None

    def run_filter_plugins_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        filters: Sequence[tuple[str, Any]] | None = None,
    ) -> Status | None:
        """Filters twice when equal-or-higher priority pods are nominated to the node: with them
        treated as running, then (if that passed) without them."""
        nominated = self.nominator.nominated_pods_for_node(node_info.name)
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info, filters)
        added, state_out, node_out, err = self._add_ge_nominated_pods(
            state, pod, node_info, nominated
        )
        if err is not None:
            return err
        if not added:
            return self.run_filter_plugins(state, pod, node_info, filters)
        st = self.run_filter_plugins(state_out, pod, node_out, self.filter_functions(state_out))
        if not _ok(st):
            return st
        return self.run_filter_plugins(state, pod, node_info, filters)

    def _add_ge_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: list[PodInfo]
    ) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        prio = pod_priority(pod)
        node_out: NodeInfo | None = None
        state_out: CycleState | None = None
        for pi in nominated:
            if pod_priority(pi.pod) >= prio and pi.pod.uid != pod.uid:
                if node_out is None or state_out is None:
                    node_out = node_info.clone()
                    state_out = state.clone()
                node_out.add_pod(pi)
                st = self.run_pre_filter_extension_add_pod(state_out, pod, pi, node_out)
                if not _ok(st):
                    return False, state, node_info, st
        if node_out is None or state_out is None:
            return False, state, node_info, None
        return True, state_out, node_out, None

    # --- PostFilter ---------------------------------------------------------------------

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, statuses: NodeToStatusReader
    ) -> tuple[PostFilterResult | None, Status | None]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            try:
                r, s = pl.post_filter(state, pod, statuses)
            except Exception as exc:
                r, s = None, from_exception(exc, pl.name)
            if _ok(s):
                return r, s
            assert s is not None
            if s.code == Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status.error(s.as_error(), pl.name)
            if r is not None:  # a returned result overrides the nomination, even with ""
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = pl.name
        return result, Status(Code.Unschedulable, tuple(reasons), rejector)



def _point_type(point: str) -> str:
    return "".join(p.capitalize() for p in point.split("_")) + "Plugin"

