"""The scheduler cache (live view of pods per node), its node tree and snapshot updates."""

from kschedlib.backend.cache.cache import Cache, Clock, Dump, InconsistentSnapshotError
from kschedlib.backend.cache.node_tree import NodeTree, get_zone_key

__all__ = ["Cache", "Clock", "Dump", "InconsistentSnapshotError", "NodeTree", "get_zone_key"]
