"""DefaultSelector and GetPodServices: the selector of the Services and controllers that own a
pod, which default topology spreading uses in place of a constraint's labelSelector."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.selectors import Selector, selector_from_set
from kschedlib.framework.interface import ObjectStore

_RC_KIND = ("v1", "ReplicationController")
_RS_KIND = ("apps/v1", "ReplicaSet")
_SS_KIND = ("apps/v1", "StatefulSet")


def get_pod_services(objects: ObjectStore, pod: Pod) -> list[Any]:
    """The Services of the pod's namespace whose selector matches the pod's labels."""
    ns = pod.metadata.namespace
    labels = pod.metadata.labels
    services: list[Any] = []
    for svc in objects.list_objects("Service"):
        if svc.metadata.namespace != ns:
            continue
        selector = svc.spec.selector
        if selector is None:
            continue  # a nil selector matches nothing
        if selector_from_set(selector).matches(labels):
            services.append(svc)
    return services


def _controller_of(pod: Pod) -> tuple[str, str, str] | None:
    """(apiVersion, kind, name) of the owner reference marked as controller, if any."""
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.api_version, ref.kind, ref.name
    return None


def default_selector(pod: Pod, objects: ObjectStore) -> Selector:
    """The union of the selectors of the pod's Services and of its ReplicationController,
    ReplicaSet or StatefulSet controller (helper.DefaultSelector); empty when none."""
    label_set: dict[str, str] = {}
    for svc in get_pod_services(objects, pod):
        label_set.update(svc.spec.selector)
    selector = selector_from_set(label_set)
    owner = _controller_of(pod)
    if owner is None:
        return selector
    api_version, kind, name = owner
    key = f"{pod.metadata.namespace}/{name}"
    gvk = (api_version, kind)
    if gvk == _RC_KIND:
        rc = objects.get_object("ReplicationController", key)
        if rc is not None:
            label_set.update(rc.spec.selector)
            selector = selector_from_set(label_set)
    elif gvk in (_RS_KIND, _SS_KIND):
        obj = objects.get_object(kind, key)
        if obj is not None and obj.spec.selector is not None:
            selector = selector.add(*obj.spec.selector.as_selector().requirements)
    return selector
