"""``capacity``: how many replicas of a pod fit, created one after another (cluster-capacity).

Replicas are scheduled in a fork, without preemption. Each replica is named and labelled as a
ReplicaSet would create it, so topology spreading and (anti-)affinity among replicas count.

The replica loop is batched exactly. Replicas share one spec, so when every Filter and Score
plugin that runs for them is node-local (its verdict and raw score on a node depend only on
the pod spec and that node's NodeInfo), a node's filter verdict and raw scores are computed
once and reused until the node changes (the cache reports which nodes did). Everything else
runs as in a scheduling cycle: the round-robin window of percentageOfNodesToScore (a slice of
the sorted feasible positions), nominated pods in filtering, every Score plugin's
normalization on the window, the weights and the tie-breaking random draw. PreFilter and
PreScore run for the replicas too; for a pod without pod (anti-)affinity or spread
constraints, while no running pod has affinity, their state cannot differ between replicas
and is reused. A replica for which any precondition fails goes through the ordinary
``schedule_pod`` path, and so do the first replica and the one that does not fit; the tests
check that the result equals scheduling every replica through ``schedule_pod``.
"""

from __future__ import annotations

from itertools import compress
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

import attrs
from sortedcontainers import SortedList  # type: ignore[import-untyped]

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod, PodSpec
from kschedlib.errors import InvalidObjectError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kschedlib.framework.queued_pod_info import POD_INFO_FIELDS
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.registry import in_tree_registry
from kschedlib.results import Outcome
from kschedlib.schedule_one import num_feasible_nodes_to_find
from kschedlib.whatif_reports import CapacityReport

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler

__all__ = ["NODE_LOCAL_PLUGINS", "capacity", "make_replica", "replica_name"]

NODE_LOCAL_PLUGINS = frozenset(
    {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        # Node-local for pods without PVC or generic ephemeral volumes (checked per pod).
        "VolumeRestrictions",
        "VolumeZone",
        "NodeVolumeLimits",
        "VolumeBinding",
        "DynamicResources",
    }
)
"""In-tree plugins whose Filter verdict and raw Score for a pod on a node depend only on the
pod's spec and that node's NodeInfo (for pods without claims: see ``_fast_eligible``)."""

# Plugins of the binding path that do nothing for pods without volume or resource claims.
_NOOP_BINDING_PLUGINS = frozenset({"VolumeBinding", "DynamicResources", "DefaultBinder"})

# Kubernetes' rand.String alphabet (no vowels, no confusable characters).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def replica_name(base: str, index: int) -> str:
    """``<base>-<5 characters>``, a deterministic ReplicaSet-style pod name."""
    chars = []
    n = index
    for _ in range(5):
        n, r = divmod(n, len(_ALPHANUMS))
        chars.append(_ALPHANUMS[r])
    return f"{base}-{''.join(reversed(chars))}"


def make_replica(template: Pod, base: str, index: int) -> Pod:
    """Replica ``index`` of ``template``: a ReplicaSet-style name, a UID, the template's
    labels, an owner reference to the ReplicaSet ``base``, and no node or nomination."""
    return _Replicas(template, base).make(index)


class _Replicas:
    """Builds replicas of one template quickly (the metadata fields are prepared once)."""

    def __init__(self, template: Pod, base: str) -> None:
        meta = template.metadata
        owner = OwnerReference(
            api_version="apps/v1", kind="ReplicaSet", name=base, uid=f"whatif-rs-{base}",
            controller=True,
        )
        self.base = base
        self.ns = meta.namespace or "default"
        self.meta = {f.name: getattr(meta, f.name) for f in attrs.fields(ObjectMeta)}
        self.meta["namespace"] = self.ns
        self.meta["owner_references"] = tuple(
            o for o in meta.owner_references if not o.controller
        ) + (owner,)
        self.template = template
        self.status = attrs.evolve(template.status, nominated_node_name="")
        self.bound_specs: dict[str, PodSpec] = {}

    def make(self, index: int) -> Pod:
        t = self.template
        name = replica_name(self.base, index)
        kw = dict(self.meta)
        kw["name"] = name
        kw["uid"] = f"whatif-{self.ns}-{name}"
        return Pod(api_version=t.api_version, kind=t.kind, metadata=ObjectMeta(**kw),
                   spec=t.spec, status=self.status)

    def bound(self, replica: Pod, node_name: str) -> Pod:
        """``replica.with_node_name(node_name)``, sharing one spec per node."""
        spec = self.bound_specs.get(node_name)
        if spec is None:
            spec = self.bound_specs[node_name] = attrs.evolve(replica.spec, node_name=node_name)
        return Pod(api_version=replica.api_version, kind=replica.kind, metadata=replica.metadata,
                   spec=spec, status=replica.status)


