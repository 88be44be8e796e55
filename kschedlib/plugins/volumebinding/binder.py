"""The volume binder: sorts a pod's claims (PreFilter), finds PVs or provisioning for them
per node (Filter) and assumes the chosen bindings in memory (Reserve); see binder.go.

Per-node work is reduced to node-affinity matches over candidates prepared once per pod.
Storage capacity tracking (CSIStorageCapacity) is not modelled: provisioning never lacks space.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.api.selectors import NodeSelectorMatcher
from kschedlib.api.storage import (
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    TopologySelectorTerm,
)
from kschedlib.plugins.volumebinding import csi_translation as trans
from kschedlib.plugins.volumebinding.assume_cache import AssumeCache
from kschedlib.plugins.volumebinding.storage_helpers import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    KIND_CSI_NODE,
    KIND_PV,
    KIND_PVC,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    check_access_modes,
    claim_name_of,
    get_storage_class,
    is_delay_binding_mode,
    is_pvc_fully_bound,
    is_volume_bound_to_claim,
    match_topology_selector_terms,
    pv_class,
    pv_node_affinity_matcher,
    pvc_class,
    storage_capacity,
    storage_request,
    volume_is_for_pod,
    volume_mode_mismatch,
)

HOSTNAME_LABEL = "kubernetes.io/hostname"

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)


class BinderError(Exception):
    """Something other than the node is wrong (missing class, bad claim): an Error status."""


@attrs.define(slots=True, frozen=True)
class BindingInfo:
    """A PV chosen for an unbound claim (static binding)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.spec.storage_class_name

    def storage_resource(self) -> tuple[int, int]:
        """(requested, capacity) in bytes."""
        return storage_request(self.pvc).value(), storage_capacity(self.pv).value()


