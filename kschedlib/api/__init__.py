"""Kubernetes objects the scheduler reads, quantities, selectors and resource helpers."""

from kschedlib.api.meta import ObjectMeta, OwnerReference
from kschedlib.api.node import ContainerImage, Namespace, Node, NodeSpec, NodeStatus, Taint
from kschedlib.api.objects import load_objects
from kschedlib.api.pod import (
    Affinity,
    Container,
    ContainerPort,
    NodeAffinity,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    pod_priority,
)
from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.api.resource import Resource, compute_pod_resources, pod_requests
from kschedlib.api.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorMatcher,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from kschedlib.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kschedlib.api.taints import find_untolerated_taint, tolerates
from kschedlib.api.workloads import (
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)

__all__ = [
    "Affinity",
    "CSINode",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorMatcher",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "Quantity",
    "ReplicaSet",
    "ReplicationController",
    "Resource",
    "ResourceRequirements",
    "Service",
    "StatefulSet",
    "StorageClass",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "compute_pod_resources",
    "find_untolerated_taint",
    "load_objects",
    "parse_quantity",
    "pod_priority",
    "pod_requests",
    "tolerates",
]