def capacity(sched: Scheduler, pod: Pod, *, limit: int | None = None, batch: bool = True) -> CapacityReport:
    """Schedule replicas of ``pod`` one after another in a fork until one does not fit or
    ``limit`` fit. ``batch=False`` schedules every replica through ``schedule_pod`` (the
    reference the batched loop is tested against)."""
    if limit is not None and limit < 0:
        raise InvalidObjectError("capacity", "limit", f"must be >= 0, got {limit}")
    if pod.spec.node_name:
        raise InvalidObjectError(f"pod {pod.key}", "spec.nodeName", "is set: give an unbound pod")
    fork = sched.fork()
    fork.explain_enabled = False
    if not fork.responsible_for(pod):
        raise InvalidObjectError(
            f"pod {pod.key}", "spec.schedulerName",
            f'"{pod.spec.scheduler_name}" is not a profile of this scheduler',
        )
    fwk = fork.framework_for(pod)
    assert fwk is not None
    saved_post_filter = {name: list(f.post_filter_plugins) for name, f in fork.frameworks.items()}
    for f in fork.frameworks.values():
        f.post_filter_plugins.clear()  # cluster-capacity does not preempt
    base = pod.metadata.name or "replica"
    maker = _Replicas(pod, base)
    fast = _FastPath(fork, fwk, pod) if batch and _fast_eligible(fork, fwk, pod) else None
    placed: list[tuple[str, str]] = []
    counts: dict[str, int] = {}
    stop = "limit"
    preemption: tuple[str, tuple[str, ...]] | None = None
    i = 0
    batched = 0
    proto: PodInfo | None = None
    while limit is None or i < limit:
        replica = maker.make(i)
        host = fast.schedule(replica) if fast is not None and i > 0 else None
        if host is None:
            fork.add_pod(replica)
            result = fork.schedule_pod(replica)
            if result is None:
                stop = "the pod is not ready for scheduling: a PreEnqueue plugin gates it"
                break
            if result.outcome != Outcome.Scheduled:
                # The stop reason is the whole FailedScheduling message, PostFilter part
                # included: the replica's cycle runs again with preemption (in the fork, which
                # is thrown away) to learn what it would say and whether it would help.
                for name, f in fork.frameworks.items():
                    f.post_filter_plugins[:] = saved_post_filter[name]
                again = fork.schedule_pod(replica)
                if again is not None and again.outcome != Outcome.Scheduled:
                    result = again
                stop = result.message
                if result.nominated_node:
                    preemption = (result.nominated_node, tuple(v.key for v in result.victims))
                break
            host = result.node
            assert host is not None
        else:
            bound = maker.bound(replica, host)
            if proto is None:
                fork.cache.add_pod(bound)  # the cache builds the PodInfo as it always does
                proto = next(
                    pi for pi in fork.cache.get_node(host).pods if pi.pod.uid == bound.uid
                )
            else:
                fork.cache.add_pod(bound, pod_info=_pod_info_like(proto, bound))
            batched += 1
        placed.append((replica.metadata.name, host))
        counts[host] = counts.get(host, 0) + 1
        i += 1
    key = f"{pod.metadata.namespace or 'default'}/{base}"
    return CapacityReport(
        key, len(placed), counts, stop, limit, tuple(placed), batched,
        preemption_node=preemption[0] if preemption else None,
        preemption_victims=preemption[1] if preemption else (),
    )


