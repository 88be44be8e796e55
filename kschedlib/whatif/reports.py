"""Deprecated alias: the what-if report types live in :mod:`kschedlib.whatif_reports`."""

from kschedlib.whatif_reports import (
    CapacityReport,
    DrainReport,
    PodDrainResult,
    RemovableNode,
    RemovableNodesReport,
    Verdict,
    format_table,
)

__all__ = [
    "CapacityReport",
    "DrainReport",
    "PodDrainResult",
    "RemovableNode",
    "RemovableNodesReport",
    "Verdict",
    "format_table",
]
