"""Admission: the API server's defaults and admission plugins applied to pods and claims
not yet stored (Priority, DefaultTolerationSeconds, the matchLabelKeys merge, ...)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from kschedlib.api.meta import ObjectMeta
from kschedlib.api.pod import (
    Container,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    ResourceRequirements,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kschedlib.api.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
)
from kschedlib.api.storage import PersistentVolumeClaim, StorageClass
from kschedlib.api.workloads import PriorityClass
from kschedlib.errors import InvalidObjectError

DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
# The two classes the API server creates at start-up (pkg/apis/scheduling).
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
DEFAULT_TOLERATION_SECONDS = 300
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"


def is_stored(obj: Any) -> bool:
    """True for an object that came from the API server (uid, resourceVersion or
    creationTimestamp set): admission and the controllers have already done their work."""
    meta: ObjectMeta = obj.metadata
    return bool(meta.uid or meta.resource_version or meta.creation_timestamp)


# ------------------------------------------------------------------ admission


@attrs.define(slots=True)
class Admission:
    """The API server's defaulting and the admission plugins that matter to scheduling."""

    priority_classes: dict[str, PriorityClass]
    storage_classes: Sequence[StorageClass] = ()

    @classmethod
    def from_objects(cls, objects: Iterable[Any]) -> Admission:
        pcs: dict[str, PriorityClass] = {}
        scs: list[StorageClass] = []
        for o in objects:
            if isinstance(o, PriorityClass):
                pcs[o.metadata.name] = o
            elif isinstance(o, StorageClass):
                scs.append(o)
        return cls(pcs, scs)

    def default_priority_class(self) -> PriorityClass | None:
        """The globalDefault class; with several, the one of lowest value (as admission)."""
        found: PriorityClass | None = None
        for pc in self.priority_classes.values():
            if pc.global_default and (found is None or pc.value < found.value):
                found = pc
        return found

    def admit_pod(self, pod: Pod) -> Pod:
        """A pod as the API server would store it on create."""
        meta = pod.metadata
        if not meta.namespace:
            meta = attrs.evolve(meta, namespace=DEFAULT_NAMESPACE)
        spec = _default_pod_spec(pod.spec)
        spec = self._priority(pod, spec)
        spec = _default_toleration_seconds(spec)
        spec = _merge_label_keys(spec, meta.labels)
        return attrs.evolve(pod, metadata=meta, spec=spec)

    def _priority(self, pod: Pod, spec: PodSpec) -> PodSpec:
        if spec.priority is not None:
            return spec
        name = spec.priority_class_name
        value: int
        policy: str | None
        if name:
            if name in SYSTEM_PRIORITY_CLASSES and name not in self.priority_classes:
                value, policy = SYSTEM_PRIORITY_CLASSES[name], None
            elif name in self.priority_classes:
                pc = self.priority_classes[name]
                value, policy = pc.value, pc.preemption_policy
            else:
                raise InvalidObjectError(
                    f"pod {pod.metadata.namespace or DEFAULT_NAMESPACE}/{pod.metadata.name}",
                    "spec.priorityClassName",
                    f"no PriorityClass with name {name} was found",
                )
        else:
            default = self.default_priority_class()
            if default is not None:
                name, value, policy = default.metadata.name, default.value, default.preemption_policy
            else:
                value, policy = 0, None
        return attrs.evolve(
            spec,
            priority=value,
            priority_class_name=name,
            preemption_policy=spec.preemption_policy or policy or "PreemptLowerPriority",
        )

    def admit_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """Namespace default and the DefaultStorageClass admission plugin."""
        meta = pvc.metadata
        if not meta.namespace:
            pvc = attrs.evolve(pvc, metadata=attrs.evolve(meta, namespace=DEFAULT_NAMESPACE))
        if pvc.spec.storage_class_name is None:
            default = self._default_storage_class()
            if default is not None:
                pvc = attrs.evolve(pvc, spec=attrs.evolve(pvc.spec, storage_class_name=default))
        return pvc

    def _default_storage_class(self) -> str | None:
        """The newest class annotated as default (DefaultStorageClass admission)."""
        marked = [
            sc for sc in self.storage_classes
            if sc.metadata.annotations.get("storageclass.kubernetes.io/is-default-class")
            == "true"
        ]
        if not marked:
            return None
        def age(sc: StorageClass) -> tuple[float, str]:
            ts = sc.metadata.creation_timestamp
            return (ts.timestamp() if ts is not None else 0.0, sc.metadata.name)

        marked.sort(key=age)
        return marked[-1].metadata.name


