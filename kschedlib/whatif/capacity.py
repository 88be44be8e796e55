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

from itertools import chain, compress, islice
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

import attrs

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.pod import Pod, PodSpec
from kschedlib.errors import InvalidObjectError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kschedlib.framework.queued_pod_info import POD_INFO_FIELDS
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.interpodaffinity.filtering import PreFilterState as AffinityPreFilterState
from kschedlib.plugins.podtopologyspread.filtering import CriticalPaths
from kschedlib.plugins.podtopologyspread.filtering import PreFilterState as SpreadPreFilterState
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
            if fast is not None:
                fast.forget()
        else:
            bound = maker.bound(replica, host)
            if proto is None:
                fork.cache.add_pod(bound)  # the cache builds the PodInfo as it always does
                info = proto = next(
                    pi for pi in fork.cache.get_node(host).pods if pi.pod.uid == bound.uid
                )
            else:
                info = _pod_info_like(proto, bound)
                fork.cache.add_pod(bound, pod_info=info)
            assert fast is not None
            fast.placed(replica, info, host)
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
    if fork.batching is not None and fwk.sign_pod(pod) is not None:
        return False  # replicas would take opportunistic batching hints: full cycles
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
    """The batched replica cycle. Node-local filter verdicts and raw scores are kept per
    position in the snapshot's node list and recomputed only for nodes the cache reports
    changed. The other filters (PodTopologySpread, InterPodAffinity) judge a node by its
    values of a few topology keys and by their PreFilter state: their verdict is kept per
    such signature, and recomputed for the signatures that share a topology pair with a
    node that got a replica, or for all of them when a global quantity of the state (a
    spread constraint's minimum, whether any pod matches the affinity terms) changed. The
    PreFilter state is computed once and then kept up to date with the PreFilter
    extensions' AddPod, as a cycle does for nominated pods. Verdicts are bytes, one per
    position, so the round-robin window is found at C speed."""

    def __init__(self, fork: Scheduler, fwk: Framework, template: Pod) -> None:
        self.fork = fork
        self.fwk = fwk
        self.spec = template.spec
        aff = template.spec.affinity
        # PreFilter/PreScore of such a pod give the same state for every replica while no
        # pod with (anti-)affinity runs: only spec-derived data and skips that nothing the
        # replicas change can alter. Reused then; otherwise the PreFilter state is tracked.
        self.reusable = not template.spec.topology_spread_constraints and (
            aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None)
        )
        self.disabled = False
        # The loop never preempts and replicas are never nominated: nominations stay put.
        self.nominated = fwk.has_nominated_pods()
        """A structural reason (a filter or score this path cannot batch) was met."""
        self.state: CycleState | None = None
        self.tracked: CycleState | None = None
        """PreFilter state of the next replica, updated by ``placed`` (non-reusable pods)."""
        self.filters: list[tuple[str, Any]] = []
        self.local_filters: list[tuple[str, Any]] = []
        self.other_filters: list[tuple[str, Any]] = []
        self.prescored = False
        self.prescore_kept: tuple[dict[str, Any], frozenset[str]] | None = None
        """What PreScore wrote and skipped, when it is the same for every replica."""
        self.nodes: list[Any] | None = None
        self.pos: dict[str, int] = {}
        self.loc = bytearray()
        self.unscored: set[int] = set()
        self.tot: list[int] = []
        self.ext_seen: list[set[int]] = []
        self.cols: list[list[int]] = []
        self.score_order: tuple[str, ...] = ()
        self.filter_order: tuple[str, ...] = ()
        self.seen_generation = -1
        self.sigs = _Signatures()

    def placed(self, pod: Pod, pod_info: PodInfo, host: str) -> None:
        """A replica went to ``host`` through this path: update the tracked PreFilter state
        as the next replica's PreFilter would see it."""
        tracked = self.tracked
        if tracked is None or self.nodes is None:
            return
        p = self.pos.get(host)
        if p is None:
            self.tracked = None
            return
        ni = self.nodes[p]
        st = self.fwk.run_pre_filter_extension_add_pod(tracked, pod, pod_info, ni)
        if st is not None and st.code != Code.Success:
            self.tracked = None
            return
        _recount_critical_paths(tracked)
        self.sigs.touched.append(ni)

    def forget(self) -> None:
        """A replica went through the ordinary path: the tracked state is stale."""
        self.tracked = None
        self.sigs.fingerprint = None  # its node was not noted: recompute every signature

    def schedule(self, pod: Pod) -> str | None:
        """The node the scheduling cycle would pick for ``pod``, with the algorithm's state
        advanced as that cycle would advance it; None (nothing changed) to take the
        ordinary path."""
        if self.disabled:
            return None
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
        elif not reuse and self.tracked is not None and pod.spec is self.spec:
            state, filters = _shallow_copy(self.tracked), self.filters
        else:
            self.state, self.tracked, self.prescored = None, None, False
            self.sigs.fingerprint = None  # a new state: recompute every signature
            state = CycleState()
            pre_res, st, _ = fwk.run_pre_filter_plugins(state, pod)
            if st is not None and st.code != Code.Success:
                return None
            if pre_res is not None and not pre_res.all_nodes():
                return None
            filters = fwk.filter_functions(state)
            for name, _fn in filters:
                if name not in NODE_LOCAL_PLUGINS and name not in _SIGNATURE_FILTERS:
                    self.disabled = True
                    return None
            self.filters = filters
            self.local_filters = [f for f in filters if f[0] in NODE_LOCAL_PLUGINS]
            self.other_filters = [f for f in filters if f[0] not in NODE_LOCAL_PLUGINS]
            if self.other_filters and self.nominated:
                self.disabled = True  # nominated pods change the state node by node
                return None
            if reuse:
                self.state = state
            elif pod.spec is self.spec:
                self.tracked = state
                state = _shallow_copy(state)
        order = tuple(name for name, _fn in filters)
        if nodes is not self.nodes or order != self.filter_order:
            dirty: list[str] | None = None  # everything
            self.nodes = nodes
            self.filter_order = order
            self.pos = {ni.name: i for i, ni in enumerate(nodes)}
            self.loc = bytearray(n)
            self.unscored = set(range(n))
            self.tot = [0] * n
            self.cols = []
            self.sigs = _Signatures()
        else:
            dirty = cache.changed_since(self.seen_generation)
        self.seen_generation = cache.latest_generation()
        if not self._refresh(state, pod, nodes, dirty):
            return None
        mask: bytes | bytearray = self.loc
        if self.other_filters:
            allowed = self.sigs.allowed(state, pod, nodes, self.other_filters)
            if allowed is None:
                self.disabled = self.sigs.unsupported
                return None
            mask = (int.from_bytes(mask, "little") & int.from_bytes(allowed, "little")).to_bytes(
                n, "little"
            )
        m = mask.count(1)
        if m == 0:
            return None  # the ordinary path reports the FitError
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = alg.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(pct, n)
        if not fwk.has_score_plugins():
            to_find = 1  # as find_nodes_that_pass_filters: the first feasible node will do
        offset = alg.next_start_node_index % n
        want = min(m, to_find + 1)
        if m * 4 >= n:  # dense: compress walks the bytes at C speed
            walk = chain(
                compress(range(offset, n), mask[offset:]), compress(range(offset), mask[:offset])
            )
            found = list(islice(walk, want))
        else:  # sparse: find skips the runs of rejected nodes
            found = _positions(mask, offset, n, want)
        if m <= to_find:
            window = found
            processed = n  # the cycle ran out of nodes before it had enough
        else:
            # The cycle stops at the first feasible node beyond those it needs: the nodes
            # rejected before that one count into the next start index.
            window = found[:to_find]
            processed = (found[-1] - offset) % n
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
        self, state: CycleState, pod: Pod, nodes: list[Any], dirty: list[str] | None,
    ) -> bool:
        """Recompute the node-local filter verdict of the changed nodes (all when ``dirty``
        is None). Nominated pods are taken into account as a cycle does; they cannot change
        during the replica loop (it never preempts), so a node's verdict holds while the
        node does."""
        fwk = self.fwk
        filters = self.local_filters
        run = (
            fwk.run_filter_plugins_with_nominated_pods
            if self.nominated
            else fwk.run_filter_plugins
        )
        loc, unscored, pos = self.loc, self.unscored, self.pos
        targets = range(len(nodes)) if dirty is None else [pos[d] for d in dirty if d in pos]
        for p in targets:
            ni = nodes[p]
            if filters:
                fst = run(state, pod, ni, filters)
                if fst is not None and fst.code == Code.Error:
                    return False
                loc[p] = fst is None or fst.code == Code.Success
            else:
                loc[p] = 1
            unscored.add(p)
        return True

    def _prescore_stable(self, state: CycleState) -> bool:
        """Whether every replica's PreScore writes what this one's did: the plugins that are
        not node-local skipped, and skip for every replica. PodTopologySpread skips when the
        pod (or the defaulting, from objects the loop never changes) has no ScheduleAnyway
        constraint; InterPodAffinity skips when no pod's terms score the replica, and
        replicas without preferred terms or required affinity terms score nothing. The
        node-local PreScore plugins store only what they derive from the pod's spec."""
        skip = state.skip_score_plugins
        for pl in self.fwk.pre_score_plugins:
            if pl.name in NODE_LOCAL_PLUGINS:
                continue
            if pl.name not in skip or pl.name not in _SIGNATURE_FILTERS:
                return False
        aff = self.spec.affinity
        if aff is not None:
            pa, anti = aff.pod_affinity, aff.pod_anti_affinity
            if pa is not None and (pa.required_during_scheduling_ignored_during_execution
                                   or pa.preferred_during_scheduling_ignored_during_execution):
                return False
            if anti is not None and anti.preferred_during_scheduling_ignored_during_execution:
                return False
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
            kept = self.prescore_kept
            if reuse and self.prescored:
                pass
            elif kept is not None and not reuse:
                state.update(kept[0])
                state.skip_score_plugins = set(kept[1])
            else:
                window = list(itemgetter(*feasible)(nodes))
                before = dict(state)
                st = fwk.run_pre_score_plugins(state, pod, window)
                if st is not None and st.code != Code.Success:
                    return None
                if not reuse and self._prescore_stable(state):
                    written = {k: v for k, v in state.items() if before.get(k, _GONE) is not v}
                    self.prescore_kept = (written, frozenset(state.skip_score_plugins))
            skip = state.skip_score_plugins
            plugins = [pl for pl in fwk.score_plugins if pl.name not in skip]
            for pl in plugins:
                if pl.name not in NODE_LOCAL_PLUGINS:
                    self.disabled = True
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
                todo = unscored.intersection(feasible)
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


