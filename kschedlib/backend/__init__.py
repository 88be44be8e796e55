"""Scheduler backend: cache, snapshot, node tree and scheduling queue."""
