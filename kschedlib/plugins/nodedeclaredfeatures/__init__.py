"""NodeDeclaredFeatures: pods go to nodes that declare the features they need (alpha, v1.35)."""

from kschedlib.plugins.nodedeclaredfeatures.nodedeclaredfeatures import (
    DEFAULT_FEATURES,
    ERR_REASON_UNSATISFIED,
    NAME,
    PLUGINS,
    DeclaredFeature,
    GuaranteedQoSPodCPUResize,
    NodeDeclaredFeatures,
    RestartAllContainersOnContainerExits,
    infer_for_pod_scheduling,
    new,
    new_with_features,
)

__all__ = [
    "DEFAULT_FEATURES",
    "ERR_REASON_UNSATISFIED",
    "NAME",
    "PLUGINS",
    "DeclaredFeature",
    "GuaranteedQoSPodCPUResize",
    "RestartAllContainersOnContainerExits",
    "NodeDeclaredFeatures",
    "infer_for_pod_scheduling",
    "new",
    "new_with_features",
]
