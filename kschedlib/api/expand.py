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

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from kschedlib.api.meta import KubeObject, ObjectMeta, OwnerReference
from kschedlib.api.node import Node
from kschedlib.api.pod import (
    Affinity,
    Container,
    NodeAffinity,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodResourceClaimStatus,
    PodSpec,
    ResourceRequirements,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from kschedlib.api.resource_v1 import (
    POD_CLAIM_NAME_ANNOTATION,
    ResourceClaim,
    ResourceClaimTemplate,
)
from kschedlib.api.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorMatcher,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kschedlib.api.storage import PersistentVolumeClaim, StorageClass
from kschedlib.api.taints import find_untolerated_taint
from kschedlib.api.workloads import (
    DaemonSet,
    Deployment,
    Job,
    PodTemplateSpec,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    SelectorSpec,
    StatefulSet,
)
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
# Annotation on StatefulSet pods created under OrderedReady: the pod that must be running
# before this one is created (the simulation creates it once its predecessor is bound).
CREATED_AFTER_ANNOTATION = "kschedlib.io/created-after"
# utilrand's alphabet: no vowels, no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_UID_NAMESPACE = uuid.UUID("6f1c2f3e-8a4b-4b8e-9a43-5c2c7d3f1a17")


def is_stored(obj: Any) -> bool:
    """True for an object that came from the API server (uid, resourceVersion or
    creationTimestamp set): admission and the controllers have already done their work."""
    meta: ObjectMeta = obj.metadata
    return bool(meta.uid or meta.resource_version or meta.creation_timestamp)


# ------------------------------------------------------------------ deterministic names


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(parts).encode()).digest()


def random_suffix(*seed: str) -> str:
    """Five characters from utilrand's alphabet, derived from ``seed`` (stable across runs)."""
    d = _digest(*seed)
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in d[:5])


def _safe_encode(s: str) -> str:
    """rand.SafeEncodeString: map each byte onto the alphabet."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: PodTemplateSpec | None) -> str:
    """The pod-template-hash label value: FNV-32a of the template, encoded like
    controller.ComputeHash encodes it (the hash input differs from Go's object dump, so the
    value differs from a real cluster's; it is stable and changes with the template)."""
    data = json.dumps(_encode(template), sort_keys=True, separators=(",", ":")).encode()
    return _safe_encode(str(_fnv32a(data)))


def _encode(value: Any) -> Any:
    from kschedlib.api.codec import encode

    return encode(value) if value is not None else {}


def _uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))


