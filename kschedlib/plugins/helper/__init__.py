"""Helpers shared by the default plugins (pkg/scheduler/framework/plugins/helper)."""

from kschedlib.plugins.helper.normalize_score import default_normalize_score

__all__ = ["default_normalize_score"]
