"""kschedlib: kube-scheduler v1.35 in pure Python, with no I/O."""

from __future__ import annotations

from kschedlib.errors import (
    CacheError,
    ConfigError,
    InvalidObjectError,
    KSchedError,
    QuantityError,
    QueueError,
)

__version__ = "0.1.0"

__all__ = [
    "CacheError",
    "ConfigError",
    "InvalidObjectError",
    "KSchedError",
    "QuantityError",
    "QueueError",
    "__version__",
]
