"""Deprecated alias: forks and transactions live in :mod:`kschedlib.fork`."""

from kschedlib.fork import Transaction, TransactionError, begin, clone_clock, fork_scheduler

__all__ = ["Transaction", "TransactionError", "begin", "clone_clock", "fork_scheduler"]
