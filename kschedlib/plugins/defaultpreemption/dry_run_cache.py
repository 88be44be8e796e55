"""Exact reuse of preemption dry runs (victim selection on one node) across attempts.

The outcome of selecting victims on a node -- the victims in order and the number of PDB
violations, or the status that makes the node no candidate -- is a pure function of:

- the NodeInfo content, named by its generation (every NodeInfo change takes a fresh,
  process-wide generation; see framework/node_local_cache.py);
- the preemptor's priority (which pods may be evicted, which nominated pods count) and its
  fragments from the Filter plugins that run, when every one of them is node-local and signs
  the pod (their verdict depends on that fragment and the NodeInfo only) and no PreFilter
  plugin that runs has AddPod/RemovePod extensions (which would change the cycle state as
  pods are removed and reprieved);
- the pods nominated to the node with at least the preemptor's priority (other than the
  preemptor itself), in nomination order: the filter counts them as running;
- the PodDisruptionBudgets (objects are never changed in place: a change is a new object).

Outcomes are kept per (priority, fragments) and node name with the generation and the
nominated pods they were computed with (the pod objects, compared by identity), and dropped
wholesale when the PDB objects change. Errors are never kept. This goes beyond
kube-scheduler (which recomputes), and gives bit-for-bit what recomputation gives.

Each table also keeps the names of the nodes whose stored outcome was found (or stored)
with the nominated pods a preemptor nominated nowhere counts there (``_Table.kept``), with
the mark of the queue's nomination log at the time: a node the log does not name since has
the same nominated pods, so the next such preemptor of that priority compares the
generation only (a preemptor nominated somewhere, which leaves itself out, stores under
other nominated pods and takes the node's name out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.api.workloads import PodDisruptionBudget
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_local_cache import NodeLocalCache, node_local_fragments
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

DEFAULT_MAX_TABLES = 16

Outcome = tuple[list[Pod], int, "Status | None"]
"""What select_victims_on_node returns: victims, PDB violations, status."""

Stored = tuple[list[Pod], int, "Status | None", Any]
"""A stored outcome as find gives it back: victims, PDB violations, status, summary."""

_Entry = tuple[
    int, tuple[Any, ...], tuple[tuple[Pod, ...], int, "Status | None"], Any, "Status | None"
]
"""(NodeInfo generation, nominated key, (victims, PDB violations, status), summary, the
status when it makes the node no candidate, else None)."""


class _Table(dict[str, "_Entry"]):
    """Stored outcomes by node name, with the names of the nodes whose outcome holds for a
    preemptor nominated nowhere as of a mark of the queue's nomination log."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        super().__init__()
        self.kept: tuple[Any, int, set[str]] | None = None
        """(the queue's NominationLog, its mark, the node names)."""


