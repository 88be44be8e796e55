"""The workload controllers: Deployments, ReplicaSets, ReplicationControllers, StatefulSets,
DaemonSets and Jobs expanded into the pods (and claims) they create; expand_workloads."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from kschedlib.api.expand.admission import (
    DEFAULT_NAMESPACE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    Admission,
    is_stored,
)
from kschedlib.api.expand.names import _Names, _uid, random_suffix, template_hash
from kschedlib.api.meta import KubeObject, ObjectMeta, OwnerReference
from kschedlib.api.node import Node
from kschedlib.api.pod import (
    Affinity,
    NodeAffinity,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodResourceClaimStatus,
    PodSpec,
    Toleration,
    Volume,
)
from kschedlib.api.resource_v1 import (
    POD_CLAIM_NAME_ANNOTATION,
    ResourceClaim,
    ResourceClaimTemplate,
)
from kschedlib.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorMatcher,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kschedlib.api.storage import PersistentVolumeClaim
from kschedlib.api.taints import find_untolerated_taint
from kschedlib.api.workloads import (
    DaemonSet,
    Deployment,
    Job,
    PodTemplateSpec,
    ReplicaSet,
    ReplicationController,
    SelectorSpec,
    StatefulSet,
)
from kschedlib.errors import InvalidObjectError

# Annotation on StatefulSet pods created under OrderedReady: the pod that must be running
# before this one is created (the simulation creates it once its predecessor is bound).
CREATED_AFTER_ANNOTATION = "kschedlib.io/created-after"


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