def _pod_info_like(proto: PodInfo, pod: Pod) -> PodInfo:
    """``proto``'s compiled terms and computed resources for another replica: replicas share
    spec, labels and namespace, which is all a PodInfo is computed from."""
    proto.resources  # computed once, then shared  # noqa: B018
    pi = PodInfo.__new__(PodInfo)
    for name in POD_INFO_FIELDS:
        object.__setattr__(pi, name, getattr(proto, name))
    pi.pod = pod
    return pi


def _fast_eligible(fork: Scheduler, fwk: Framework, pod: Pod) -> bool:
    """Whether replicas of ``pod`` may take the batched path at all."""
    if fork.extenders or pod.spec.resource_claims:
        return False
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None or v.ephemeral is not None:
            return False
    in_tree = in_tree_registry()
    for name, plugin in fwk.plugins.items():
        spec = fork.registry.get(name)
        tree = in_tree.get(name)
        custom = spec is None or tree is None or spec.factory is not tree.factory
        if custom and _runs_in_cycle(fwk, plugin):
            return False
    for point in ("reserve", "permit", "pre_bind", "bind", "post_bind"):
        for pl in fwk.points.get(point, ()):
            if pl.name not in _NOOP_BINDING_PLUGINS:
                return False
    return True


def _runs_in_cycle(fwk: Framework, plugin: Any) -> bool:
    """Whether an out-of-tree plugin takes part in scheduling cycles (not only queueing)."""
    for point in ("pre_filter", "filter", "pre_score", "score", "reserve", "permit",
                  "pre_bind", "bind", "post_bind"):
        if plugin in fwk.points.get(point, ()):
            return True
    return False


