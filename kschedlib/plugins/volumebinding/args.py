"""VolumeBindingArgs, defaulted and validated as kube-scheduler v1.35 does."""

from __future__ import annotations

import attrs

from kschedlib.features import FeatureGates
from kschedlib.plugins.noderesources.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    UtilizationShapePoint,
    invalid,
    validate_function_shape,
)

DEFAULT_BIND_TIMEOUT_SECONDS = 600

DEFAULT_STORAGE_CAPACITY_SHAPE: tuple[UtilizationShapePoint, ...] = (
    UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE),
    UtilizationShapePoint(100, 0),
)
"""The shape defaulted when the StorageCapacityScoring gate is on: prefer emptier nodes."""


@attrs.define(slots=True, kw_only=True)
class VolumeBindingArgs:
    """kubescheduler.config.k8s.io/v1 VolumeBindingArgs. ``shape`` is only allowed with the
    StorageCapacityScoring feature gate, which v1.35 leaves off (so it stays None)."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] | None = None

    def validate(
        self, storage_capacity_scoring: bool = False, feature_gates: FeatureGates | None = None
    ) -> list[tuple[str, str]]:
        """ValidateVolumeBindingArgsWithOptions (the gate from ``feature_gates`` when given)."""
        if feature_gates is not None:
            storage_capacity_scoring = feature_gates.enabled("StorageCapacityScoring")
        errs: list[tuple[str, str]] = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                (
                    "bindTimeoutSeconds",
                    invalid(
                        self.bind_timeout_seconds,
                        "invalid BindTimeoutSeconds, should not be a negative value",
                    ),
                )
            )
        if storage_capacity_scoring:
            errs.extend(validate_function_shape(self.shape or (), "shape"))
        elif self.shape is not None:
            errs.append(
                (
                    "shape",
                    "Invalid value: "
                    + _shape_repr(self.shape)
                    + ": unexpected field `shape`, remove it or turn on the feature gate "
                    "StorageCapacityScoring",
                )
            )
        return errs


def _shape_repr(shape: tuple[UtilizationShapePoint, ...]) -> str:
    """How field.Invalid prints the shape (Go's ``%#v`` of the internal type)."""
    t = "config.UtilizationShapePoint"
    points = ", ".join(f"{t}{{Utilization:{p.utilization}, Score:{p.score}}}" for p in shape)
    return f"[]{t}{{{points}}}"
