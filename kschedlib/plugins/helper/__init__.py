"""Helpers shared by the default plugins (pkg/scheduler/framework/plugins/helper)."""

from kschedlib.plugins.helper.normalize_score import (
    default_normalize_score,
    default_normalize_values,
)

__all__ = ["default_normalize_score", "default_normalize_values"]
