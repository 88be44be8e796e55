"""PodTopologySpread PreScore/Score/NormalizeScore: prefer nodes whose domains hold fewer
matching pods, each constraint weighted by log(number of its domains + 2)
(podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import attrgetter, is_, methodcaller
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.framework.node_local_cache import PositionMarks
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    LabelMatcher,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)
from kschedlib.plugins.podtopologyspread.counting import (
    NodeShares,
    ScoreKeyTable,
    SpreadCounter,
)

INVALID_SCORE = -1

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_HALF_SQRT2 = 7.07106781186547524401e-01
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01


def go_log(x: float) -> float:
    """Go's math.Log, bit for bit (the FreeBSD algorithm Go runs on amd64); the C library's
    log differs in the last bit for some inputs, e.g. 3."""
    if not (x > 0.0 and math.isfinite(x)):
        return math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2.0
        ki -= 1
    f = f1 - 1.0
    k = float(ki)
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    """The weight of a constraint with ``size`` domains: log(size + 2), so that counts in
    small topologies are not watered down by big ones."""
    return go_log(float(size + 2))


def go_round(x: float) -> float:
    """math.Round: half away from zero."""
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


class PreScoreState:
    """The ScheduleAnyway constraints, the filtered nodes left out of scoring (missing a
    topology key), matching pods per topology value and each constraint's weight."""

    __slots__ = (
        "constraints",
        "ignored_nodes",
        "tp_value_to_pod_counts",
        "weights",
        "batch",
        "node_refs",
        "node_values",
        "node_shares",
        "score_keys",
        "readings",
    )

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint],
        ignored_nodes: set[str],
        tp_value_to_pod_counts: list[dict[str, int]],
        weights: list[float],
    ) -> None:
        self.constraints = tuple(constraints)
        self.ignored_nodes = ignored_nodes
        self.tp_value_to_pod_counts = tp_value_to_pod_counts
        self.weights = weights
        # The last score_nodes result and its ignored nodes' positions, for
        # normalize_score_values (which gets the scores without the node names).
        self.batch: tuple[list[int], list[int]] | None = None
        # One zone-like constraint: the filtered nodes' Node objects and their topology
        # values (None: no node or no label) as PreScore read them, for score_nodes over
        # the same nodes.
        self.node_refs: list[Node | None] | None = None
        self.node_values: list[str | None] = []
        # The counter's per-node shares count_domains added up (hostname counts are taken
        # from them at Score when kept for the same NodeInfo and generation).
        self.node_shares: NodeShares | None = None
        # NodeInfo generation -> what score_nodes reads of that node (see _score_key), kept
        # across cycles by the counter for the pod's namespace and constraints (None: none).
        self.score_keys: dict[int, Any] | None = None
        # The filtered nodes (the list PreScore got), the identity of what Score reads of
        # each (see _score_key) and those readings, each once (by identity), when PreScore
        # took them from ``score_keys`` (None: not taken).
        self.readings: tuple[Sequence[NodeInfo], list[int], list[Any]] | None = None

    def clone(self) -> PreScoreState:
        return self


