"""Manifests become what the API server stores and what the controllers create.

A manifest is not what the scheduler sees. Before a pod reaches kube-scheduler, the API
server defaults it and runs admission (Priority, DefaultTolerationSeconds, the matchLabelKeys
merge, ...), and the workload controllers turn Deployments, StatefulSets, DaemonSets, Jobs and
ReplicationControllers into pods. :func:`expand_workloads` does both, deterministically,
for the objects that have not been through an API server yet. Objects that have (a
``metadata.uid``, ``resourceVersion`` or ``creationTimestamp``, as every object of a
``kubectl get`` dump has) are left exactly as they are, and so are their controllers: their
pods are in the dump already. docs/guides/inputs.md documents each step field by field.
"""

from kschedlib.api.expand.admission import (
    DEFAULT_NAMESPACE,
    DEFAULT_SCHEDULER_NAME,
    DEFAULT_TOLERATION_SECONDS,
    SYSTEM_PRIORITY_CLASSES,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    Admission,
    is_stored,
)
from kschedlib.api.expand.controllers import CREATED_AFTER_ANNOTATION, expand_workloads
from kschedlib.api.expand.names import random_suffix, template_hash

__all__ = [
    "CREATED_AFTER_ANNOTATION",
    "DEFAULT_NAMESPACE",
    "DEFAULT_SCHEDULER_NAME",
    "DEFAULT_TOLERATION_SECONDS",
    "SYSTEM_PRIORITY_CLASSES",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "Admission",
    "expand_workloads",
    "is_stored",
    "random_suffix",
    "template_hash",
]
