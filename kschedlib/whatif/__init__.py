"""What-if simulation: forks and transactions of a Scheduler, and the questions asked of a
cluster without changing it (can_schedule, capacity, simulate_drain, removable_nodes)."""

from __future__ import annotations

from kschedlib.whatif.fork import Transaction, TransactionError
from kschedlib.whatif.reports import (
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
