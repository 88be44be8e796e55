"""Deprecated alias: scenario files are read by :mod:`kschedlib.api.scenario`."""

from kschedlib.api.scenario import Scenario

__all__ = ["Scenario"]