def init_pre_score_state(
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> PreScoreState:
    """Note the filtered nodes to ignore and the topology values of the scored ones, and
    weigh each constraint by its number of domains among them."""
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    keys = [c.topology_key for c in constraints]
    if len(keys) == 1 and keys[0] != LABEL_HOSTNAME:
        return _init_single(constraints[0], filtered_nodes, require_all_topologies)
    # Per-node counts (hostname) are taken at Score: no domains to note for them.
    counted = [(counts[i], key) for i, key in enumerate(keys) if key != LABEL_HOSTNAME]
    refs = None if require_all_topologies else list(map(_node_of, filtered_nodes))
    visit: Sequence[NodeInfo] = filtered_nodes
    if refs is not None and not any(map(is_, refs, repeat(None))):
        # The loop below without a step per node: every node counts, values first seen first.
        labels_of = list(map(_labels_of, refs))
        for m, key in counted:
            m.update(dict.fromkeys(map(methodcaller("get", key, ""), labels_of), 0))
        visit = ()
    for ni in visit:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies:
            for key in keys:
                if key not in labels:
                    break
            else:
                for m, key in counted:
                    m[labels[key]] = 0
                continue
            ignored.add(node.metadata.name)
            continue
        for m, key in counted:
            m[labels.get(key, "")] = 0
    weights: list[float] = []
    for i, c in enumerate(constraints):
        size = len(counts[i])
        if c.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(ignored)
        weights.append(topology_normalizing_weight(size))
    return PreScoreState(constraints, ignored, counts, weights)


_node_of = attrgetter("node")
_labels_of = attrgetter("metadata.labels")


def _init_single(
    c: SpreadConstraint, filtered_nodes: Sequence[NodeInfo], require_all_topologies: bool
) -> PreScoreState:
    """init_pre_score_state for one constraint whose key is not the hostname, noting each
    node's value for score_nodes."""
    key = c.topology_key
    refs: list[Node | None] = list(map(_node_of, filtered_nodes))
    values: list[str | None]
    if any(map(is_, refs, repeat(None))):  # (by identity: ``in`` would call Node.__eq__)
        values = [None if n is None else n.metadata.labels.get(key) for n in refs]
    else:
        values = list(map(methodcaller("get", key), map(_labels_of, refs)))
    m: dict[str, int] = dict.fromkeys(values, 0)  # type: ignore[arg-type]
    ignored: set[str] = set()
    if None in m:
        del m[None]  # type: ignore[arg-type]
        # Nodes without the label: ignored when every key is required, else counted in "".
        for n, value in zip(refs, values, strict=True):
            if n is not None and value is None:
                if require_all_topologies:
                    ignored.add(n.metadata.name)
                else:
                    m[""] = 0
    s = PreScoreState((c,), ignored, [m], [topology_normalizing_weight(len(m))])
    s.node_refs = refs
    s.node_values = values
    return s


def pre_score_state(
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    pod: Pod,
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    counter: SpreadCounter | None = None,
    lister: Any = None,
) -> PreScoreState:
    """init_pre_score_state and count_domains in one. With a hostname constraint, every key
    optional and the counter's totals at hand, the domains of the filtered nodes are taken
    from what Score reads of each node (kept per NodeInfo generation): the same state, with
    those readings kept for score_nodes, and no label looked up per node."""
    if (
        counter is None
        or require_all_topologies
        or not any(c.topology_key == LABEL_HOSTNAME for c in constraints)
    ):
        s = init_pre_score_state(constraints, filtered_nodes, require_all_topologies)
        count_domains(s, pod, all_nodes, require_all_topologies, counter, lister)
        return s
    totals = counter.totals(
        pod, constraints, all_nodes, require_all_topologies, lister, exact=False
    )
    if totals is None:
        s = init_pre_score_state(constraints, filtered_nodes, require_all_topologies)
        _count_each_node(s, pod, all_nodes, require_all_topologies)
        return s
    kept = counter.node_shares()
    table = counter.score_keys(pod.metadata.namespace, constraints)
    plan = [
        (c.topology_key, None, 0.0, c.selector if c.topology_key == LABEL_HOSTNAME else None,
         0.0, 0.0, i)
        for i, c in enumerate(constraints)
    ]
    keys = _readings(filtered_nodes, table, plan, kept, pod.metadata.namespace, lister)
    if any(map(is_, keys, repeat(_NO_NODE))):
        s = init_pre_score_state(constraints, filtered_nodes, require_all_topologies)
    else:
        # What init_pre_score_state notes, from the readings: each non-hostname value (""
        # without the label) in the order first seen, no node ignored.
        counts: list[dict[str, int]] = [{} for _ in constraints]
        # The distinct readings in first-seen order, told apart by identity (int hashes):
        # equal readings are mostly one object (_intern); two equal ones apart come out
        # the same.
        ids = list(map(id, keys))
        distinct = list(dict(zip(ids, keys, strict=True)).values())
        weights: list[float] = []
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                weights.append(topology_normalizing_weight(len(filtered_nodes)))
                continue
            m = counts[i]
            for k in distinct:
                v = k[i]
                m[v if v is not None else ""] = 0
            weights.append(topology_normalizing_weight(len(m)))
        s = PreScoreState(constraints, set(), counts, weights)
        s.readings = (filtered_nodes, ids, distinct)
    s.node_shares = kept
    s.score_keys = table
    for counts_i, total in zip(s.tp_value_to_pod_counts, totals, strict=True):
        for value in counts_i:
            counts_i[value] += total.get(value, 0)
    return s


class _ReadingMarks(PositionMarks):
    """PositionMarks whose ``readings`` column holds, for each position not dirty, what
    score_nodes reads of the node listed there (_score_key), noted for that NodeInfo."""

    __slots__ = ("readings",)

    def __init__(self) -> None:
        super().__init__()
        self.readings: list[Any] = []

    def _remap(self, pick: Callable[[Any], tuple[Any, ...]]) -> None:
        # (``values`` is unused here: only its length, kept equal to the list's, matters)
        n = len(self.values)
        if len(self.readings) == n:
            self.readings = list(pick(self.readings))
            self.values = array("q", bytes(8 * len(self.readings)))
        else:  # not noted yet: every position dirty
            super()._remap(pick)
            self.readings = [None] * len(self.values)
            self.dirty = set(range(len(self.values)))
            self._wide = True


def _window_readings(
    nodes: Sequence[NodeInfo], table: Any, snapshot: Any
) -> tuple[_ReadingMarks, int] | None:
    """The table's reading marks (brought up to date) and the position where ``nodes``
    starts in the snapshot's node list, when ``nodes`` is a round-robin run of that list
    (each the very NodeInfo listed there); None otherwise."""
    if not isinstance(table, ScoreKeyTable) or not nodes or not isinstance(nodes, list):
        return None
    positions = getattr(snapshot, "positions", None)
    if not isinstance(positions, dict):
        return None
    start = positions.get(nodes[0].name)
    if start is None:
        return None
    marks = table.marks
    if not isinstance(marks, _ReadingMarks):
        marks = table.marks = _ReadingMarks()
    if not marks.sync(snapshot, snapshot.list()) or not marks.is_window(start, nodes):
        return None
    if len(marks.readings) != len(marks.values):  # (a reset marks every position dirty)
        marks.readings = [None] * len(marks.values)
    return marks, start


def _readings(
    nodes: Sequence[NodeInfo], table: dict[int, Any], plan: Sequence[Any],
    kept: NodeShares | None, ns: str, snapshot: Any = None,
) -> list[Any]:
    """What score_nodes reads of each node (_score_key), from ``table`` by NodeInfo
    generation and noted there where missing, as score_nodes does. For a round-robin run of
    the snapshot's node list, the readings are kept by position: only the nodes the change
    log names since are read again."""
    found = None if snapshot is None else _window_readings(nodes, table, snapshot)
    if found is not None:
        marks, start = found
        readings = marks.readings
        n = len(readings)
        dirty = marks.dirty
        for o in marks.dirty_offsets(start, len(nodes)):
            ni = nodes[o]
            gen = ni.generation
            k = table.get(gen)
            if k is None:
                if len(table) > _MAX_SCORE_KEYS:
                    table.clear()
                k = table[gen] = _intern(_score_key(ni, plan, kept, ns))
            p = (start + o) % n
            readings[p] = k
            dirty.discard(p)
        end = start + len(nodes)
        return readings[start:end] if end <= n else [*readings[start:], *readings[: end - n]]
    gens = list(map(_generation_of, nodes))
    keys = list(map(table.get, gens))
    if None in keys:
        if len(table) > _MAX_SCORE_KEYS:
            table.clear()
        for i, k in enumerate(keys):
            if k is None:
                keys[i] = table[gens[i]] = _intern(_score_key(nodes[i], plan, kept, ns))
    return keys


_INTERNED: dict[Any, Any] = {}


def _intern(key: Any) -> Any:
    """One object per distinct reading (the table is bounded; dropping it only means two
    equal readings may be two objects)."""
    got = _INTERNED.get(key)
    if got is None:
        if len(_INTERNED) >= _MAX_SCORE_KEYS:
            _INTERNED.clear()
        got = _INTERNED[key] = key
    return got


def count_domains(
    s: PreScoreState,
    pod: Pod,
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    counter: SpreadCounter | None = None,
    lister: Any = None,
) -> None:
    """Add up, over all nodes, the matching pods of the topology values being scored (from
    ``counter``'s totals, kept up to date across cycles, when given)."""
    constraints = s.constraints
    totals = (
        None if counter is None
        else counter.totals(
            pod, constraints, all_nodes, require_all_topologies, lister, exact=False
        )
    )
    if totals is not None:
        assert counter is not None
        if any(c.topology_key == LABEL_HOSTNAME for c in constraints):
            s.node_shares = counter.node_shares()
            s.score_keys = counter.score_keys(pod.metadata.namespace, constraints)
        for counts, total in zip(s.tp_value_to_pod_counts, totals, strict=True):
            for value in counts:
                counts[value] += total.get(value, 0)
        return
    _count_each_node(s, pod, all_nodes, require_all_topologies)


def _count_each_node(
    s: PreScoreState, pod: Pod, all_nodes: Sequence[NodeInfo], require_all_topologies: bool
) -> None:
    """count_domains without a counter: every node's matching pods added up."""
    constraints = s.constraints
    ns = pod.metadata.namespace
    required = RequiredNodeAffinity.of(pod)
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod, node, required):
                continue
            counts = s.tp_value_to_pod_counts[i]
            value = labels.get(c.topology_key, "")
            current = counts.get(value)
            if current is None:
                continue
            counts[value] = current + count_pods_match_selector(ni.pods, c.selector, ns)


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The weighted matching-pod count of the node's domains (lower is better)."""
    node = node_info.node
    if node is None or node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    weights = s.weights
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c.selector, pod.metadata.namespace)
        else:
            cnt = s.tp_value_to_pod_counts[i].get(value, 0)
        score += cnt * weights[i] + float(c.max_skew - 1)
    return int(go_round(score))


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Map the lowest score to 100 and the others down in proportion; ignored nodes get 0."""
    ignored = s.ignored_nodes
    min_score = (1 << 63) - 1
    max_score = 0
    for ns in scores:
        if ns.name in ignored:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
        elif max_score == 0:
            ns.score = MAX_NODE_SCORE
        else:
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score


def score_nodes(s: PreScoreState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    """score_node for every node, from per-topology-value terms worked out once: the same
    float operations in the same order, so the same results."""
    ignored = s.ignored_nodes
    ns = pod.metadata.namespace
    # Per constraint: (key, value -> term, term of a value without count, selector or None).
    # A term is cnt * weight + (maxSkew - 1), as score_node adds it; hostname terms depend
    # on the node's own pods (selector given).
    plan: list[tuple[str, dict[str, float], float, LabelMatcher | None, float, float, int]] = []
    for i, c in enumerate(s.constraints):
        w = s.weights[i]
        skew = float(c.max_skew - 1)
        if c.topology_key == LABEL_HOSTNAME:
            plan.append((c.topology_key, {}, 0.0, c.selector, w, skew, i))
        else:
            terms = {v: cnt * w + skew for v, cnt in s.tp_value_to_pod_counts[i].items()}
            plan.append((c.topology_key, terms, 0 * w + skew, None, w, skew, i))
    kept = s.node_shares
    out: list[int] = []
    append = out.append
    if len(plan) == 1 and plan[0][3] is None:
        # One zone-like constraint: a node's score is a function of its value.
        key, terms, missing, _, _, _, _ = plan[0]
        by_value = {v: int(go_round(0.0 + t)) for v, t in terms.items()}
        default = int(go_round(0.0 + missing))
        refs = s.node_refs
        if (
            refs is not None
            and not ignored
            and len(refs) == len(nodes)
            and [ni.node for ni in nodes] == refs
        ):
            # The nodes PreScore read (same Node objects, so the same labels).
            get = by_value.get
            return [0 if v is None else get(v, default) for v in s.node_values]
        for ni in nodes:
            node = ni.node
            if node is None or (ignored and node.metadata.name in ignored):
                append(0)
                continue
            value = node.metadata.labels.get(key)
            append(0 if value is None else by_value.get(value, default))
        return out
    table = s.score_keys
    readings = s.readings
    if readings is not None and readings[0] is nodes and not ignored:
        # PreScore read these very nodes (see pre_score_state).
        by_id = {id(k): _score_of_key(k, plan) for k in readings[2]}
        return list(map(by_id.__getitem__, readings[1]))
    if table is not None and not ignored:
        # What each node's score reads (its values and hostname counts) is kept per NodeInfo
        # generation; the score is worked out once per distinct reading, as the loop below
        # works it out.
        keys = _readings(nodes, table, plan, kept, ns)
        by_key = {k: _score_of_key(k, plan) for k in set(keys)}
        return list(map(by_key.__getitem__, keys))
    rounded: dict[float, int] = {}
    for ni in nodes:
        node = ni.node
        if node is None or (ignored and node.metadata.name in ignored):
            append(0)
            continue
        labels = node.metadata.labels
        score = 0.0
        for key, terms, missing, selector, w, skew, ci in plan:
            value = labels.get(key)
            if value is None:
                continue
            if selector is None:
                score += terms.get(value, missing)
            else:
                cnt = None if kept is None else kept.count(ni, ci)
                if cnt is None:
                    cnt = count_pods_match_selector(ni.pods, selector, ns)
                score += cnt * w + skew
        r = rounded.get(score)
        if r is None:
            r = rounded[score] = int(go_round(score))
        append(r)
    return out


_MAX_SCORE_KEYS = 1 << 15
_generation_of = attrgetter("generation")
_NO_NODE = ("no node",)


def _score_key(ni: NodeInfo, plan: Sequence[Any], kept: NodeShares | None, ns: str) -> Any:
    """What score_nodes reads of a node: per constraint its value (None without the label),
    or for hostname constraints the matching pods (None without the label)."""
    node = ni.node
    if node is None:
        return _NO_NODE
    labels = node.metadata.labels
    out: list[Any] = []
    for key, _terms, _missing, selector, _w, _skew, ci in plan:
        value = labels.get(key)
        if value is None or selector is None:
            out.append(value)
            continue
        cnt = None if kept is None else kept.count(ni, ci)
        if cnt is None:
            cnt = count_pods_match_selector(ni.pods, selector, ns)
        out.append(cnt)
    return tuple(out)


def _score_of_key(key: Any, plan: Sequence[Any]) -> int:
    """score_node's result for a node read as ``key`` (the same float operations)."""
    if key is _NO_NODE:
        return 0
    score = 0.0
    for part, (_key, terms, missing, selector, w, skew, _ci) in zip(key, plan, strict=True):
        if part is None:
            continue
        if selector is None:
            score += terms.get(part, missing)
        else:
            score += part * w + skew
    return int(go_round(score))


