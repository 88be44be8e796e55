"""Deprecated alias: the DRA device tables live in :mod:`kschedlib.report.dra`."""

from kschedlib.report.dra import device_utilization, pod_devices, write_text

__all__ = ["device_utilization", "pod_devices", "write_text"]