class _Names:
    """generateName as the API server applies it, deterministically and without clashes."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)

    def generate(self, namespace: str, prefix: str, *seed: str) -> str:
        attempt = 0
        while True:
            name = prefix + random_suffix(namespace, prefix, *seed, str(attempt))
            if f"{namespace}/{name}" not in self.taken:
                self.taken.add(f"{namespace}/{name}")
                return name
            attempt += 1

    def claim(self, namespace: str, name: str) -> None:
        self.taken.add(f"{namespace}/{name}")


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


# ------------------------------------------------------------------ controllers


def _owner(obj: KubeObject, kind: str, api_version: str) -> OwnerReference:
    return OwnerReference(
        api_version=api_version, kind=kind, name=obj.metadata.name, uid=obj.metadata.uid,
        controller=True,
    )


def _template(obj: Any) -> PodTemplateSpec:
    template: PodTemplateSpec | None = obj.spec.template
    if template is None:
        raise InvalidObjectError(
            f"{obj.label} {obj.metadata.namespace}/{obj.metadata.name}",
            "spec.template",
            "Required value",
        )
    return template


def _pod_from_template(
    template: PodTemplateSpec,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    owner: OwnerReference,
    annotations: dict[str, str] | None = None,
    spec: PodSpec | None = None,
) -> Pod:
    meta = ObjectMeta(
        name=name,
        namespace=namespace,
        labels=labels,
        annotations={**template.metadata.annotations, **(annotations or {})},
        owner_references=(owner,),
    )
    return Pod(metadata=meta, spec=spec if spec is not None else template.spec)


class _Expander:
    def __init__(self, objects: Sequence[Any], leave_alone: Callable[[Any], bool]) -> None:
        self.leave_alone = leave_alone
        self.fresh_pods: set[int] = set()
        self.claim_templates = {
            o.metadata.key: o for o in objects if isinstance(o, ResourceClaimTemplate)
        }
        self.admission = Admission.from_objects(objects)
        self.nodes = sorted(
            (o for o in objects if isinstance(o, Node)), key=lambda n: n.metadata.name
        )
        self.names = _Names(
            f"{o.metadata.namespace or DEFAULT_NAMESPACE}/{o.metadata.name}"
            for o in objects
            if isinstance(o, Pod) and o.metadata.name
        )

    def fresh(self, obj: Any) -> bool:
        return not self.leave_alone(obj) and not is_stored(obj)

    def registered(self, obj: Any, api_version_kind: str) -> Any:
        """The controller object as the API server stores it: namespace and uid set."""
        meta = obj.metadata
        changes: dict[str, Any] = {}
        if not meta.namespace:
            changes["namespace"] = DEFAULT_NAMESPACE
        if not meta.uid:
            changes["uid"] = _uid(api_version_kind, meta.namespace or DEFAULT_NAMESPACE, meta.name)
        return attrs.evolve(obj, metadata=attrs.evolve(meta, **changes)) if changes else obj

    def pod(self, pod: Pod) -> Pod:
        pod = self.admission.admit_pod(pod)
        meta = pod.metadata
        if not meta.name and meta.generate_name:
            name = self.names.generate(meta.namespace, meta.generate_name, "pod")
            meta = attrs.evolve(meta, name=name)
        if not meta.uid and meta.name:
            meta = attrs.evolve(meta, uid=_uid("Pod", meta.namespace, meta.name))
        pod = attrs.evolve(pod, metadata=meta)
        self.fresh_pods.add(id(pod))
        return pod

    def claims_for(self, pod: Pod) -> tuple[Pod, list[ResourceClaim]]:
        """The resourceclaim controller: a ResourceClaim for each pod claim that names a
        template of the input, and the pod's status pointing at it. Without the template the
        pod is left waiting, as the controller leaves it."""
        done = {s.name for s in pod.status.resource_claim_statuses}
        claims: list[ResourceClaim] = []
        statuses = list(pod.status.resource_claim_statuses)
        ns = pod.metadata.namespace
        for pc in pod.spec.resource_claims:
            tmpl_name = pc.resource_claim_template_name
            if not tmpl_name or pc.name in done:
                continue
            tmpl = self.claim_templates.get(f"{ns}/{tmpl_name}")
            if tmpl is None:
                continue
            prefix = f"{pod.metadata.name}-{pc.name}-"
            name = prefix + random_suffix(ns, prefix, "ResourceClaim")
            claim = ResourceClaim(
                metadata=ObjectMeta(
                    name=name,
                    generate_name=prefix,
                    namespace=ns,
                    uid=_uid("ResourceClaim", ns, name),
                    labels=dict(tmpl.spec.metadata.labels),
                    annotations={**tmpl.spec.metadata.annotations,
                                 POD_CLAIM_NAME_ANNOTATION: pc.name},
                    owner_references=(OwnerReference(
                        api_version="v1", kind="Pod", name=pod.metadata.name,
                        uid=pod.metadata.uid, controller=True),),
                ),
                spec=tmpl.spec.spec,
            )
            claims.append(claim)
            statuses.append(PodResourceClaimStatus(name=pc.name, resource_claim_name=name))
        if not claims:
            return pod, []
        status = attrs.evolve(pod.status, resource_claim_statuses=tuple(statuses))
        return attrs.evolve(pod, status=status), claims

    # -- ReplicaSet / ReplicationController / Deployment

    def replica_pods(self, owner: Any, kind: str, api_version: str) -> list[Pod]:
        template = _template(owner)
        ns, name = owner.metadata.namespace, owner.metadata.name
        ref = _owner(owner, kind, api_version)
        replicas = 1 if owner.spec.replicas is None else owner.spec.replicas
        pods = []
        for i in range(replicas):
            pod_name = self.names.generate(ns, f"{name}-", kind, str(i))
            pods.append(self.pod(_pod_from_template(
                template, name=pod_name, namespace=ns,
                labels=dict(template.metadata.labels), owner=ref,
            )))
        return pods

    def deployment(self, dep: Deployment) -> list[Any]:
        template = _template(dep)
        phash = template_hash(template)
        ns, name = dep.metadata.namespace, dep.metadata.name
        labels = {**template.metadata.labels, "pod-template-hash": phash}
        selector = dep.spec.selector or LabelSelector(match_labels=dict(template.metadata.labels))
        rs_selector = LabelSelector(
            match_labels={**selector.match_labels, "pod-template-hash": phash},
            match_expressions=selector.match_expressions,
        )
        rs = ReplicaSet(
            metadata=ObjectMeta(
                name=f"{name}-{phash}",
                namespace=ns,
                labels=labels,
                annotations={"deployment.kubernetes.io/revision": "1"},
                owner_references=(_owner(dep, "Deployment", "apps/v1"),),
            ),
            spec=SelectorSpec(
                replicas=1 if dep.spec.replicas is None else dep.spec.replicas,
                selector=rs_selector,
                template=PodTemplateSpec(
                    metadata=attrs.evolve(template.metadata, labels=labels), spec=template.spec
                ),
            ),
        )
        rs = self.registered(rs, "apps/v1/ReplicaSet")
        return [rs, *self.replica_pods(rs, "ReplicaSet", "apps/v1")]

    # -- StatefulSet

    def stateful_set(self, sts: StatefulSet) -> list[Any]:
        template = _template(sts)
        ns, name = sts.metadata.namespace, sts.metadata.name
        ref = _owner(sts, "StatefulSet", "apps/v1")
        replicas = 1 if sts.spec.replicas is None else sts.spec.replicas
        start = sts.spec.ordinals.start if sts.spec.ordinals is not None else 0
        revision = f"{name}-{template_hash(template)}"
        selector_labels = sts.spec.selector.match_labels if sts.spec.selector else {}
        out: list[Any] = []
        previous = ""
        for ordinal in range(start, start + replicas):
            pod_name = f"{name}-{ordinal}"
            self.names.claim(ns, pod_name)
            volumes = list(template.spec.volumes)
            for vct in sts.spec.volume_claim_templates:
                claim_name = f"{vct.metadata.name}-{pod_name}"
                pvc = PersistentVolumeClaim(
                    metadata=ObjectMeta(
                        name=claim_name,
                        namespace=ns,
                        labels={**vct.metadata.labels, **{
                            k: v for k, v in selector_labels.items()
                            if k not in vct.metadata.labels
                        }},
                        annotations=dict(vct.metadata.annotations),
                    ),
                    spec=vct.spec,
                )
                out.append(self.registered(self.admission.admit_claim(pvc), "v1/PersistentVolumeClaim"))
                source = PersistentVolumeClaimVolumeSource(claim_name=claim_name)
                vol = Volume(name=vct.metadata.name, persistent_volume_claim=source)
                volumes = [v for v in volumes if v.name != vct.metadata.name] + [vol]
            labels = {
                **template.metadata.labels,
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": pod_name,
                "apps.kubernetes.io/pod-index": str(ordinal),
            }
            annotations: dict[str, str] = {}
            if sts.spec.pod_management_policy == "OrderedReady" and previous:
                annotations[CREATED_AFTER_ANNOTATION] = f"{ns}/{previous}"
            out.append(self.pod(_pod_from_template(
                template, name=pod_name, namespace=ns, labels=labels, owner=ref,
                annotations=annotations, spec=attrs.evolve(template.spec, volumes=tuple(volumes)),
            )))
            previous = pod_name
        return out

    # -- DaemonSet

    def daemon_set(self, ds: DaemonSet) -> list[Pod]:
        template = _template(ds)
        ns, name = ds.metadata.namespace, ds.metadata.name
        ref = _owner(ds, "DaemonSet", "apps/v1")
        tolerations = _daemon_tolerations(template.spec)
        base_spec = attrs.evolve(template.spec, tolerations=tolerations)
        labels = {
            **template.metadata.labels,
            "controller-revision-hash": template_hash(template),
            "pod-template-generation": str(ds.metadata.generation or 1),
        }
        pods = []
        for node in self.nodes:
            if not _should_run_daemon_pod(base_spec, node):
                continue
            spec = attrs.evolve(
                base_spec, affinity=_pin_to_node(base_spec.affinity, node.metadata.name)
            )
            pod_name = self.names.generate(ns, f"{name}-", "DaemonSet", node.metadata.name)
            pods.append(self.pod(_pod_from_template(
                template, name=pod_name, namespace=ns, labels=dict(labels), owner=ref, spec=spec,
            )))
        return pods

    # -- Job

    def job(self, job: Job) -> list[Pod]:
        template = _template(job)
        if job.spec.suspend:
            return []
        ns, name, uid = job.metadata.namespace, job.metadata.name, job.metadata.uid
        ref = _owner(job, "Job", "batch/v1")
        parallelism = 1 if job.spec.parallelism is None else job.spec.parallelism
        want = parallelism
        if job.spec.completions is not None:
            want = min(parallelism, max(0, job.spec.completions - job.status.succeeded))
        labels = dict(template.metadata.labels)
        if not job.spec.manual_selector:
            labels.update({
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": uid,
                "job-name": name,
            })
        indexed = job.spec.completion_mode == "Indexed"
        pods = []
        for i in range(want):
            pod_labels = dict(labels)
            annotations = {}
            if indexed:
                pod_labels["batch.kubernetes.io/job-completion-index"] = str(i)
                annotations["batch.kubernetes.io/job-completion-index"] = str(i)
                prefix = f"{name}-{i}-"
            else:
                prefix = f"{name}-"
            pod_name = self.names.generate(ns, prefix, "Job", str(i))
            pods.append(self.pod(_pod_from_template(
                template, name=pod_name, namespace=ns, labels=pod_labels, owner=ref,
                annotations=annotations,
            )))
        return pods


def _daemon_tolerations(spec: PodSpec) -> tuple[Toleration, ...]:
    """util.AddOrUpdateDaemonPodTolerations: what every DaemonSet pod tolerates."""
    wanted = [
        Toleration(key=TAINT_NOT_READY, operator="Exists", effect="NoExecute"),
        Toleration(key=TAINT_UNREACHABLE, operator="Exists", effect="NoExecute"),
        Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
        Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
        Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
        Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
    ]
    if spec.host_network:
        wanted.append(
            Toleration(key="node.kubernetes.io/network-unavailable", operator="Exists",
                       effect="NoSchedule")
        )
    result = list(spec.tolerations)
    for t in wanted:
        # AddOrUpdateTolerationInPodSpec: an equal toleration (ignoring seconds) is replaced.
        for i, old in enumerate(result):
            if (old.key, old.operator or "Equal", old.value, old.effect) == (
                t.key, t.operator, t.value, t.effect
            ):
                result[i] = t
                break
        else:
            result.append(t)
    return tuple(result)


def _should_run_daemon_pod(spec: PodSpec, node: Node) -> bool:
    """NodeShouldRunDaemonPod's predicates: nodeName, nodeSelector and required node
    affinity match, and no untolerated NoSchedule/NoExecute taint."""
    if spec.node_name and spec.node_name != node.metadata.name:
        return False
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in spec.node_selector.items()):
        return False
    na = spec.affinity.node_affinity if spec.affinity is not None else None
    if (
        na is not None
        and na.required is not None
        and not NodeSelectorMatcher(na.required).matches(labels, node.metadata.name)
    ):
        return False
    taint = find_untolerated_taint(
        node.spec.taints, spec.tolerations, lambda t: t.effect in ("NoSchedule", "NoExecute")
    )
    return taint is None


def _pin_to_node(affinity: Affinity | None, node_name: str) -> Affinity:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term
    with ``matchFields metadata.name In [node]``."""
    term = NodeSelectorTerm(
        match_fields=(NodeSelectorRequirement(key="metadata.name", operator="In",
                                              values=(node_name,)),)
    )
    required = NodeSelector(node_selector_terms=(term,))
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=required))
    na = affinity.node_affinity or NodeAffinity()
    return attrs.evolve(
        affinity,
        node_affinity=attrs.evolve(na, required_during_scheduling_ignored_during_execution=required),
    )