class DryRunCache:
    """Outcome tables per preemptor key (least recently used dropped beyond ``max_tables``),
    valid for one set of PDB objects."""

    __slots__ = ("_tables", "_pdbs")

    def __init__(self, max_tables: int = DEFAULT_MAX_TABLES) -> None:
        self._tables = NodeLocalCache(max_tables)
        self._pdbs: tuple[PodDisruptionBudget, ...] = ()


    def clear(self) -> None:
        self._tables.clear()
        self._pdbs = ()

    def __len__(self) -> int:
        return len(self._tables)

    def memo(
        self,
        handle: Any,
        state: CycleState,
        pod: Pod,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> DryRunMemo | None:
        """The memo of one preemption attempt, or None when its dry runs cannot be reused."""
        skip = state.skip_filter_plugins
        try:
            if handle.runs_pre_filter_extensions(state):
                return None
            running = [pl for pl in handle.filter_plugins if pl.name not in skip]
            frags = node_local_fragments(running, pod)
            nominator = handle.nominator
        except Exception:  # a handle without these, or a raising plugin: recompute
            return None
        if len(frags) != len(running):
            return None
        if len(pdbs) != len(self._pdbs) or any(
            a is not b for a, b in zip(pdbs, self._pdbs, strict=True)
        ):
            self._tables.clear()
            self._pdbs = tuple(pdbs)
        prio = pod_priority(pod)
        key = (prio, tuple(frags))
        table: _Table = self._tables.table(key, _Table)
        keyer = getattr(handle, "nominated_filter_keyer", None)
        if keyer is not None:
            names_of = getattr(handle, "nominated_node_names", None)
            names = names_of() if names_of is not None else None
            keys_of = keyer(state, pod)
            memo = DryRunMemo(
                table, prio, pod.uid, None, keys_of,
                None if names is None else names.__contains__,
            )
            memo._plain = _plain_names(table, keys_of, pod.uid)
            return memo
        copies = nominator.nominated_pods_for_node

        def keys(node_name: str) -> list[tuple[Pod, bool]]:
            return [(pi.pod, pi.pod_level) for pi in copies(node_name)]

        return DryRunMemo(table, prio, pod.uid, keys)


def _plain_names(table: _Table, keys: Any, uid: str) -> set[str] | None:
    """The names of the nodes whose stored outcome holds as found, for a preemptor (``uid``)
    nominated nowhere; None for a preemptor nominated somewhere or a keyer without a log.
    Takes the table's kept names forward to the log's current mark."""
    log = getattr(keys, "log", None)
    is_nominated = getattr(keys, "is_nominated", None)
    if log is None or is_nominated is None or is_nominated(uid):
        return None
    names: set[str] | None = None
    kept = table.kept
    if kept is not None and kept[0] is log:
        changed = log.since(kept[1])
        if changed is not None:
            names = kept[2]
            names.difference_update(changed)
    if names is None:
        names = set()
    table.kept = (log, log.mark(), names)
    return names


class DryRunMemo:
    """Stored dry-run outcomes for one preemption attempt's preemptor."""

    __slots__ = ("_table", "_prio", "_uid", "_nominated_for", "_keyer", "_nominated_at",
                 "_plain")

    def __init__(
        self, table: dict[str, _Entry], prio: int, uid: str, nominated_for: Any,
        keyer: Any = None, nominated_at: Any = None,
    ) -> None:
        self._table = table
        self._prio = prio
        self._uid = uid
        self._nominated_for = nominated_for
        self._keyer = keyer
        # node name -> whether any pod is nominated there (the keyer gives () elsewhere)
        self._nominated_at = nominated_at
        self._plain: set[str] | None = None
        """The nodes whose stored outcome holds as found (see ``_plain_names``), for a
        preemptor nominated nowhere."""

    def nominated_key(self, node_name: str) -> tuple[Any, ...]:
        """The pods nominated to the node that the filter counts as running (identity and
        whether pod-level requests count), the objects kept alive by the stored key."""
        if self._keyer is not None:
            return self._keyer(node_name)  # type: ignore[no-any-return]
        prio, uid = self._prio, self._uid
        out: list[Any] = []
        for p, level in self._nominated_for(node_name):
            if p.uid != uid and pod_priority(p) >= prio:
                out.append((p, level))
        return tuple(out)

    def parts(self) -> tuple[dict[str, _Entry], Any, Any, set[str] | None] | None:
        """The stored outcomes, the keyer, the nominated-node test and the nodes whose
        stored outcome holds as found when its generation is the node's (or None), for a
        caller that inlines ``find`` (None when there is no keyer: call ``find``). The
        caller adds a node it found a stored outcome for to those nodes."""
        if self._keyer is None:
            return None
        return self._table, self._keyer, self._nominated_at, self._plain

    def find(self, node_info: NodeInfo) -> tuple[tuple[Any, ...], Stored | None]:
        """The node's nominated key, and the outcome stored for the node's generation with
        that key (a fresh list of victims) with the summary stored with it, or None."""
        name = node_info.name
        keyer = self._keyer
        if keyer is None:
            nominated = self.nominated_key(name)
        elif self._nominated_at is None or self._nominated_at(name):
            nominated = keyer(name)
        else:
            nominated = ()
        e = self._table.get(name)
        if e is None or e[0] != node_info.generation or e[1] != nominated:
            return nominated, None
        victims, num_violations, status = e[2]
        return nominated, ([*victims] if victims else [], num_violations, status, e[3])

    def store(
        self, node_info: NodeInfo, nominated: tuple[Any, ...], outcome: Outcome,
        summary: Any = None,
    ) -> None:
        """Keep ``outcome`` (never an error) and a ``summary`` of it that depends on the
        victims only, given back by find."""
        victims, num_violations, status = outcome
        if status is not None and status.code == Code.Error:
            return
        name = node_info.name
        self._table[name] = (
            node_info.generation,
            nominated,
            (tuple(victims), num_violations, status),
            summary,
            status if status is not None and status.code != Code.Success else None,
        )
        plain = self._plain
        if plain is not None:
            plain.add(name)
        else:  # stored under the nominated pods this preemptor counts: not a plain one's
            kept = getattr(self._table, "kept", None)
            if kept is not None:
                kept[2].discard(name)
