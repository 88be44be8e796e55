"""Chainable builders for test pods and nodes, after kube-scheduler's ``st.MakePod()`` and
``st.MakeNode()`` (pkg/scheduler/testing/wrappers.go).

Each builder edits Kubernetes JSON and ``obj()`` decodes it with ``Pod.from_dict`` /
``Node.from_dict``, so a built object is exactly what the same manifest would give.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod

__all__ = ["NodeWrapper", "PodWrapper", "make_node", "make_pod"]

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"

Quantities = Mapping[str, "str | int | float"]


def _quantities(values: Quantities | None, kw: Mapping[str, Any]) -> dict[str, str]:
    out = {k: str(v) for k, v in (values or {}).items()}
    out.update({k.replace("_", "-"): str(v) for k, v in kw.items()})
    return out


def _selector(labels: Mapping[str, str] | None, expressions: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    sel: dict[str, Any] = {}
    if labels:
        sel["matchLabels"] = dict(labels)
    exprs = [dict(e) for e in expressions]
    if exprs:
        sel["matchExpressions"] = exprs
    return sel


class PodWrapper:
    """A pod under construction: every method returns the wrapper, ``obj()`` the Pod."""

    __slots__ = ("_d",)

    def __init__(self, name: str = "", namespace: str = "default") -> None:
        self._d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": []},
        }

    # -- metadata
    def name(self, name: str) -> PodWrapper:
        self._d["metadata"]["name"] = name
        return self

    def namespace(self, namespace: str) -> PodWrapper:
        self._d["metadata"]["namespace"] = namespace
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._d["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._d["metadata"].setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> PodWrapper:
        self._d["metadata"].setdefault("labels", {}).update(labels)
        return self

    def annotation(self, key: str, value: str) -> PodWrapper:
        self._d["metadata"].setdefault("annotations", {})[key] = value
        return self

    def owner(self, kind: str, name: str, uid: str = "") -> PodWrapper:
        self._d["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid or name, "controller": True}
        )
        return self

    def terminating(self, at: str = "2025-01-01T00:00:00Z") -> PodWrapper:
        self._d["metadata"]["deletionTimestamp"] = at
        return self

    # -- resources
    def _container(self, index: int = -1) -> dict[str, Any]:
        containers = self._d["spec"]["containers"]
        if not containers:
            containers.append({"name": f"c{len(containers)}", "image": "pause"})
        return containers[index]  # type: ignore[no-any-return]

    def container(self, name: str = "", image: str = "pause") -> PodWrapper:
        """Add a container; later ``req``/``lim``/``host_port`` calls apply to it."""
        containers = self._d["spec"]["containers"]
        containers.append({"name": name or f"c{len(containers)}", "image": image})
        return self

    def req(self, requests: Quantities | None = None, **kw: str | int | float) -> PodWrapper:
        """Requests of the last container: ``req(cpu="500m", memory="1Gi")`` or a mapping
        (``req({"nvidia.com/gpu": 1})``); ``ephemeral_storage=`` means ``ephemeral-storage``."""
        res = self._container().setdefault("resources", {})
        res.setdefault("requests", {}).update(_quantities(requests, kw))
        return self

    def lim(self, limits: Quantities | None = None, **kw: str | int | float) -> PodWrapper:
        """Limits of the last container."""
        res = self._container().setdefault("resources", {})
        res.setdefault("limits", {}).update(_quantities(limits, kw))
        return self

    def init_req(self, requests: Quantities | None = None, *, sidecar: bool = False,
                 **kw: str | int | float) -> PodWrapper:
        """Add an init container with these requests (``sidecar=True``: restartPolicy Always)."""
        inits = self._d["spec"].setdefault("initContainers", [])
        c: dict[str, Any] = {"name": f"init{len(inits)}", "image": "pause",
                             "resources": {"requests": _quantities(requests, kw)}}
        if sidecar:
            c["restartPolicy"] = "Always"
        inits.append(c)
        return self

    def overhead(self, overhead: Quantities | None = None, **kw: str | int | float) -> PodWrapper:
        self._d["spec"]["overhead"] = _quantities(overhead, kw)
        return self

    def image(self, image: str) -> PodWrapper:
        self._container()["image"] = image
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        """A hostPort on the last container (containerPort = hostPort)."""
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        self._container().setdefault("ports", []).append(p)
        return self

    # -- placement
    def node(self, node_name: str) -> PodWrapper:
        """spec.nodeName: the pod is bound (an existing pod) rather than pending."""
        self._d["spec"]["nodeName"] = node_name
        return self

    def nominated_node(self, node_name: str) -> PodWrapper:
        self._d.setdefault("status", {})["nominatedNodeName"] = node_name
        return self

    def phase(self, phase: str) -> PodWrapper:
        self._d.setdefault("status", {})["phase"] = phase
        return self

    def start_time(self, at: str) -> PodWrapper:
        self._d.setdefault("status", {})["startTime"] = at
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self._d["spec"]["schedulerName"] = name
        return self

    def priority(self, priority: int) -> PodWrapper:
        self._d["spec"]["priority"] = priority
        return self

    def preemption_policy(self, policy: str) -> PodWrapper:
        self._d["spec"]["preemptionPolicy"] = policy
        return self

    def scheduling_gates(self, *names: str) -> PodWrapper:
        self._d["spec"]["schedulingGates"] = [{"name": n} for n in names]
        return self

    def node_selector(self, selector: Mapping[str, str]) -> PodWrapper:
        self._d["spec"].setdefault("nodeSelector", {}).update(selector)
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "",
                   operator: str = "", seconds: int | None = None) -> PodWrapper:
        """A toleration; ``operator`` defaults to Equal with a value, Exists without."""
        t: dict[str, Any] = {"key": key, "operator": operator or ("Equal" if value else "Exists")}
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        if seconds is not None:
            t["tolerationSeconds"] = seconds
        self._d["spec"].setdefault("tolerations", []).append(t)
        return self

    def _affinity(self, kind: str) -> dict[str, Any]:
        return self._d["spec"].setdefault("affinity", {}).setdefault(kind, {})  # type: ignore[no-any-return]

    def node_affinity_in(self, key: str, values: Iterable[str], operator: str = "In") -> PodWrapper:
        """A required node-affinity term ``key <operator> values`` (each call adds a term,
        so terms are ORed, as NodeAffinityIn does)."""
        req = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        expr: dict[str, Any] = {"key": key, "operator": operator}
        if operator not in ("Exists", "DoesNotExist"):
            expr["values"] = list(values)
        req["nodeSelectorTerms"].append({"matchExpressions": [expr]})
        return self

    def node_affinity_not_in(self, key: str, values: Iterable[str]) -> PodWrapper:
        return self.node_affinity_in(key, values, operator="NotIn")

    def preferred_node_affinity(self, weight: int, key: str, values: Iterable[str],
                                operator: str = "In") -> PodWrapper:
        pref = self._affinity("nodeAffinity").setdefault(
            "preferredDuringSchedulingIgnoredDuringExecution", []
        )
        expr: dict[str, Any] = {"key": key, "operator": operator}
        if operator not in ("Exists", "DoesNotExist"):
            expr["values"] = list(values)
        pref.append({"weight": weight, "preference": {"matchExpressions": [expr]}})
        return self

    def _pod_term(self, topology_key: str, labels: Mapping[str, str] | None,
                  expressions: Iterable[Mapping[str, Any]], namespaces: Iterable[str] | None,
                  namespace_selector: Mapping[str, str] | None) -> dict[str, Any]:
        term: dict[str, Any] = {
            "topologyKey": topology_key,
            "labelSelector": _selector(labels, expressions),
        }
        if namespaces is not None:
            term["namespaces"] = list(namespaces)
        if namespace_selector is not None:
            term["namespaceSelector"] = _selector(namespace_selector)
        return term

    def pod_affinity(self, topology_key: str, labels: Mapping[str, str] | None = None, *,
                     expressions: Iterable[Mapping[str, Any]] = (),
                     namespaces: Iterable[str] | None = None,
                     namespace_selector: Mapping[str, str] | None = None,
                     weight: int | None = None) -> PodWrapper:
        """A required pod-affinity term (preferred when ``weight`` is given)."""
        return self._pod_affinity("podAffinity", topology_key, labels, expressions, namespaces,
                                  namespace_selector, weight)

    def pod_anti_affinity(self, topology_key: str, labels: Mapping[str, str] | None = None, *,
                          expressions: Iterable[Mapping[str, Any]] = (),
                          namespaces: Iterable[str] | None = None,
                          namespace_selector: Mapping[str, str] | None = None,
                          weight: int | None = None) -> PodWrapper:
        """A required pod-anti-affinity term (preferred when ``weight`` is given)."""
        return self._pod_affinity("podAntiAffinity", topology_key, labels, expressions,
                                  namespaces, namespace_selector, weight)

    def _pod_affinity(self, kind: str, topology_key: str, labels: Mapping[str, str] | None,
                      expressions: Iterable[Mapping[str, Any]], namespaces: Iterable[str] | None,
                      namespace_selector: Mapping[str, str] | None,
                      weight: int | None) -> PodWrapper:
        term = self._pod_term(topology_key, labels, expressions, namespaces, namespace_selector)
        aff = self._affinity(kind)
        if weight is None:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def spread_constraint(self, max_skew: int, topology_key: str,
                          when_unsatisfiable: str = "DoNotSchedule",
                          labels: Mapping[str, str] | None = None, *,
                          expressions: Iterable[Mapping[str, Any]] = (),
                          min_domains: int | None = None,
                          match_label_keys: Iterable[str] = (),
                          node_affinity_policy: str | None = None,
                          node_taints_policy: str | None = None) -> PodWrapper:
        """A topologySpreadConstraint (SpreadConstraint in kube-scheduler's wrappers)."""
        c: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when_unsatisfiable,
            "labelSelector": _selector(labels, expressions),
        }
        if min_domains is not None:
            c["minDomains"] = min_domains
        if match_label_keys:
            c["matchLabelKeys"] = list(match_label_keys)
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        self._d["spec"].setdefault("topologySpreadConstraints", []).append(c)
        return self

    # -- volumes and claims
    def volume(self, volume: Mapping[str, Any]) -> PodWrapper:
        """A volume as Kubernetes JSON, e.g. ``{"name": "v", "emptyDir": {}}``."""
        self._d["spec"].setdefault("volumes", []).append(copy.deepcopy(dict(volume)))
        return self

    def pvc(self, claim_name: str, volume_name: str = "", read_only: bool = False) -> PodWrapper:
        """A persistentVolumeClaim volume."""
        src: dict[str, Any] = {"claimName": claim_name}
        if read_only:
            src["readOnly"] = True
        return self.volume({"name": volume_name or claim_name, "persistentVolumeClaim": src})

    def claim(self, name: str, resource_claim_name: str | None = None,
              template: str | None = None) -> PodWrapper:
        """A pod resource claim (DRA): by claim name or by ResourceClaimTemplate name."""
        c: dict[str, Any] = {"name": name}
        if template is not None:
            c["resourceClaimTemplateName"] = template
        else:
            c["resourceClaimName"] = resource_claim_name or name
        self._d["spec"].setdefault("resourceClaims", []).append(c)
        return self

    # -- output
    def to_dict(self) -> dict[str, Any]:
        """The pod as Kubernetes JSON (a copy)."""
        d = copy.deepcopy(self._d)
        if not d["spec"]["containers"]:
            d["spec"]["containers"] = [{"name": "c0", "image": "pause"}]
        return d

    def obj(self) -> Pod:
        """The Pod (decoded and validated like any manifest)."""
        return Pod.from_dict(self.to_dict())


