"""NodeToStatus, Diagnosis and FitError: why a pod did not fit, in kube-scheduler's words."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter

import attrs

from kschedlib.api.pod import Pod
from kschedlib.errors import KSchedError
from kschedlib.framework.interface import NodeInfoLister
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
_reasons_of = attrgetter("reasons")


class NodeToStatus:
    """Filter verdicts per node; nodes not listed get ``absent_nodes_status``."""

    __slots__ = ("_statuses", "absent_nodes_status")

    def __init__(self) -> None:
        self._statuses: dict[str, Status] = {}
        self.absent_nodes_status: Status = Status(Code.UnschedulableAndUnresolvable)

    def get(self, node_name: str) -> Status:
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        self._statuses[node_name] = status

    def update(self, pairs: Iterable[tuple[str, Status]]) -> None:
        """set() for each (node name, status) in order."""
        self._statuses.update(pairs)

    def __len__(self) -> int:
        return len(self._statuses)

    def statuses(self) -> Iterator[Status]:
        """The explicit statuses, in the order of their nodes."""
        return iter(self._statuses.values())

    def items(self) -> Iterator[tuple[str, Status]]:
        return iter(self._statuses.items())

    def explicit(self) -> dict[str, Status]:
        return dict(self._statuses)

    def listed_with_code(self, nodes: Sequence[NodeInfo], code: Code) -> list[NodeInfo]:
        """The ``nodes`` (with a Node) whose explicit status has ``code``, in their order."""
        get = self._statuses.get
        return [
            ni
            for ni in nodes
            if (st := get(ni.name)) is not None and st.code == code and ni.node is not None
        ]

    def nodes_for_status_code(self, lister: NodeInfoLister, code: Code) -> list:  # type: ignore[type-arg]
        """Nodes whose status (explicit or absent) has ``code``, in the lister's order."""
        if self.absent_nodes_status.code == code:
            return [n for n in lister.list() if self.get(n.name).code == code]
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
            # Count the nodes per tuple of reasons (at C speed), then per reason.
            try:
                listed = list(map(_reasons_of, d.node_to_status.statuses()))
                if listed and listed.count(listed[0]) == len(listed):  # one verdict (common)
                    per_reasons = Counter({listed[0]: len(listed)})
                else:
                    per_reasons = Counter(listed)
            except TypeError:  # reasons given as a list: count node by node
                per_reasons = Counter()
                for st in d.node_to_status.statuses():
                    per_reasons[tuple(st.reasons)] += 1
            for reasons, n in per_reasons.items():
                for r in reasons:
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