def expand_workloads(
    objects: Iterable[Any], *, leave_alone: Callable[[Any], bool] | None = None
) -> list[Any]:
    """Objects as the cluster would hold them after the manifests are applied.

    Pods not yet stored are admitted (namespace, scheduler name, requests from limits,
    priority from their class, DefaultTolerationSeconds, matchLabelKeys merged). Deployments,
    ReplicaSets, ReplicationControllers, StatefulSets (with their PVCs), DaemonSets (one pod
    per eligible node) and Jobs not yet stored are registered (namespace and uid set) and
    followed by the objects their controllers create, named deterministically. Stored
    objects, and those ``leave_alone`` returns True for, pass through unchanged."""
    objs = list(objects)
    skip = leave_alone or (lambda _o: False)
    ex = _Expander(objs, skip)
    out: list[Any] = []
    for o in objs:
        if not isinstance(o, KubeObject) or not ex.fresh(o):
            out.append(o)
        elif isinstance(o, Pod):
            out.append(ex.pod(o))
        elif isinstance(o, Deployment):
            dep = ex.registered(o, "apps/v1/Deployment")
            out.append(dep)
            out.extend(ex.deployment(dep))
        elif isinstance(o, ReplicaSet):
            rs = ex.registered(o, "apps/v1/ReplicaSet")
            out.append(rs)
            out.extend(ex.replica_pods(rs, "ReplicaSet", "apps/v1"))
        elif isinstance(o, ReplicationController):
            rc = ex.registered(o, "v1/ReplicationController")
            out.append(rc)
            out.extend(ex.replica_pods(rc, "ReplicationController", "v1"))
        elif isinstance(o, StatefulSet):
            sts = ex.registered(o, "apps/v1/StatefulSet")
            out.append(sts)
            out.extend(ex.stateful_set(sts))
        elif isinstance(o, DaemonSet):
            ds = ex.registered(o, "apps/v1/DaemonSet")
            out.append(ds)
            out.extend(ex.daemon_set(ds))
        elif isinstance(o, Job):
            job = ex.registered(o, "batch/v1/Job")
            out.append(job)
            out.extend(ex.job(job))
        elif isinstance(o, PersistentVolumeClaim):
            out.append(ex.admission.admit_claim(o))
        elif o.metadata.namespace == "" and _namespaced(o):
            meta = attrs.evolve(o.metadata, namespace=DEFAULT_NAMESPACE)
            out.append(attrs.evolve(o, metadata=meta))  # type: ignore[misc]
        else:
            out.append(o)
    if not ex.claim_templates:
        return out
    with_claims: list[Any] = []
    for o in out:
        if isinstance(o, Pod) and id(o) in ex.fresh_pods and o.spec.resource_claims:
            o, claims = ex.claims_for(o)
            with_claims.extend(claims)
        with_claims.append(o)
    return with_claims


_CLUSTER_SCOPED = frozenset(
    {"Node", "Namespace", "PersistentVolume", "StorageClass", "CSINode", "PriorityClass",
     "CSIDriver", "DeviceClass", "ResourceSlice"}
)


def _namespaced(obj: Any) -> bool:
    return getattr(obj, "kind", "") not in _CLUSTER_SCOPED
