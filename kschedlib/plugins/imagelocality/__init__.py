"""ImageLocality: favours nodes that already have the pod's container images."""

from kschedlib.plugins.imagelocality.image_locality import (
    MAX_CONTAINER_THRESHOLD,
    MIN_THRESHOLD,
    NAME,
    PLUGINS,
    ImageLocality,
    calculate_priority,
    new,
    normalized_image_name,
    scaled_image_score,
)

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "NAME",
    "PLUGINS",
    "ImageLocality",
    "calculate_priority",
    "new",
    "normalized_image_name",
    "scaled_image_score",
]
