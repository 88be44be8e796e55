"""PrioritySort: the default QueueSort plugin."""

from kschedlib.plugins.queuesort.priority_sort import NAME, PLUGINS, PrioritySort, new

__all__ = ["NAME", "PLUGINS", "PrioritySort", "new"]
