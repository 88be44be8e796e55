"""Scheduling framework: interfaces, Status, CycleState, NodeInfo and the runtime."""
