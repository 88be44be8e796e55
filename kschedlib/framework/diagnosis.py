"""NodeToStatus, Diagnosis and FitError: why a pod did not fit, in kube-scheduler's words."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, compress, repeat
from operator import attrgetter, eq, is_not
from types import SimpleNamespace

import attrs

from kschedlib.api.pod import Pod
from kschedlib.errors import KSchedError
from kschedlib.framework.interface import NodeInfoLister
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

_name_of = attrgetter("name")
_code_of = attrgetter("code")
_NO_STATUS = SimpleNamespace(code=None)
"""Stands for an unlisted node in ``listed_with_code`` (its code is no Code)."""

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


def run_heads(statuses: list[Status]) -> list[Status]:
    """The first Status of each run of one object in ``statuses`` (at C speed)."""
    return list(compress(statuses, map(is_not, statuses, chain((None,), statuses))))


class NodeToStatus:
    """Filter verdicts per node; nodes not listed get ``absent_nodes_status``."""

    __slots__ = ("_codes", "_statuses", "absent_nodes_status")

    def __init__(self) -> None:
        self._statuses: dict[str, Status] = {}
        self._codes: set[Code] = set()
        """Every code ever set (a superset of those listed): a code not in it is nowhere."""
        self.absent_nodes_status: Status = Status(Code.UnschedulableAndUnresolvable)

    def get(self, node_name: str) -> Status:
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        self._statuses[node_name] = status
        self._codes.add(status.code)

    def set_all(self, names: Iterable[str], statuses: list[Status]) -> list[Status]:
        """``set`` for each node name and status, in order. Returns the first Status of each
        run of one object (stored verdicts are shared objects: every distinct one is there,
        a few times at most)."""
        self._statuses.update(zip(names, statuses, strict=True))  # zip reuses its pair
        heads = run_heads(statuses)
        self._codes.update([st.code for st in heads])
        return heads

    def __len__(self) -> int:
        return len(self._statuses)

    def items(self) -> Iterator[tuple[str, Status]]:
        return iter(self._statuses.items())

    def values(self) -> list[Status]:
        """The listed statuses, in the order their nodes were first set."""
        return list(self._statuses.values())

    def explicit(self) -> dict[str, Status]:
        return dict(self._statuses)

    def listed_with_code(self, nodes: Sequence[NodeInfo], code: Code) -> list[NodeInfo]:
        """The ``nodes`` (with a Node) whose explicit status has ``code``, in their order."""
        if len(self._codes) == 1 and code in self._codes:  # every listed status has ``code``
            listed = map(self._statuses.__contains__, map(_name_of, nodes))
        else:
            statuses = map(self._statuses.get, map(_name_of, nodes), repeat(_NO_STATUS))
            listed = map(eq, map(_code_of, statuses), repeat(code))  # at C speed
        return [ni for ni in compress(nodes, listed) if ni.node is not None]

    def nodes_for_status_code(self, lister: NodeInfoLister, code: Code) -> list:  # type: ignore[type-arg]
        """Nodes whose status (explicit or absent) has ``code``, in the lister's order."""
        if self.absent_nodes_status.code == code:
            return [n for n in lister.list() if self.get(n.name).code == code]
        if code not in self._codes:
            return []  # no listed node has it (a pod that fits nowhere, preemption or not)
        out = []
        node_map = getattr(lister, "node_info_map", None)
        for name, st in self._statuses.items():
            if st.code == code:
                if node_map is not None:  # a Snapshot: its get() without the call
                    ni = node_map.get(name)
                    if ni is not None and ni.node is not None:
                        out.append(ni)
                    continue
                try:
                    out.append(lister.get(name))
                except KeyError:
                    continue
        return out


@attrs.define(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = attrs.field(factory=NodeToStatus)
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    pending_plugins: set[str] = attrs.field(factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.code == Code.Pending:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class FitError(KSchedError):
    """The pod fits on no node; ``str()`` is the FailedScheduling message, verbatim."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        return self.message()

    def message(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram: dict[str, int] = {}
            # Stored verdicts make runs of nodes share one Status object: count runs.
            statuses = d.node_to_status.values()
            new_run = list(map(is_not, statuses, chain((None,), statuses)))
            starts = list(compress(range(len(statuses)), new_run))
            starts.append(len(statuses))
            for i, st in enumerate(compress(statuses, new_run)):
                n = starts[i + 1] - starts[i]
                for r in st.reasons:
                    histogram[r] = histogram.get(r, 0) + n
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0:
                for r in d.node_to_status.absent_nodes_status.reasons:
                    histogram[r] = histogram.get(r, 0) + absent
            parts = sorted(f"{n} {r}" for r, n in histogram.items())
            if parts:
                msg += " " + ", ".join(parts) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


class NoNodesAvailableError(KSchedError):
    """The cluster has no nodes (ErrNoNodesAvailable)."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")