def _positions(mask: bytes | bytearray, offset: int, n: int, want: int) -> list[int]:
    """The first ``want`` positions holding 1 in ``mask``, circularly from ``offset``."""
    out: list[int] = []
    find = mask.find
    p = find(1, offset)
    while p >= 0 and len(out) < want:
        out.append(p)
        p = find(1, p + 1)
    p = find(1, 0, offset)
    while p >= 0 and len(out) < want:
        out.append(p)
        p = find(1, p + 1, offset)
    return out


def _recount_critical_paths(state: CycleState) -> None:
    """PodTopologySpread's minimum per constraint as PreFilter works it out from the counts.
    AddPod updates the two critical paths in place, which can lose the minimum once the
    smallest domain grows; a fresh PreFilter scans every domain. Filter reads only the
    minimum (slot 0): it is set exactly, the full scan is done when there are few domains."""
    s = state.get("PreFilterPodTopologySpread")
    if not isinstance(s, SpreadPreFilterState) or not s.constraints:
        return
    paths: list[CriticalPaths] = []
    for counts in s.tp_value_to_match_num:
        p = CriticalPaths()
        if len(counts) <= _SMALL:
            for value, num in counts.items():
                p.update(value, num)
        elif counts:
            low = min(counts, key=counts.__getitem__)  # the first minimum, as the scan keeps
            p.values[0], p.nums[0] = low, counts[low]
        paths.append(p)
    s.critical_paths = paths
    s.refresh_checks()