class _FastPath:
    """The batched replica cycle. Filter verdicts and raw scores are kept per position in the
    snapshot's node list and recomputed only for nodes the cache reports changed; the
    feasible positions sit in a sorted list, so the round-robin window is a slice."""

    def __init__(self, fork: Scheduler, fwk: Framework, template: Pod) -> None:
        self.fork = fork
        self.fwk = fwk
        self.spec = template.spec
        aff = template.spec.affinity
        # PreFilter/PreScore of such a pod give the same state for every replica while no
        # pod with (anti-)affinity runs: only spec-derived data and skips that nothing the
        # replicas change can alter. Reused then, recomputed otherwise.
        self.reusable = not template.spec.topology_spread_constraints and (
            aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None)
        )
        self.state: CycleState | None = None
        self.filters: list[tuple[str, Any]] = []
        self.prescored = False
        self.nodes: list[Any] | None = None
        self.pos: dict[str, int] = {}
        self.ok: list[bool] = []
        self.feasible: SortedList = SortedList()
        self.unscored: set[int] = set()
        self.tot: list[int] = []
        self.ext_seen: list[set[int]] = []
        self.cols: list[list[int]] = []
        self.score_order: tuple[str, ...] = ()
        self.filter_order: tuple[str, ...] = ()
        self.seen_generation = -1

    def schedule(self, pod: Pod) -> str | None:
        """The node the scheduling cycle would pick for ``pod``, with the algorithm's state
        advanced as that cycle would advance it; None (nothing changed) to take the
        ordinary path."""
        fork, fwk = self.fork, self.fwk
        alg = fork.algorithm
        snapshot, cache = fork.snapshot, fork.cache
        cache.update_snapshot(snapshot)
        nodes = snapshot.node_info_list
        n = len(nodes)
        if n == 0:
            return None
        reuse = (
            self.reusable
            and pod.spec is self.spec
            and not snapshot.have_pods_with_affinity_node_info_list
            and not snapshot.have_pods_with_required_anti_affinity_node_info_list
        )
        if reuse and self.state is not None:
            state, filters = self.state, self.filters
        else:
            self.state, self.prescored = None, False
            state = CycleState()
            pre_res, st, _ = fwk.run_pre_filter_plugins(state, pod)
            if st is not None and st.code != Code.Success:
                return None
            if pre_res is not None and not pre_res.all_nodes():
                return None
            filters = fwk.filter_functions(state)
            for name, _fn in filters:
                if name not in NODE_LOCAL_PLUGINS:
                    return None
            if reuse:
                self.state, self.filters = state, filters
        order = tuple(name for name, _fn in filters)
        if nodes is not self.nodes or order != self.filter_order:
            dirty: list[str] | None = None  # everything
            self.nodes = nodes
            self.filter_order = order
            self.pos = {ni.name: i for i, ni in enumerate(nodes)}
            self.ok = [False] * n
            self.feasible = SortedList()
            self.unscored = set(range(n))
            self.tot = [0] * n
            self.cols = []
        else:
            dirty = cache.changed_since(self.seen_generation)
        self.seen_generation = cache.latest_generation()
        if not self._refresh(state, pod, nodes, filters, dirty):
            return None
        fl = self.feasible
        m = len(fl)
        if m == 0:
            return None  # the ordinary path reports the FitError
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = alg.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(pct, n)
        offset = alg.next_start_node_index
        i = fl.bisect_left(offset)
        if m <= to_find:
            window = fl[i:] + fl[:i]
            processed = n
        else:
            window = fl[i:i + to_find] if i + to_find <= m else fl[i:] + fl[:to_find - (m - i)]
            processed = (window[-1] - offset) % n + 1
        if len(window) == 1:
            host = str(nodes[window[0]].name)
        else:
            chosen = self._score_and_select(state, pod, nodes, window, reuse)
            if chosen is None:
                return None
            host = chosen
        alg.next_start_node_index = (offset + processed) % n
        return host

    def _refresh(
        self, state: CycleState, pod: Pod, nodes: list[Any], filters: list[tuple[str, Any]],
        dirty: list[str] | None,
    ) -> bool:
        """Recompute the filter verdict of the changed nodes (all when ``dirty`` is None).
        Nominated pods are taken into account as a cycle does; they cannot change during the
        replica loop (it never preempts), so a node's verdict holds while the node does."""
        fwk = self.fwk
        run = (
            fwk.run_filter_plugins_with_nominated_pods
            if fwk.has_nominated_pods()
            else fwk.run_filter_plugins
        )
        ok, fl, unscored, pos = self.ok, self.feasible, self.unscored, self.pos
        targets = range(len(nodes)) if dirty is None else [pos[d] for d in dirty if d in pos]
        for p in targets:
            ni = nodes[p]
            if filters:
                fst = run(state, pod, ni, filters)
                if fst is not None and fst.code == Code.Error:
                    return False
                good = fst is None or fst.code == Code.Success
            else:
                good = True
            if good != ok[p]:
                ok[p] = good
                if good:
                    fl.add(p)
                else:
                    fl.remove(p)
            unscored.add(p)
        return True

    def _score_and_select(
        self, state: CycleState, pod: Pod, nodes: list[Any], feasible: list[int], reuse: bool
    ) -> str | None:
        fwk, alg = self.fwk, self.fork.algorithm
        k = len(feasible)
        window: list[Any] | None = None
        if not fwk.has_score_plugins():
            totals = [1] * k
        else:
            if not (reuse and self.prescored):
                window = list(itemgetter(*feasible)(nodes))
                st = fwk.run_pre_score_plugins(state, pod, window)
                if st is not None and st.code != Code.Success:
                    return None
            skip = state.skip_score_plugins
            plugins = [pl for pl in fwk.score_plugins if pl.name not in skip]
            for pl in plugins:
                if pl.name not in NODE_LOCAL_PLUGINS:
                    return None
            self.prescored = reuse
            order = tuple(pl.name for pl in plugins)
            if order != self.score_order:
                self.score_order = order
                self.unscored = set(range(len(nodes)))
            weights = [fwk.score_weights[pl.name] for pl in plugins]
            exts = [pl.score_extensions() for pl in plugins]
            plain = [j for j, e in enumerate(exts) if e is None]
            normalized = [j for j, e in enumerate(exts) if e is not None]
            if len(self.ext_seen) != len(normalized) or len(self.cols) != len(normalized):
                self.ext_seen = [set() for _ in normalized]
                self.cols = [[0] * len(nodes) for _ in normalized]
                self.unscored = set(range(len(nodes)))
            ext_seen, cols = self.ext_seen, self.cols
            tot = self.tot
            unscored = self.unscored
            if unscored:
                # The window holds every feasible position in its circular span.
                n = len(nodes)
                first = feasible[0]
                span = (feasible[-1] - first) % n
                ok = self.ok
                todo = [p for p in unscored if ok[p] and (p - first) % n <= span]
                fns = [pl.score for pl in plugins]
                for p in todo:
                    ni = nodes[p]
                    raw: list[int] = []
                    for fn in fns:
                        sc, sst = fn(state, pod, ni)
                        if sst is not None and sst.code != Code.Success:
                            return None
                        raw.append(sc)
                    t = 0
                    for j in plain:
                        v = raw[j]
                        if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                            return None  # the ordinary path reports the invalid score
                        t += v * weights[j]
                    tot[p] = t
                    for idx, j in enumerate(normalized):
                        v = raw[j]
                        cols[idx][p] = v
                        ext_seen[idx].add(v)
                    unscored.discard(p)
            pick = itemgetter(*feasible)
            totals = list(pick(tot))
            for idx, j in enumerate(normalized):
                seen = ext_seen[idx]
                if len(seen) == 1 and _constant_normalization(exts[j], state, pod, next(iter(seen))):
                    # Every node scored so far has the same raw score, so every node of the
                    # window gets the same normalized score: no effect on the choice.
                    continue
                vals = list(pick(cols[idx]))
                ext = exts[j]
                fast = getattr(ext, "normalize_score_values", None)
                if fast is not None:
                    nst = fast(state, pod, vals)
                else:
                    if window is None:
                        window = list(itemgetter(*feasible)(nodes))
                    scores = [NodeScore(ni.name, v) for ni, v in zip(window, vals, strict=True)]
                    nst = ext.normalize_score(state, pod, scores)
                    vals = [ns.score for ns in scores]
                if nst is not None and nst.code != Code.Success:
                    return None
                if min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE:
                    return None
                w = weights[j]
                if w != 1:
                    vals = list(map(w.__mul__, vals))
                totals = list(map(add, totals, vals))
        # SchedulingAlgorithm.select_host, on the same totals and random source.
        best = max(totals)
        if alg.deterministic:
            return str(min(nodes[p].name for p, t in zip(feasible, totals, strict=True) if t == best))
        ties = totals.count(best)
        if ties == 1:
            return str(nodes[feasible[totals.index(best)]].name)
        at = list(compress(range(k), map(best.__eq__, totals)))
        return str(nodes[feasible[at[alg.rng.randrange(ties)]]].name)


def _constant_normalization(ext: Any, state: CycleState, pod: Pod, raw: int) -> bool:
    """Whether normalizing equal raw scores gives equal valid scores (true of every in-tree
    normalizer; checked on two nodes so that a custom one is never assumed)."""
    fast = getattr(ext, "normalize_score_values", None)
    if fast is not None:
        vals = [raw, raw]
        st = fast(state, pod, vals)
    else:
        scores = [NodeScore("a", raw), NodeScore("b", raw)]
        st = ext.normalize_score(state, pod, scores)
        vals = [s.score for s in scores]
    if st is not None and st.code != Code.Success:
        return False
    return vals[0] == vals[1] and MIN_NODE_SCORE <= vals[0] <= MAX_NODE_SCORE
