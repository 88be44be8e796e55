"""What-if simulation: forks and transactions of a Scheduler, and the questions asked of a
cluster without changing it (can_schedule, capacity, simulate_drain, removable_nodes)."""

from __future__ import annotations

from kschedlib.fork import Transaction, TransactionError
from kschedlib.scheduler import register_tool
from kschedlib.whatif.capacity import capacity
from kschedlib.whatif.drain import removable_nodes, simulate_drain
from kschedlib.whatif.nodes import add_nodes_like
from kschedlib.whatif.questions import can_schedule
from kschedlib.whatif_reports import (
    CapacityReport,
    DrainReport,
    PodDrainResult,
    RemovableNode,
    RemovableNodesReport,
    Verdict,
)

__all__ = [
    "CapacityReport",
    "DrainReport",
    "PodDrainResult",
    "RemovableNode",
    "RemovableNodesReport",
    "Transaction",
    "TransactionError",
    "Verdict",
]

register_tool("can_schedule", can_schedule)
register_tool("capacity", capacity)
register_tool("simulate_drain", simulate_drain)
register_tool("removable_nodes", removable_nodes)
register_tool("add_nodes_like", add_nodes_like)
