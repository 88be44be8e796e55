"""Sweeps: many what-if variants of one base cluster, run locally or on a Dask cluster."""

from kschedlib.sweep.cluster import BaseCluster
from kschedlib.sweep.engine import run_variant
from kschedlib.sweep.execute import run_sweep, run_tasks, text_progress
from kschedlib.sweep.generators import (
    baseline,
    growth,
    node_pools,
    nodes_down,
    parse_range,
    random_failures,
    zones_down,
)
from kschedlib.sweep.results import SweepResult
from kschedlib.sweep.variant import (
    CapacityQuestion,
    NodeAddition,
    PodAddition,
    Variant,
    load_variants,
)

__all__ = [
    "BaseCluster",
    "CapacityQuestion",
    "NodeAddition",
    "PodAddition",
    "SweepResult",
    "Variant",
    "baseline",
    "growth",
    "load_variants",
    "node_pools",
    "nodes_down",
    "parse_range",
    "random_failures",
    "run_sweep",
    "run_tasks",
    "run_variant",
    "text_progress",
    "zones_down",
]
