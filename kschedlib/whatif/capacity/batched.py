"""The batched replica cycle (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, compress, count, islice
from operator import add, attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kschedlib.framework.node_local_cache import follow_positions, gone_positions
from kschedlib.framework.runtime import Framework
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.podtopologyspread.common import SCHEDULE_ANYWAY
from kschedlib.plugins.podtopologyspread.filtering import CriticalPaths
from kschedlib.plugins.podtopologyspread.filtering import PreFilterState as SpreadPreFilterState
from kschedlib.plugins.podtopologyspread.plugin import PodTopologySpread
from kschedlib.schedule_one import num_feasible_nodes_to_find
from kschedlib.whatif.capacity.common import GONE, NODE_LOCAL_PLUGINS, SIGNATURE_FILTERS, SMALL
from kschedlib.whatif.capacity.signatures import Signatures
from kschedlib.whatif.capacity.soft import LocalColumn, SoftScores, SpreadTerms
from kschedlib.whatif.capacity.window import AffinityScores, LabelColumns, window_scores

if TYPE_CHECKING:
    from kschedlib.scheduler import Scheduler


_name_of = attrgetter("name")
_BATCH = 8
"""From this many unscored positions on, their node-local scores are taken in one batch."""
_KEYED = 128
"""Up to this many distinct (local total, soft key) pairs in a window, the node is chosen
per pair (``SoftScores.keyed``); beyond, on columns of scores."""


class FastPath:
    """The batched replica cycle. Node-local filter verdicts and raw scores are kept per
    position in the snapshot's node list and recomputed only for nodes the cache reports
    changed. The other filters (PodTopologySpread, InterPodAffinity) judge a node by its
    values of a few topology keys and by their PreFilter state: their verdict is kept per
    such signature, and recomputed for the signatures that share a topology pair with a
    node that got a replica, or for all of them when a global quantity of the state (a
    spread constraint's minimum, whether any pod matches the affinity terms) changed. The
    PreFilter state is computed once and then kept up to date with the PreFilter
    extensions' AddPod, as a cycle does for nominated pods. Verdicts are bytes, one per
    position, so the round-robin window is found at C speed. The scores of those two
    plugins, when they score (ScheduleAnyway constraints, preferred terms, hard affinity
    weight), are kept per soft key (see ``soft``): the node is chosen per distinct (local
    total, soft key) pair of the window when there are few, else on columns of scores.

    Changes it did not make are allowed between replicas (removable_nodes drains nodes
    between them): after a node removal every kept column follows its node to its new
    position (``_follow``); a node someone else changed is recomputed and its pods
    recounted, and what was carried about other pods is worked out again (``_others``)."""

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
        self.loc_changed: list[int] | None = None
        """Positions whose node-local verdict changed since the mask was combined (None: any)."""
        self.unscored: set[int] = set()
        self.tot: list[int] = []
        self.ext_seen: list[set[int]] = []
        self.cols: list[list[int]] = []
        self.score_order: tuple[str, ...] = ()
        self.plan: ScorePlan | None = None
        self.local_prescore: tuple[dict[str, Any], frozenset[str]] | None = None
        """What the node-local PreScore plugins wrote and skipped (the same for every replica)."""
        self.local_pre_score = [pl for pl in fwk.pre_score_plugins if pl.name in NODE_LOCAL_PLUGINS]
        self.other_pre_score = [
            pl for pl in fwk.pre_score_plugins if pl.name not in NODE_LOCAL_PLUGINS
        ]
        ipa = next((pl for pl in self.other_pre_score if pl.name == "InterPodAffinity"), None)
        self.affinity = None if ipa is None else AffinityScores(ipa, fork.objects)
        self.labels: LabelColumns | None = None
        self.filter_order: tuple[str, ...] = ()
        self.seen_generation = -1
        self.sigs = Signatures()
        self.soft: SoftScores | None = None
        """Soft-rule scores kept per soft key (see ``soft``); None until a replica needs them."""
        self.mine: dict[str, int] = {}
        """Nodes this path placed replicas on since ``seen_generation``, with the cache's
        generation right after each placement: a later generation is someone else's change."""
        self.label_refs: dict[str, Any] = {}
        """Each node's labels mapping when the kept columns were built (by identity; a node
        whose labels changed makes this path start over)."""

    def placed(self, pod: Pod, pod_info: PodInfo, host: str) -> None:
        """A replica went to ``host`` through this path: update the tracked PreFilter state
        as the next replica's PreFilter would see it."""
        self.mine[host] = self.fork.cache.latest_generation()
        aff = self.affinity
        p = self.pos.get(host) if self.nodes is not None else None
        if aff is not None and aff.scores is not None:
            node = None if p is None or self.nodes is None else self.nodes[p].node
            if node is None:
                aff.scores = None
            else:
                aff.add(pod, pod_info, node)
        soft = self.soft
        if soft is not None:
            if p is None or self.nodes is None or soft.nodes is not self.nodes:
                self.soft = None
            else:
                soft.placed_on(p, aff is not None and aff.scores is not None)
        tracked = self.tracked
        if tracked is None or self.nodes is None:
            return
        if p is None:
            self.tracked = None
            return
        ni = self.nodes[p]
        st = self.fwk.run_pre_filter_extension_add_pod(tracked, pod, pod_info, ni)
        if st is not None and st.code != Code.Success:
            self.tracked = None
            return
        recount_critical_paths(tracked)
        self.sigs.touched.append(ni)

    def forget(self) -> None:
        """A replica went through the ordinary path: the tracked state is stale."""
        self.tracked = None
        self.sigs.fingerprint = None  # its node was not noted: recompute every signature
        self.soft = None
        if self.affinity is not None:
            self.affinity.scores = None

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
        changed: list[str] | None = None
        others: list[int] = []
        if self.nodes is not None:
            changed = cache.changed_since(self.seen_generation)
            if nodes is not self.nodes or changed:
                others = self._others(snapshot, nodes, changed)
                if self.nodes is None:
                    return None  # a node's labels changed: start over, this pod the ordinary way
        reuse = (
            self.reusable
            and pod.spec is self.spec
            and not snapshot.have_pods_with_affinity_node_info_list
            and not snapshot.have_pods_with_required_anti_affinity_node_info_list
        )
        if reuse and self.state is not None:
            state, filters = self.state, self.filters
        elif not reuse and self.tracked is not None and pod.spec is self.spec:
            state, filters = shallow_copy(self.tracked), self.filters
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
                if name not in NODE_LOCAL_PLUGINS and name not in SIGNATURE_FILTERS:
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
                state = shallow_copy(state)
        order = tuple(name for name, _fn in filters)
        dirty: list[str] | None = None  # everything
        if (
            nodes is not self.nodes
            and self.nodes is not None
            and order == self.filter_order
            and self._follow(snapshot, nodes)
        ):
            dirty = changed
        elif nodes is not self.nodes or order != self.filter_order:
            self.nodes = nodes
            self.filter_order = order
            self.pos = snapshot.positions
            self.label_refs = _label_refs(nodes)
            self.loc = bytearray(n)
            self.unscored = set(range(n))
            self.tot = [0] * n
            self.cols = []
            self.plan = None
            self.sigs = Signatures()
            self.soft = None
        else:
            dirty = changed  # (the same node list: ``changed`` was read above)
        if others and self.soft is not None and self.soft.spread is not None:
            for p in others:  # (none is left after a rebuild: its counts are fresh)
                self.soft.spread.recount(p, nodes[p])
        self.seen_generation = cache.latest_generation()
        self.mine = {}
        if not self._refresh(state, pod, nodes, dirty):
            self.nodes = None  # some changed nodes were not refreshed: all of them next time
            return None
        mask: bytes | bytearray = self.loc
        if self.other_filters:
            sigs = self.sigs
            if not sigs.update(state, pod, nodes, self.other_filters):
                self.disabled = sigs.unsupported
                return None
            mask = sigs.mask(self.loc, self.loc_changed)
        self.loc_changed = []
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
        found: Sequence[int]
        if offset + want <= n and mask.find(0, offset, offset + want) < 0:
            found = range(offset, offset + want)  # a run of feasible nodes
        elif m * 8 >= n:  # dense: compress walks the bytes at C speed
            walk = chain(
                compress(range(offset, n), mask[offset:]), compress(range(offset), mask[:offset])
            )
            found = list(islice(walk, want))
        else:  # sparse: find skips the runs of rejected nodes
            found = positions(mask, offset, n, want)
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
            chosen = self._score_and_select(state, pod, nodes, window, reuse, mask)
            if chosen is None:
                return None
            host = chosen
        alg.next_start_node_index = (offset + processed) % n
        return host

    def follows_cheaply(self) -> bool:
        """Whether what this path keeps follows a node removal at C speed: not while the
        signature filters judge nodes (their signatures are rebuilt) or InterPodAffinity
        scores (its per-node weights are rebuilt), which cost a pass over every node in
        Python after each removal."""
        if self.other_filters:
            return False
        plan = self.plan
        return plan is None or all(
            plan.plugins[j].name != "InterPodAffinity" for j in plan.window
        )

    def _others(self, snapshot: Any, nodes: list[Any], changed: list[str]) -> list[int]:
        """Positions (in ``nodes``) of the nodes someone else changed since the last replica
        (a drain, a pod scheduled the ordinary way): what this path carried from replica to
        replica about other pods is dropped (the tracked PreFilter state, the kept PreScore,
        the signature verdicts, InterPodAffinity's weights) and is worked out again. A node
        whose labels changed (or without its Node) makes the whole path start over
        (``nodes`` set to None)."""
        pos = snapshot.positions
        mine, refs = self.mine, self.label_refs
        out: list[int] = []
        for name in changed:
            p = pos.get(name)
            if p is None:
                continue
            ni = nodes[p]
            if ni.generation == mine.get(name):
                continue
            node = ni.node
            labels = None if node is None else node.metadata.labels
            ref = refs.get(name)
            if labels is not ref:
                if labels is None or ref is None or labels != ref:
                    self.nodes = None
                    out = []
                    break
                refs[name] = labels
            out.append(p)
        if self.nodes is None:
            self.labels = None  # (kept per node list, which a label change does not renew)
            self.soft = None
            self.state = None
        if out or nodes is not self.nodes:
            self.tracked = None
            self.prescore_kept = None
            self.sigs.fingerprint = None
            if self.affinity is not None:
                self.affinity.scores = None
        return out

    def _follow(self, snapshot: Any, nodes: list[Any]) -> bool:
        """The node list lost some nodes since the last replica (nothing else came): every
        kept column follows its nodes to their new positions (picked at C speed), the
        removed nodes' pods leave the spread counts; False when it is not a loss of nodes
        (the caller rebuilds everything)."""
        old = self.nodes
        assert old is not None
        src = snapshot.survivors_of(self.pos)
        if src is None:
            return False
        pick = itemgetter(*src)
        now = snapshot.positions
        removed = gone_positions(src, len(old))

        def follow_set(positions: set[int]) -> set[int]:
            return follow_positions(positions, src, old, now)

        self.loc = bytearray(pick(self.loc))
        self.loc_changed = None
        self.unscored = follow_set(self.unscored)
        self.tot = list(pick(self.tot))
        cols = [list(pick(c)) for c in self.cols]
        columns = {id(o): c for o, c in zip(self.cols, cols, strict=True)}
        self.cols = cols
        if self.labels is not None:
            labels = LabelColumns(nodes)
            labels.cols = {key: list(pick(col)) for key, col in self.labels.cols.items()}
            self.labels = labels
        self.sigs = Signatures()
        soft = self.soft
        if soft is not None:
            if soft.spread is not None:
                soft.spread.follow(pick, removed)
            if self.labels is None or not soft.follow(nodes, pick, follow_set, columns, self.labels):
                self.soft = None
        self.nodes = nodes
        self.pos = snapshot.positions
        return True

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
        if dirty is None:
            self.loc_changed = None
        else:
            if self.loc_changed is not None:
                self.loc_changed.extend(targets)
            if self.soft is not None:
                self.soft.changed(targets)
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
            if pl.name not in skip or pl.name not in SIGNATURE_FILTERS:
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

    def _other_pre_score(
        self, state: CycleState, pod: Pod, nodes: list[Any], feasible: Sequence[int],
        window: list[Any] | None, skip: set[str],
    ) -> tuple[bool, list[Any] | None]:
        """The PreScore plugins that are not node-local, InterPodAffinity's state carried
        over from the previous replica once it has run (see ``AffinityScores``), and
        PodTopologySpread's constraints kept once known (see ``soft``); whether they
        succeeded, and the window's NodeInfos when they were needed."""
        aff = self.affinity
        soft = self._soft(nodes) if pod.spec is self.spec else None
        for pl in self.other_pre_score:
            if aff is not None and pl is aff.plugin:
                if aff.scores is not None:
                    if not aff.scores:
                        skip.add(pl.name)  # its PreScore skips while no pair is scored
                    elif soft is None:  # else scored per soft key: no PreScore state is read
                        aff.write(state)
                    continue
                if window is None:
                    window = list(itemgetter(*feasible)(nodes))
                if not _run_pre_score(state, pod, window, [pl], skip):
                    return False, window
                if pod.spec is self.spec:
                    try:
                        if pl.name not in skip:
                            aff.start(state, pod)
                        elif not (aff.plugin.args.ignore_preferred_terms_of_existing_pods
                                  and not has_preferred_terms(pod)):
                            aff.start_empty(pod)  # skipped: no pair scored yet
                    except Exception:
                        aff.scores = None  # the plugin's PreScore runs again
                continue
            if soft is not None and isinstance(pl, PodTopologySpread):
                if soft.spread is not None:
                    continue  # scored per soft key: no PreScore state is read
                if soft.spread_skips:
                    skip.add(pl.name)
                    continue
                # PreScore's constraints and key requirement, the same for every replica (from
                # the pod's spec and labels and objects the loop does not change).
                try:
                    constraints = pl.get_constraints(pod, SCHEDULE_ANYWAY)
                except Exception:
                    constraints = None
                if constraints is not None and nodes:
                    if not constraints:
                        soft.spread_skips = True
                        skip.add(pl.name)
                        continue
                    require_all = bool(pod.spec.topology_spread_constraints) or not pl.system_defaulted
                    soft.spread = SpreadTerms(
                        tuple(constraints), require_all, pod, nodes, self._labels(nodes)
                    )
                    continue
            if window is None:
                window = list(itemgetter(*feasible)(nodes))
            if not _run_pre_score(state, pod, window, [pl], skip):
                return False, window
        return True, window

    def _labels(self, nodes: list[Any]) -> LabelColumns:
        """The label columns of this node list."""
        if self.labels is None or self.labels.nodes is not nodes:
            self.labels = LabelColumns(nodes)
        return self.labels

    def _soft(self, nodes: list[Any]) -> SoftScores | None:
        """The soft-rule scores for this node list (None: some node has no Node object)."""
        soft = self.soft
        if soft is None or soft.nodes is not nodes:
            soft = self.soft = SoftScores(nodes)
        return soft if soft.supported else None

    def _plan(self, state: CycleState, n: int, reuse: bool) -> ScorePlan | None:
        """The score plugins that run for this replica, their weights and extensions (kept
        while the skipped set is the same); None when one can be neither cached per node
        nor scored on the window (a custom plugin)."""
        skip = frozenset(state.skip_score_plugins)
        plan = self.plan
        if plan is not None and plan.skip == skip:
            return plan
        plugins = [pl for pl in self.fwk.score_plugins if pl.name not in skip]
        for pl in plugins:
            if pl.name in NODE_LOCAL_PLUGINS:
                continue
            if pl.name not in SIGNATURE_FILTERS:
                self.disabled = True
                return None
            if reuse:
                # E.g. system-default spreading (a Service selects the pods): the PreScore
                # state is not the same for every replica. This replica scores on its window
                # with the PreScore it just ran; the next ones keep their own states.
                self.reusable = False
        plan = self.plan = ScorePlan(skip, plugins, self.fwk.score_weights)
        order = tuple(plugins[j].name for j in plan.local)
        if order != self.score_order or len(self.cols) != len(plan.normalized):
            self.score_order = order
            self.unscored = set(range(n))
            self.ext_seen = [set() for _ in plan.normalized]
            self.cols = [[0] * n for _ in plan.normalized]
        return plan

    def _score_batch(self, state: CycleState, pod: Pod, nodes: list[Any], todo: list[int]) -> bool:
        """The node-local raw scores of many unscored positions at once, through each
        plugin's batch ``score_nodes`` when it has one (it gives what ``score`` gives node
        by node); False to take the ordinary path (an error or an invalid score)."""
        plan = self.plan
        assert plan is not None
        tnodes = list(itemgetter(*todo)(nodes)) if len(todo) > 1 else [nodes[todo[0]]]
        raws: dict[int, list[int]] = {}
        try:
            for j in plan.local:
                pl = plan.plugins[j]
                batch = getattr(pl, "score_nodes", None)
                if batch is not None:
                    vals, st = batch(state, pod, tnodes)
                    if st is not None and st.code != Code.Success:
                        return False
                else:
                    fn = pl.score
                    vals = []
                    for ni in tnodes:
                        sc, st = fn(state, pod, ni)
                        if st is not None and st.code != Code.Success:
                            return False
                        vals.append(sc)
                if len(vals) != len(tnodes):
                    return False
                raws[j] = list(vals)
        except Exception:
            return False
        totals = [0] * len(todo)
        for j in plan.plain:
            vals = raws[j]
            if min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE:
                return False  # the ordinary path reports the invalid score
            w = plan.weights[j]
            totals = list(map(add, totals, vals if w == 1 else map(w.__mul__, vals)))
        tot = self.tot
        for p, t in zip(todo, totals, strict=True):
            tot[p] = t
        for idx, j in enumerate(plan.normalized):
            col = self.cols[idx]
            vals = raws[j]
            for p, v in zip(todo, vals, strict=True):
                col[p] = v
            self.ext_seen[idx].update(vals)
        self.unscored.difference_update(todo)
        # A set keeps its table when it shrinks, and iterating it walks the whole table:
        # a compact copy keeps iterating the few positions left cheap.
        self.unscored = set(self.unscored)
        return True

    def _score_and_select(
        self, state: CycleState, pod: Pod, nodes: list[Any], feasible: Sequence[int], reuse: bool,
        mask: bytes | bytearray,
    ) -> str | None:
        fwk, alg = self.fwk, self.fork.algorithm
        k = len(feasible)
        window: list[Any] | None = None
        totals: Any
        if not fwk.has_score_plugins():
            totals = (1,) * k
        else:
            kept = self.prescore_kept
            if reuse and self.prescored:
                pass
            elif kept is not None and not reuse:
                state.update(kept[0])
                state.skip_score_plugins = set(kept[1])
            elif not reuse:
                # The node-local PreScore plugins store what they derive from the pod's spec:
                # run once, their writes are kept; the others run for every replica.
                before = dict(state)
                local = self.local_prescore
                if local is None:
                    window = list(itemgetter(*feasible)(nodes))
                    skip: set[str] = set()
                    if not _run_pre_score(state, pod, window, self.local_pre_score, skip):
                        return None
                    written = {k: v for k, v in state.items() if before.get(k, GONE) is not v}
                    local = self.local_prescore = (written, frozenset(skip))
                else:
                    state.update(local[0])
                    skip = set(local[1])
                ok, window = self._other_pre_score(state, pod, nodes, feasible, window, skip)
                state.skip_score_plugins = skip
                if not ok:
                    return None
                if self._prescore_stable(state):
                    written = {k: v for k, v in state.items() if before.get(k, GONE) is not v}
                    self.prescore_kept = (written, frozenset(state.skip_score_plugins))
            else:  # the reused state: PreScore once, for the first replica that needs it
                window = list(itemgetter(*feasible)(nodes))
                st = fwk.run_pre_score_plugins(state, pod, window)
                if st is not None and st.code != Code.Success:
                    return None
            plan = self._plan(state, len(nodes), reuse)
            if plan is None:
                return None
            self.prescored = reuse and not plan.window
            weights, plain, normalized = plan.weights, plan.plain, plan.normalized
            ext_seen, cols = self.ext_seen, self.cols
            tot = self.tot
            unscored = self.unscored
            if unscored:
                n = len(nodes)
                if len(unscored) * 8 < k:
                    # The window is every feasible position from its first to its last,
                    # circularly: a few unscored positions are checked against that span.
                    first = feasible[0]
                    span = (feasible[-1] - first) % n
                    todo: Any = [p for p in unscored if mask[p] and (p - first) % n <= span]
                else:
                    todo = unscored.intersection(feasible)
                if len(todo) >= _BATCH and not self._score_batch(state, pod, nodes, list(todo)):
                    return None
                fns = plan.fns
                nplug = len(plan.plugins)
                for p in todo if len(todo) < _BATCH else ():
                    ni = nodes[p]
                    raw = [0] * nplug
                    for j, fn in fns:
                        sc, sst = fn(state, pod, ni)
                        if sst is not None and sst.code != Code.Success:
                            return None
                        raw[j] = sc
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
                if self.soft is not None and todo:
                    self.soft.rescored(todo)
            pick = picker(feasible)
            constant = plan.constant
            varying: list[tuple[int, int]] = []
            for idx, j in enumerate(normalized):
                seen = ext_seen[idx]
                if len(seen) == 1:
                    raw0 = next(iter(seen))
                    same = constant.get((j, raw0))
                    if same is None:
                        same = constant[(j, raw0)] = constant_normalization(
                            plan.exts[j], state, pod, raw0
                        )
                    if same:
                        # Every node scored so far has the same raw score, so every node of
                        # the window gets the same normalized score: no effect on the choice.
                        continue
                varying.append((idx, j))
            spread_weight = affinity_weight = 0
            rest = plan.window
            if rest:
                self._labels(nodes)
                spread_weight, affinity_weight, rest = self._soft_split(plan, pod, nodes)
            soft = self.soft
            aff = self.affinity
            aff_scores = aff.scores if affinity_weight and aff is not None else None
            if (spread_weight or affinity_weight or varying) and not rest:
                local_cols = self._local_columns(plan, varying, state, pod)
                if soft is None and pod.spec is self.spec:
                    soft = self._soft(nodes)
                if local_cols is not None and soft is not None:
                    keyed = soft.keyed(
                        aff_scores, self._labels(nodes), tot, pick, k, spread_weight,
                        affinity_weight, local_cols, _KEYED,
                    )
                    if keyed is not None:
                        return select_by_keys(keyed[0], keyed[1], feasible, nodes, alg)
            totals = pick(tot)
            for idx, j in varying:
                vals = list(pick(cols[idx]))
                ext = plan.exts[j]
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
            if spread_weight or affinity_weight:
                assert soft is not None
                svals = soft.scores(
                    aff_scores, self.labels, pick, k, spread_weight, affinity_weight
                )
                if svals is not None:
                    totals = list(map(add, totals, svals))
            if rest:
                assert self.labels is not None
                for j in rest:
                    if window is None:
                        window = list(itemgetter(*feasible)(nodes))
                    wvals = window_scores(
                        plan.plugins[j], plan.exts[j], state, pod, window, feasible, self.labels
                    )
                    if wvals is None:
                        return None
                    w = weights[j]
                    if w != 1:
                        wvals = list(map(w.__mul__, wvals))
                    totals = list(map(add, totals, wvals))
        # SchedulingAlgorithm.select_host, on the same totals and random source.
        best = max(totals)
        if alg.deterministic:
            return str(min(nodes[p].name for p, t in zip(feasible, totals, strict=True) if t == best))
        ties = totals.count(best)
        if ties == 1:
            return str(nodes[feasible[totals.index(best)]].name)
        r = alg.rng.randrange(ties)
        if ties == k:
            return str(nodes[feasible[r]].name)
        # The r-th best position, scanning from the nearer end.
        if r * 2 < ties:
            at = next(islice(compress(count(), map(best.__eq__, totals)), r, None))
        else:
            back = next(islice(compress(count(), map(best.__eq__, reversed(totals))), ties - 1 - r, None))
            at = k - 1 - back
        return str(nodes[feasible[at]].name)

    def _local_columns(
        self, plan: ScorePlan, varying: list[tuple[int, int]], state: CycleState, pod: Pod
    ) -> list[LocalColumn] | None:
        """The varying normalized node-local columns for ``SoftScores.keyed``; None when one
        of them normalizes otherwise than value by value (only in-tree normalizers that
        scale by the highest score are known to)."""
        out: list[LocalColumn] = []
        for idx, j in varying:
            pl = plan.plugins[j]
            if pl.name not in _VALUEWISE_NORMALIZE:
                return None
            out.append((self.cols[idx], _normalizer(plan.exts[j], state, pod), plan.weights[j]))
        return out

    def _soft_split(
        self, plan: ScorePlan, pod: Pod, nodes: list[Any]
    ) -> tuple[int, int, list[int]]:
        """PodTopologySpread's and InterPodAffinity's weights when they are scored per soft
        key (0: not), and the window plugins scored on the window."""
        soft = self.soft
        if soft is None or soft.nodes is not nodes or not soft.supported or pod.spec is not self.spec:
            return 0, 0, plan.window
        aff = self.affinity
        spread_weight = affinity_weight = 0
        rest: list[int] = []
        for j in plan.window:
            pl = plan.plugins[j]
            if pl.name == "PodTopologySpread" and soft.spread is not None:
                spread_weight = plan.weights[j]
            elif aff is not None and pl is aff.plugin and aff.scores is not None:
                affinity_weight = plan.weights[j]
            else:
                rest.append(j)
        return spread_weight, affinity_weight, rest


_VALUEWISE_NORMALIZE = frozenset({"NodeAffinity", "TaintToleration"})
"""Node-local plugins whose NormalizeScore maps each raw score by the highest raw score of
the window alone (default_normalize_score): normalizing the distinct raw scores of the
window gives each its score."""


def _normalizer(ext: Any, state: CycleState, pod: Pod) -> Any:
    """A plugin's NormalizeScore over a plain list of raw scores (None: an error)."""

    def normalize(vals: list[int]) -> list[int] | None:
        vals = list(vals)
        fast = getattr(ext, "normalize_score_values", None)
        if fast is not None:
            st = fast(state, pod, vals)
        else:
            scores = [NodeScore("", v) for v in vals]
            st = ext.normalize_score(state, pod, scores)
            vals = [ns.score for ns in scores]
        if st is not None and st.code != Code.Success:
            return None
        return vals

    return normalize


def picker(feasible: Sequence[int]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """A function taking the window's positions from a column, in window order (a slice
    when the window is a run of positions)."""
    if type(feasible) is range and feasible.step == 1:
        start, stop = feasible.start, feasible.stop
        return lambda col: col[start:stop]
    if len(feasible) == 1:
        only = feasible[0]
        return lambda col: (col[only],)
    return itemgetter(*feasible)


def select_by_keys(
    keys: Sequence[int], table: dict[int, int], feasible: Sequence[int], nodes: list[Any],
    alg: Any,
) -> str:
    """SchedulingAlgorithm.select_host on the window's nodes, each scored ``table[key]`` by
    its key: the same highest score, ties and random draw as on the totals themselves."""
    best = max(table.values())
    top = [c for c, t in table.items() if t == best]
    if isinstance(keys, (bytes, bytearray)) and not alg.deterministic:
        # Keys of one byte: the best nodes marked by a translation, counted and found at
        # C speed.
        marks = bytearray(256)
        for c in top:
            marks[c] = 1
        best_at = keys.translate(marks)
        ties = best_at.count(1)
        if ties == 1:
            return str(nodes[feasible[best_at.index(1)]].name)
        r = alg.rng.randrange(ties)
        k = len(keys)
        if ties == k:
            return str(nodes[feasible[r]].name)
        if r * 2 < ties:
            at = next(islice(compress(count(), best_at), r, None))
        else:
            at = k - 1 - next(islice(compress(count(), reversed(best_at)), ties - 1 - r, None))
        return str(nodes[feasible[at]].name)
    if alg.deterministic:
        chosen = set(top)
        return str(min(nodes[p].name for p, c in zip(feasible, keys, strict=True) if c in chosen))
    k = len(keys)
    one = top[0] if len(top) == 1 else None
    ties = keys.count(one) if one is not None else sum(map(keys.count, top))
    if ties == 1:
        at = keys.index(one) if one is not None else next(
            compress(count(), map(set(top).__contains__, keys))
        )
        return str(nodes[feasible[at]].name)
    r = alg.rng.randrange(ties)
    if ties == k:
        return str(nodes[feasible[r]].name)
    is_top = one.__eq__ if one is not None else set(top).__contains__
    # The r-th best position, scanning from the nearer end.
    if r * 2 < ties:
        at = next(islice(compress(count(), map(is_top, keys)), r, None))
    else:
        back = next(islice(compress(count(), map(is_top, reversed(keys))), ties - 1 - r, None))
        at = k - 1 - back
    return str(nodes[feasible[at]].name)


def _label_refs(nodes: list[Any]) -> dict[str, Any]:
    """Each node's labels mapping by node name (None without a Node)."""
    return {ni.name: None if ni.node is None else ni.node.metadata.labels for ni in nodes}


def has_preferred_terms(pod: Pod) -> bool:
    """Whether the pod has preferred pod affinity or anti-affinity terms (InterPodAffinity's
    PreScore skips pods without them when existing pods' preferred terms are ignored)."""
    aff = pod.spec.affinity
    if aff is None:
        return False
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    return bool((pa is not None and pa.preferred) or (paa is not None and paa.preferred))


def _run_pre_score(
    state: CycleState, pod: Pod, window: list[Any], plugins: list[Any], skip: set[str]
) -> bool:
    """These PreScore plugins in order, as the framework runs them (a Skip noted in
    ``skip``); False on an error, which the ordinary path reports."""
    for pl in plugins:
        try:
            st = pl.pre_score(state, pod, window)
        except Exception:
            return False
        if st is not None and st.code == Code.Skip:
            skip.add(pl.name)
        elif st is not None and st.code != Code.Success:
            return False
    return True


class ScorePlan:
    """The score plugins of a replica's cycle (those not skipped), in order, with their
    weights, Score functions and score extensions: the node-local ones (raw scores cached
    per node; ``plain`` without and ``normalized`` with NormalizeScore) and the ``window``
    ones (PodTopologySpread, InterPodAffinity: scored on each replica's window)."""

    __slots__ = (
        "skip", "plugins", "weights", "fns", "exts", "local", "plain", "normalized", "window",
        "constant",
    )

    def __init__(self, skip: frozenset[str], plugins: list[Any], weights: dict[str, int]) -> None:
        self.skip = skip
        self.plugins = plugins
        self.weights = [weights[pl.name] for pl in plugins]
        self.exts = [pl.score_extensions() for pl in plugins]
        self.local = [j for j, pl in enumerate(plugins) if pl.name in NODE_LOCAL_PLUGINS]
        self.window = [j for j, pl in enumerate(plugins) if pl.name not in NODE_LOCAL_PLUGINS]
        self.fns = [(j, plugins[j].score) for j in self.local]
        self.plain = [j for j in self.local if self.exts[j] is None]
        self.normalized = [j for j in self.local if self.exts[j] is not None]
        self.constant: dict[tuple[int, int], bool] = {}
        """Per (plugin index, raw score): whether normalizing equal raw scores gives equal
        valid scores (node-local normalizers read only the scores)."""


def positions(mask: bytes | bytearray, offset: int, n: int, want: int) -> list[int]:
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


def recount_critical_paths(state: CycleState) -> None:
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
        if len(counts) <= SMALL:
            for value, num in counts.items():
                p.update(value, num)
        elif counts:
            low = min(counts, key=counts.__getitem__)  # the first minimum, as the scan keeps
            p.values[0], p.nums[0] = low, counts[low]
        paths.append(p)
    s.critical_paths = paths
    s.refresh_checks()


def shallow_copy(state: CycleState) -> CycleState:
    """A new CycleState holding the same plugin states (a new cycle's identity for plugins
    that key caches on it; the PreFilter data itself is shared with the tracked state)."""
    c = CycleState()
    c.update(state)
    c.skip_filter_plugins = state.skip_filter_plugins
    return c



def constant_normalization(ext: Any, state: CycleState, pod: Pod, raw: int) -> bool:
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