def normalize_values(values: list[int], ignored: Sequence[int]) -> None:
    """normalize_scores over plain scores in node order, in place; ``ignored`` are the
    positions of the ignored nodes."""
    if not ignored:
        # Scores repeat (one per topology value): one pass to the distinct ones, then the
        # bounds and the mapping over those (what the general path below gives).
        distinct = set(values)
        if INVALID_SCORE not in distinct:
            max_score = max(0, max(distinct, default=0))
            if max_score == 0:
                values[:] = [MAX_NODE_SCORE] * len(values)
            else:
                top = max_score + min(distinct)
                table = {v: MAX_NODE_SCORE * (top - v) // max_score for v in distinct}
                values[:] = map(table.__getitem__, values)
            return
    for i in ignored:
        values[i] = INVALID_SCORE
    if ignored:
        skip = set(ignored)
        counted = [v for i, v in enumerate(values) if i not in skip]
    else:
        counted = values
    min_score = min(counted, default=(1 << 63) - 1)
    max_score = max(0, max(counted, default=0))
    if INVALID_SCORE not in values:
        if max_score == 0:
            values[:] = [MAX_NODE_SCORE] * len(values)
        else:
            top = max_score + min_score
            # Scores repeat (one per topology value): map each distinct one once.
            table = {v: MAX_NODE_SCORE * (top - v) // max_score for v in set(values)}
            values[:] = map(table.__getitem__, values)
        return
    if max_score == 0:
        values[:] = [0 if v == INVALID_SCORE else MAX_NODE_SCORE for v in values]
    else:
        top = max_score + min_score
        values[:] = [
            0 if v == INVALID_SCORE else MAX_NODE_SCORE * (top - v) // max_score for v in values
        ]