def _shallow_copy(state: CycleState) -> CycleState:
    """A new CycleState holding the same plugin states (a new cycle's identity for plugins
    that key caches on it; the PreFilter data itself is shared with the tracked state)."""
    c = CycleState()
    c.update(state)
    c.skip_filter_plugins = state.skip_filter_plugins
    return c


# Filters whose verdict on a node depends only on their PreFilter state and the node's
# values of the topology keys that state names (see _topology_keys).
_SIGNATURE_FILTERS = frozenset({"PodTopologySpread", "InterPodAffinity"})
_SMALL = 64
_GONE: Any = object()


def _topology_keys(state: CycleState, names: list[str]) -> tuple[str, ...] | None:
    """The node label keys the signature filters read, None when a state is unknown."""
    keys: set[str] = set()
    for name in names:
        s = state.get("PreFilter" + name)
        if name == "PodTopologySpread" and isinstance(s, SpreadPreFilterState):
            keys.update(c.topology_key for c in s.constraints)
        elif name == "InterPodAffinity" and isinstance(s, AffinityPreFilterState):
            keys.update(t.topology_key for t in s.required_affinity_terms)
            keys.update(t.topology_key for t in s.required_anti_affinity_terms)
            keys.update(s.existing_anti_affinity_counts)
            keys.update(s.affinity_counts)
            keys.update(s.anti_affinity_counts)
        else:
            return None
    return tuple(sorted(keys))