@attrs.define(slots=True, frozen=True)
class PodVolumes:
    """The pod's volume decisions for one node."""

    static_bindings: tuple[BindingInfo, ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()


NO_POD_VOLUMES = PodVolumes()


@attrs.define(slots=True, frozen=True)
class _Candidate:
    pv: PersistentVolume
    matcher: NodeSelectorMatcher | None
    order: int = 0

    def fits(self, labels: Mapping[str, str]) -> bool:
        return self.matcher is None or self.matcher.matches(labels, "")


@attrs.define(slots=True, frozen=True)
class CandidateIndex:
    """Candidates in preference order, indexed by a label their node affinity requires
    (``key In [values]`` in every term, as local PVs pin ``kubernetes.io/hostname``), so that
    a node only walks the candidates it may satisfy."""

    anywhere: tuple[_Candidate, ...] = ()
    by_label: Mapping[str, Mapping[str, tuple[_Candidate, ...]]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, candidates: list[_Candidate]) -> CandidateIndex:
        anywhere: list[_Candidate] = []
        by_label: dict[str, dict[str, list[_Candidate]]] = {}
        for c in candidates:
            pin = _required_label(c.pv)
            if pin is None:
                anywhere.append(c)
                continue
            key, values = pin
            per_value = by_label.setdefault(key, {})
            for v in values:
                per_value.setdefault(v, []).append(c)
        return cls(
            tuple(anywhere),
            {k: {v: tuple(cs) for v, cs in m.items()} for k, m in by_label.items()},
        )

    def for_node(self, labels: Mapping[str, str]) -> Iterable[_Candidate]:
        """The candidates the node may satisfy, in preference order."""
        lists = [self.anywhere] if self.anywhere else []
        for key, per_value in self.by_label.items():
            value = labels.get(key)
            hit = per_value.get(value) if value is not None else None
            if hit:
                lists.append(hit)
        if not lists:
            return ()
        if len(lists) == 1:
            return lists[0]
        return heapq.merge(*lists, key=lambda c: c.order)


def _required_label(pv: PersistentVolume) -> tuple[str, frozenset[str]] | None:
    """A label key every term of the PV's node affinity requires ``In`` some values, and the
    values a node's label must be among; None when there is no such key."""
    na = pv.spec.node_affinity
    if na is None or na.required is None or not na.required.node_selector_terms:
        return None
    common: set[str] | None = None
    for term in na.required.node_selector_terms:
        keys = {r.key for r in term.match_expressions if r.operator == "In"}
        common = keys if common is None else common & keys
    if not common:
        return None
    key = HOSTNAME_LABEL if HOSTNAME_LABEL in common else min(common)
    values = frozenset(
        v
        for term in na.required.node_selector_terms
        for r in term.match_expressions
        if r.key == key and r.operator == "In"
        for v in r.values
    )
    return key, values


@attrs.define(slots=True, frozen=True)
class BoundClaim:
    """A fully bound claim, its PV (None when missing) and that PV's node affinity, plain and
    as translated to CSI for nodes where its in-tree plugin was migrated."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume | None
    matcher: NodeSelectorMatcher | None = None
    plugin: str | None = None
    translated: NodeSelectorMatcher | None = None


@attrs.define(slots=True, frozen=True)
class _Provisioning:
    """What checkVolumeProvisions needs of a claim's class; ``error`` when it can't be read."""

    error: str = ""
    supported: bool = False
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()


@attrs.define(slots=True, frozen=True)
class DelayClaim:
    """An unbound WaitForFirstConsumer claim with its PV candidates: those pre-bound to it,
    then the available ones by increasing capacity."""

    pvc: PersistentVolumeClaim
    selected_node: str | None
    prebound: tuple[_Candidate, ...]
    candidates: CandidateIndex
    provisioning: _Provisioning


@attrs.define(slots=True, frozen=True)
class PodVolumeClaims:
    """A pod's claims, sorted as GetPodVolumeClaims does, prepared for per-node checks."""

    bound_claims: tuple[BoundClaim, ...] = ()
    unbound_claims_delay_binding: tuple[DelayClaim, ...] = ()
    unbound_claims_immediate: tuple[PersistentVolumeClaim, ...] = ()
    selected_nodes: frozenset[str] = frozenset()
    claims_with_selected_node: tuple[DelayClaim, ...] = ()
    claims_to_find_matching: tuple[DelayClaim, ...] = ()
    has_migratable_bound_pv: bool = False


def _vac(spec: Any) -> str:
    """The volume attributes class of a PV/PVC spec ("" when unset or not modelled)."""
    return getattr(spec, "volume_attributes_class_name", None) or ""


def _pvc_key(pvc: PersistentVolumeClaim) -> str:
    return f"{pvc.metadata.namespace}/{pvc.metadata.name}"


class VolumeBinder:
    """Binding decisions over assume caches for PVs and PVCs."""

    __slots__ = ("_handle", "pv_cache", "pvc_cache", "_matchers")

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.pv_cache = AssumeCache(handle, KIND_PV)
        self.pvc_cache = AssumeCache(handle, KIND_PVC)
        # PV name -> (the PV object, its compiled node affinity): compiled once per version.
        self._matchers: dict[str, tuple[PersistentVolume, NodeSelectorMatcher | None]] = {}

    def clone(self, handle: Any) -> VolumeBinder:
        """A copy bound to ``handle`` with copies of the assume caches (scheduler forks)."""
        new = VolumeBinder.__new__(VolumeBinder)
        new._handle = handle
        new.pv_cache = self.pv_cache.clone(handle)
        new.pvc_cache = self.pvc_cache.clone(handle)
        new._matchers = dict(self._matchers)
        return new

    def _matcher(self, pv: PersistentVolume) -> NodeSelectorMatcher | None:
        hit = self._matchers.get(pv.metadata.name)
        if hit is not None and hit[0] is pv:
            return hit[1]
        m = pv_node_affinity_matcher(pv)
        self._matchers[pv.metadata.name] = (pv, m)
        return m

    @property
    def objects(self) -> Any:
        return self._handle.objects

    # --- PreFilter ---

    def _claim(self, pod: Pod, name: str, ephemeral: bool) -> PersistentVolumeClaim:
        pvc = self.pvc_cache.get(f"{pod.metadata.namespace}/{name}")
        if not isinstance(pvc, PersistentVolumeClaim):
            key = f"{pod.metadata.namespace}/{name}"
            raise BinderError(
                f'error getting PVC "{key}": could not find v1.PersistentVolumeClaim "{key}"'
            )
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                raise BinderError(err)
        return pvc

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """Bound, unbound-delayed (with their PV candidates) and unbound-immediate claims."""
        bound: list[BoundClaim] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate: list[PersistentVolumeClaim] = []
        for vol in pod.spec.volumes:
            ref = claim_name_of(pod, vol)
            if ref is None:
                continue
            pvc = self._claim(pod, *ref)
            if is_pvc_fully_bound(pvc):
                bound.append(self._bound_claim(pvc))
            elif is_delay_binding_mode(self.objects, pvc) and not pvc.spec.volume_name:
                delayed.append(pvc)
            else:
                immediate.append(pvc)
        pvs_by_class: dict[str, list[PersistentVolume]] = {}
        if delayed:
            for pv in sorted(self.pv_cache.list(), key=lambda p: p.metadata.name):
                if isinstance(pv, PersistentVolume):
                    pvs_by_class.setdefault(pv_class(pv), []).append(pv)
        delay_claims = tuple(
            self._delay_claim(pvc, pvs_by_class.get(pvc_class(pvc), ())) for pvc in delayed
        )
        with_node = tuple(c for c in delay_claims if c.selected_node is not None)
        # byPVCSize: smallest request first (a stable sort for the few claims of a pod).
        to_match = tuple(
            sorted(
                (c for c in delay_claims if c.selected_node is None),
                key=lambda c: storage_request(c.pvc),
            )
        )
        return PodVolumeClaims(
            bound_claims=tuple(bound),
            unbound_claims_delay_binding=delay_claims,
            unbound_claims_immediate=tuple(immediate),
            selected_nodes=frozenset(c.selected_node for c in with_node if c.selected_node),
            claims_with_selected_node=with_node,
            claims_to_find_matching=to_match,
            has_migratable_bound_pv=any(b.plugin is not None for b in bound),
        )

    def _bound_claim(self, pvc: PersistentVolumeClaim) -> BoundClaim:
        pv = self.pv_cache.get(pvc.spec.volume_name)
        if not isinstance(pv, PersistentVolume):
            return BoundClaim(pvc, None)
        matcher = self._matcher(pv)
        plugin = trans.pv_plugin_name(pv)
        if plugin is None:
            return BoundClaim(pvc, pv, matcher)
        ns = trans.translated_node_affinity(pv, plugin)
        translated = NodeSelectorMatcher(ns) if ns is not None else None
        return BoundClaim(pvc, pv, matcher, plugin, translated)

    def _delay_claim(
        self, pvc: PersistentVolumeClaim, pvs: list[PersistentVolume] | tuple[()]
    ) -> DelayClaim:
        """FindMatchingVolume's node-independent checks, done once for the pod."""
        request = storage_request(pvc)
        requested_class = pvc_class(pvc)
        claim_vac = _vac(pvc.spec)
        selector = pvc.spec.selector.as_selector() if pvc.spec.selector is not None else None
        prebound: list[_Candidate] = []
        candidates: list[tuple[Any, str, PersistentVolume]] = []
        for pv in pvs:
            if pv.spec.claim_ref is not None and not is_volume_bound_to_claim(pv, pvc):
                continue
            capacity = storage_capacity(pv)
            if capacity.cmp(request) < 0 or volume_mode_mismatch(pvc.spec, pv.spec):
                continue
            if claim_vac and claim_vac != _vac(pv.spec):
                continue
            if pv.metadata.deletion_timestamp is not None:
                continue
            if is_volume_bound_to_claim(pv, pvc):
                prebound.append(_Candidate(pv, self._matcher(pv)))
                continue
            if pv.status.phase != VOLUME_AVAILABLE:
                continue
            if selector is not None and not selector.matches(pv.metadata.labels):
                continue
            if pv_class(pv) != requested_class or not check_access_modes(pvc, pv):
                continue
            candidates.append((capacity, pv.metadata.name, pv))
        candidates.sort(key=lambda t: (t[0], t[1]))
        ordered = [_Candidate(pv, self._matcher(pv), i) for i, (_, _, pv) in enumerate(candidates)]
        return DelayClaim(
            pvc=pvc,
            selected_node=pvc.metadata.annotations.get(ANN_SELECTED_NODE),
            prebound=tuple(prebound),
            candidates=CandidateIndex.of(ordered),
            provisioning=self._provisioning(pvc),
        )

    def _provisioning(self, pvc: PersistentVolumeClaim) -> _Provisioning:
        name = pvc_class(pvc)
        if not name:
            return _Provisioning(error=f'no class for claim "{_pvc_key(pvc)}"')
        sc = get_storage_class(self.objects, name)
        if sc is None:
            return _Provisioning(error=f'failed to find storage class "{name}"')
        supported = sc.provisioner not in ("", NOT_SUPPORTED_PROVISIONER)
        return _Provisioning(supported=supported, allowed_topologies=sc.allowed_topologies)

    # --- Filter ---

    def find_pod_volumes(
        self, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, tuple[str, ...]]:
        """The bindings and provisionings the pod gets on ``node``, or why it can't run there.

        Raises BinderError for problems that are not the node's (an Error status)."""
        labels = node.metadata.labels
        bound_ok = pv_found = unbound_ok = enough_storage = True
        static: list[BindingInfo] = []
        dynamic: list[PersistentVolumeClaim] = []
        if claims.bound_claims:
            bound_ok, pv_found = self._check_bound_claims(claims, node)
        if claims.unbound_claims_delay_binding:
            selected = claims.selected_nodes
            if selected and (len(selected) > 1 or node.metadata.name not in selected):
                unbound_ok = False
            else:
                to_provision = list(claims.claims_with_selected_node)
                if claims.claims_to_find_matching:
                    unbound_ok, missing = self._find_matching_volumes(claims, labels, static)
                    to_provision.extend(missing)
                if to_provision:
                    unbound_ok, enough_storage = self._check_provisions(
                        to_provision, labels, dynamic
                    )
        if bound_ok and pv_found and unbound_ok and enough_storage:
            if not static and not dynamic:
                return NO_POD_VOLUMES, ()
            return PodVolumes(tuple(static), tuple(dynamic)), ()
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pv_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(tuple(static), tuple(dynamic)), tuple(reasons)

    def _check_bound_claims(self, claims: PodVolumeClaims, node: Node) -> tuple[bool, bool]:
        """(node affinity satisfied, every PV found), stopping at the first problem."""
        labels = node.metadata.labels
        migrated: frozenset[str] = frozenset()
        if claims.has_migratable_bound_pv:
            csi_node = self.objects.get_object(KIND_CSI_NODE, node.metadata.name)
            migrated = trans.migrated_plugins(csi_node)
        for bc in claims.bound_claims:
            if bc.pv is None:
                return True, False
            matcher = (
                bc.translated if bc.plugin is not None and bc.plugin in migrated else bc.matcher
            )
            if matcher is not None and not matcher.matches(labels, ""):
                return False, True
        return True, True

    @staticmethod
    def _find_matching_volumes(
        claims: PodVolumeClaims, labels: Mapping[str, str], out: list[BindingInfo]
    ) -> tuple[bool, list[DelayClaim]]:
        """findMatchingVolumes: the smallest fitting PV per claim, each PV used once."""
        chosen: set[str] = set()
        unmatched: list[DelayClaim] = []
        for dc in claims.claims_to_find_matching:
            pv = _match(dc, chosen, labels)
            if pv is None:
                unmatched.append(dc)
                continue
            chosen.add(pv.metadata.name)
            out.append(BindingInfo(dc.pvc, pv))
        return not unmatched, unmatched

    @staticmethod
    def _check_provisions(
        claims: list[DelayClaim], labels: Mapping[str, str], out: list[PersistentVolumeClaim]
    ) -> tuple[bool, bool]:
        """checkVolumeProvisions: (provisioning possible, enough storage)."""
        for dc in claims:
            p = dc.provisioning
            if p.error:
                raise BinderError(p.error)
            if not p.supported or not match_topology_selector_terms(p.allowed_topologies, labels):
                out.clear()
                return False, True
            out.append(dc.pvc)
        return True, True

    # --- Reserve / Unreserve / PreBind ---

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        ns = pod.metadata.namespace
        for vol in pod.spec.volumes:
            ref = claim_name_of(pod, vol)
            if ref is None:
                continue
            pvc = self.pvc_cache.get(f"{ns}/{ref[0]}")
            if not isinstance(pvc, PersistentVolumeClaim) or not is_pvc_fully_bound(pvc):
                return False
        return True

    def assume_pod_volumes(
        self, pod: Pod, node_name: str, pod_volumes: PodVolumes
    ) -> tuple[bool, PodVolumes]:
        """Assume the node's bindings: PVs pre-bound to their claims, claims to provision
        annotated with the node. Returns (all already bound, the assumed PodVolumes)."""
        if self.are_pod_volumes_bound(pod):
            return True, pod_volumes
        bindings: list[BindingInfo] = []
        provisions: list[PersistentVolumeClaim] = []
        try:
            for b in pod_volumes.static_bindings:
                new_pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
                if dirty:
                    self.pv_cache.assume(new_pv)
                bindings.append(BindingInfo(b.pvc, new_pv))
            for claim in pod_volumes.dynamic_provisions:
                ann = {**claim.metadata.annotations, ANN_SELECTED_NODE: node_name}
                clone = attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, annotations=ann))
                self.pvc_cache.assume(clone)
                provisions.append(clone)
        except KeyError as exc:
            self.revert_assumed_pod_volumes(PodVolumes(tuple(bindings), tuple(provisions)))
            raise BinderError(str(exc)) from None
        return False, PodVolumes(tuple(bindings), tuple(provisions))

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        for b in pod_volumes.static_bindings:
            self.pv_cache.restore(b.pv.metadata.name)
        for claim in pod_volumes.dynamic_provisions:
            self.pvc_cache.restore(_pvc_key(claim))