class NodeWrapper:
    """A node under construction: every method returns the wrapper, ``obj()`` the Node."""

    __slots__ = ("_d",)

    def __init__(self, name: str = "") -> None:
        self._d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {LABEL_HOSTNAME: name}},
            "spec": {},
            "status": {"capacity": {"pods": "110"}, "allocatable": {"pods": "110"}},
        }

    def name(self, name: str) -> NodeWrapper:
        self._d["metadata"]["name"] = name
        self._d["metadata"]["labels"][LABEL_HOSTNAME] = name
        return self

    def label(self, key: str, value: str) -> NodeWrapper:
        self._d["metadata"]["labels"][key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> NodeWrapper:
        self._d["metadata"]["labels"].update(labels)
        return self

    def zone(self, zone: str, region: str | None = None) -> NodeWrapper:
        """topology.kubernetes.io/zone (and region when given)."""
        self.label(LABEL_ZONE, zone)
        if region is not None:
            self.label(LABEL_REGION, region)
        return self

    def capacity(self, resources: Quantities | None = None, **kw: str | int | float) -> NodeWrapper:
        """Capacity and allocatable alike (``capacity(cpu="4", memory="8Gi")``); call
        ``allocatable`` afterwards to make them differ."""
        q = _quantities(resources, kw)
        self._d["status"]["capacity"].update(q)
        self._d["status"]["allocatable"].update(q)
        return self

    def allocatable(self, resources: Quantities | None = None, **kw: str | int | float) -> NodeWrapper:
        self._d["status"]["allocatable"].update(_quantities(resources, kw))
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeWrapper:
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._d["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, flag: bool = True) -> NodeWrapper:
        self._d["spec"]["unschedulable"] = flag
        return self

    def image(self, name: str, size_bytes: int) -> NodeWrapper:
        self._d["status"].setdefault("images", []).append({"names": [name], "sizeBytes": size_bytes})
        return self

    def condition(self, type_: str, status: str = "True") -> NodeWrapper:
        self._d["status"].setdefault("conditions", []).append({"type": type_, "status": status})
        return self

    def to_dict(self) -> dict[str, Any]:
        """The node as Kubernetes JSON (a copy)."""
        return copy.deepcopy(self._d)

    def obj(self) -> Node:
        return Node.from_dict(self.to_dict())


def make_pod(name: str = "", namespace: str = "default") -> PodWrapper:
    """``st.MakePod()``: ``make_pod("p").req(cpu="1").label("app", "web").obj()``."""
    return PodWrapper(name, namespace)


def make_node(name: str = "") -> NodeWrapper:
    """``st.MakeNode()``: ``make_node("n1").capacity(cpu="4", memory="8Gi").zone("z1").obj()``."""
    return NodeWrapper(name)