def _global_fingerprint(state: CycleState, names: list[str]) -> tuple[Any, ...]:
    """What the signature filters read beyond the counts of a node's own topology pairs:
    the spread constraints' limits (from the global minimum), and which keys the affinity
    counters hold and whether any pod matches the affinity terms."""
    out: list[Any] = []
    for name in names:
        s = state.get("PreFilter" + name)
        if isinstance(s, SpreadPreFilterState):
            out.append(tuple(limit for _k, _c, limit in s.checks))
        elif isinstance(s, AffinityPreFilterState):
            out.append((
                not s.affinity_counts, s.self_affine,
                tuple(sorted(s.affinity_counts)), tuple(sorted(s.anti_affinity_counts)),
                tuple(sorted(s.existing_anti_affinity_counts)),
            ))
    return tuple(out)


class _Signatures:
    """Verdicts of the signature filters per distinct tuple of topology values."""

    def __init__(self) -> None:
        self.keys: tuple[str, ...] | None = None
        self.code = b""
        self.rep: list[int] = []
        self.members: list[list[int]] = []
        self.by_pair: dict[tuple[str, str], list[int]] = {}
        self.verdict = bytearray()
        self.ok = bytearray()
        self.fingerprint: tuple[Any, ...] | None = None
        self.touched: list[Any] = []
        self.unsupported = False

    def _build(self, nodes: list[Any], keys: tuple[str, ...]) -> None:
        index: dict[tuple[str | None, ...], int] = {}
        sig_of: list[int] = []
        self.rep, self.members, self.by_pair = [], [], {}
        for p, ni in enumerate(nodes):
            labels = ni.node.metadata.labels if ni.node is not None else {}
            sig = tuple(labels.get(k) for k in keys)
            sid = index.get(sig)
            if sid is None:
                sid = index[sig] = len(self.rep)
                self.rep.append(p)
                self.members.append([])
                for k, v in zip(keys, sig, strict=True):
                    if v is not None:
                        self.by_pair.setdefault((k, v), []).append(sid)
            sig_of.append(sid)
            self.members[sid].append(p)
        self.keys = keys
        self.code = bytes(sig_of) if len(self.rep) <= _SMALL else b""
        self.verdict = bytearray(len(self.rep))
        self.ok = bytearray(len(nodes))
        self.fingerprint = None

    def allowed(
        self, state: CycleState, pod: Pod, nodes: list[Any], filters: list[tuple[str, Any]]
    ) -> bytes | bytearray | None:
        """One byte per position: 1 where the signature filters pass; None to take the
        ordinary path (``unsupported`` set when that will not change)."""
        names = [name for name, _fn in filters]
        keys = _topology_keys(state, names)
        if keys is None:
            self.unsupported = True
            return None
        fingerprint = _global_fingerprint(state, names)
        if keys != self.keys:
            self._build(nodes, keys)
        if fingerprint != self.fingerprint:
            todo: Any = range(len(self.rep))
        else:
            dirty: set[int] = set()
            for ni in self.touched:
                labels = ni.node.metadata.labels if ni.node is not None else {}
                for k in keys:
                    v = labels.get(k)
                    if v is not None:
                        dirty.update(self.by_pair.get((k, v), ()))
            todo = dirty
        self.touched = []
        self.fingerprint = fingerprint
        run = self.run_filters
        verdict, members, ok, rep = self.verdict, self.members, self.ok, self.rep
        small = bool(self.code)
        for sid in todo:
            good = run(state, pod, nodes[rep[sid]], filters)
            if good is None:
                self.fingerprint = None  # recompute every signature next time
                return None
            if good != verdict[sid]:
                verdict[sid] = good
                if not small:
                    for p in members[sid]:
                        ok[p] = good
        if small:
            return self.code.translate(bytes(verdict) + bytes(256 - len(verdict)))
        return ok

    @staticmethod
    def run_filters(
        state: CycleState, pod: Pod, ni: Any, filters: list[tuple[str, Any]]
    ) -> int | None:
        for _name, fn in filters:
            try:
                st = fn(state, pod, ni)
            except Exception:
                return None  # the ordinary path reports the plugin's error
            if st is not None and st.code != Code.Success:
                if not st.is_rejected():
                    return None
                return 0
        return 1


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