def _match(dc: DelayClaim, chosen: set[str], labels: Mapping[str, str]) -> PersistentVolume | None:
    """FindMatchingVolume on the prepared candidates: a PV pre-bound to the claim decides
    alone; otherwise the smallest available PV whose node affinity the node satisfies."""
    for cand in dc.prebound:
        if cand.pv.metadata.name in chosen:
            continue
        return cand.pv if cand.fits(labels) else None
    for cand in dc.candidates.for_node(labels):
        if cand.pv.metadata.name not in chosen and cand.fits(labels):
            return cand.pv
    return None


def bind_volume_to_claim(
    pv: PersistentVolume, pvc: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """GetBindVolumeToClaim: the PV with claimRef on the claim (and bound-by-controller when
    the binding is new); whether anything changed."""
    new_pv = pv
    dirty = False
    ref = pv.spec.claim_ref
    meta = pvc.metadata
    if ref is None or (ref.name, ref.namespace, ref.uid) != (meta.name, meta.namespace, meta.uid):
        claim_ref = ObjectReference(
            kind="PersistentVolumeClaim", namespace=meta.namespace, name=meta.name, uid=meta.uid
        )
        new_pv = attrs.evolve(new_pv, spec=attrs.evolve(new_pv.spec, claim_ref=claim_ref))
        dirty = True
    if (
        not is_volume_bound_to_claim(pv, pvc)
        and ANN_BOUND_BY_CONTROLLER not in pv.metadata.annotations
    ):
        ann = {**pv.metadata.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        new_pv = attrs.evolve(new_pv, metadata=attrs.evolve(new_pv.metadata, annotations=ann))
        dirty = True
    return new_pv, dirty


__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "NO_POD_VOLUMES",
    "BinderError",
    "BindingInfo",
    "BoundClaim",
    "DelayClaim",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
    "bind_volume_to_claim",
]