def _requests_from_limits(res: ResourceRequirements) -> ResourceRequirements:
    if not res.limits:
        return res
    missing = {k: v for k, v in res.limits.items() if k not in res.requests}
    if not missing:
        return res
    return attrs.evolve(res, requests={**res.requests, **missing})


def _default_container(c: Container) -> Container:
    res = _requests_from_limits(c.resources)
    return c if res is c.resources else attrs.evolve(c, resources=res)


def _default_pod_spec(spec: PodSpec) -> PodSpec:
    """SetDefaults_Pod and friends: requests from limits (containers, init containers and
    pod-level resources) and the default scheduler name."""
    changes: dict[str, Any] = {}
    containers = tuple(_default_container(c) for c in spec.containers)
    if containers != spec.containers:
        changes["containers"] = containers
    inits = tuple(_default_container(c) for c in spec.init_containers)
    if inits != spec.init_containers:
        changes["init_containers"] = inits
    if spec.resources is not None:
        res = _requests_from_limits(spec.resources)
        if res is not spec.resources:
            changes["resources"] = res
    if not spec.scheduler_name:
        changes["scheduler_name"] = DEFAULT_SCHEDULER_NAME
    return attrs.evolve(spec, **changes) if changes else spec


def _default_toleration_seconds(spec: PodSpec) -> PodSpec:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable NoExecute for 300 s unless
    the pod already tolerates them."""

    def covers(t: Toleration, key: str) -> bool:
        return (t.key == key or not t.key) and (t.effect in ("NoExecute", ""))

    add = [
        Toleration(key=key, operator="Exists", effect="NoExecute",
                   toleration_seconds=DEFAULT_TOLERATION_SECONDS)
        for key in (TAINT_NOT_READY, TAINT_UNREACHABLE)
        if not any(covers(t, key) for t in spec.tolerations)
    ]
    return attrs.evolve(spec, tolerations=spec.tolerations + tuple(add)) if add else spec


def _apply_label_keys(
    sel: LabelSelector, keys: Sequence[str], op: str, labels: dict[str, str]
) -> LabelSelector:
    extra = tuple(
        LabelSelectorRequirement(key=k, operator=op, values=(labels[k],))
        for k in keys
        if k in labels
    )
    if not extra:
        return sel
    return LabelSelector(
        match_labels=sel.match_labels, match_expressions=sel.match_expressions + extra
    )


def _merge_term(term: PodAffinityTerm, labels: dict[str, str]) -> PodAffinityTerm:
    if term.label_selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return term
    sel = _apply_label_keys(term.label_selector, term.match_label_keys, "In", labels)
    sel = _apply_label_keys(sel, term.mismatch_label_keys, "NotIn", labels)
    return term if sel is term.label_selector else attrs.evolve(term, label_selector=sel)


def _merge_affinity(pa: PodAffinity | None, labels: dict[str, str]) -> PodAffinity | None:
    if pa is None:
        return None
    return PodAffinity(
        required_during_scheduling_ignored_during_execution=tuple(
            _merge_term(t, labels) for t in pa.required
        ),
        preferred_during_scheduling_ignored_during_execution=tuple(
            WeightedPodAffinityTerm(
                weight=w.weight, pod_affinity_term=_merge_term(w.pod_affinity_term, labels)
            )
            for w in pa.preferred
        ),
    )


def _merge_spread(c: TopologySpreadConstraint, labels: dict[str, str]) -> TopologySpreadConstraint:
    if c.label_selector is None or not c.match_label_keys:
        return c
    sel = _apply_label_keys(c.label_selector, c.match_label_keys, "In", labels)
    return c if sel is c.label_selector else attrs.evolve(c, label_selector=sel)


def _merge_label_keys(spec: PodSpec, labels: dict[str, str]) -> PodSpec:
    """matchLabelKeys / mismatchLabelKeys merged into the selectors, as v1.35's API server
    does on pod create (pod (anti-)affinity terms and topology spread constraints)."""
    changes: dict[str, Any] = {}
    aff = spec.affinity
    if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
        new_aff = attrs.evolve(
            aff,
            pod_affinity=_merge_affinity(aff.pod_affinity, labels),
            pod_anti_affinity=_merge_affinity(aff.pod_anti_affinity, labels),
        )
        if new_aff != aff:
            changes["affinity"] = new_aff
    if spec.topology_spread_constraints:
        tscs = tuple(_merge_spread(c, labels) for c in spec.topology_spread_constraints)
        if tscs != spec.topology_spread_constraints:
            changes["topology_spread_constraints"] = tscs
    return attrs.evolve(spec, **changes) if changes else spec
