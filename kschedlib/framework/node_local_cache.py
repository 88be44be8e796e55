"""Exact reuse of node-local Filter verdicts and raw Scores across scheduling cycles.

A plugin is *node-local* (``node_local = True``) when its Filter status and raw Score for a
node depend only on the fragment its ``sign_pod(pod)`` returns and on the NodeInfo. Such
results are kept per (plugins' fragments, node name) together with the NodeInfo generation
they were computed at; every NodeInfo change takes a fresh, process-wide generation, so a
stored result is used only for the very NodeInfo content it was computed from. This goes
beyond kube-scheduler (which recomputes), and gives bit-for-bit what recomputation gives.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

Table = dict[str, tuple[int, Any]]
"""node name -> (NodeInfo generation, stored result)."""


DEFAULT_MAX_TABLES = 32


class NodeLocalCache:
    """Result tables per signature key, the least recently used dropped beyond ``max_tables``."""

    __slots__ = ("_tables", "max_tables", "max_entries")

    def __init__(self, max_tables: int = DEFAULT_MAX_TABLES, max_entries: int = 4096) -> None:
        self._tables: dict[Hashable, Any] = {}
        self.max_tables = max_tables
        self.max_entries = max_entries

    def table(self, key: Hashable) -> Any:
        """The table stored under ``key`` (a new dict when there is none)."""
        tables = self._tables
        t = tables.pop(key, None)
        if t is None:
            t = {}
            if len(tables) >= self.max_tables:
                del tables[next(iter(tables))]
        tables[key] = t  # most recently used last
        return t

    def generation_table(self, key: Hashable, live: Callable[[], set[int]]) -> dict[int, Any]:
        """A table keyed by NodeInfo generation (unique per NodeInfo content, so a hit is
        always current). Entries of generations no NodeInfo has any more are pruned when the
        table outgrows ``max_entries``: ``live()`` gives the generations still in use. Pruning
        replaces the table (copy on write): an entry is never changed nor removed from a dict
        once handed out, so an explanation may keep the dict and read its entries later."""
        t: dict[int, Any] = self.table(key)
        if len(t) > self.max_entries:
            keep = live()
            t = self._tables[key] = {g: v for g, v in t.items() if g in keep}
            if len(t) > self.max_entries // 2:
                self.max_entries = 2 * len(t)
        return t

    def clear(self) -> None:
        self._tables.clear()

    def __len__(self) -> int:
        return len(self._tables)


def local_fragment(plugin: Any, pod: Any) -> Hashable | None:
    """What a node-local plugin's results depend on besides the NodeInfo: its
    ``node_local_fragment(pod)`` when it has one (e.g. adding a cluster-wide count), else its
    ``sign_pod(pod)``; None when the plugin is not node-local or does not sign the pod."""
    if not getattr(plugin, "node_local", False):
        return None
    fn = getattr(plugin, "node_local_fragment", None)
    if fn is None:
        fn = getattr(plugin, "sign_pod", None)
    return None if fn is None else fn(pod)


def node_local_fragments(plugins: Sequence[Any], pod: Any) -> list[tuple[str, Hashable]]:
    """The (name, fragment) of the leading node-local plugins that sign ``pod``: the run of
    ``plugins`` whose results can be stored, stopping at the first that cannot."""
    out: list[tuple[str, Hashable]] = []
    for pl in plugins:
        fragment = local_fragment(pl, pod)
        if fragment is None:
            break
        out.append((pl.name, fragment))
    return out
