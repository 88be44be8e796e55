"""A pod's ResourceClaims as kube-scheduler finds them (the resourceclaim helpers) and whether
an allocated claim is ready for binding."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import EXTENDED_RESOURCE_CLAIM_ANNOTATION, ResourceClaim
from kschedlib.plugins.dynamicresources.state import KIND_RESOURCE_CLAIM, _go_quote


def claim_ready_for_binding(claim: ResourceClaim) -> tuple[bool, str]:
    """isClaimReadyForBinding: (ready, failure message); ready when every binding condition
    of the allocated devices is True in ``status.devices`` and no failure condition is."""
    alloc = claim.status.allocation
    if alloc is None:
        return False, ""
    for res in alloc.devices.results:
        if not res.binding_conditions:
            continue
        status = next(
            (d for d in claim.status.devices
             if (d.driver, d.pool, d.device) == (res.driver, res.pool, res.device)),
            None,
        )
        if status is None:
            return False, ""
        conds = {c.type: c for c in status.conditions}
        for name in res.binding_failure_conditions:
            c = conds.get(name)
            if c is not None and c.status == "True":
                return False, (
                    f"claim {claim.metadata.name} binding failed: reason={c.reason}, "
                    f"message={_go_quote(c.message)}"
                )
        for name in res.binding_conditions:
            c = conds.get(name)
            if c is None or c.status != "True":
                return False, ""
    return True, ""


def claim_name(pod: Pod, claim: Any) -> tuple[str | None, bool, str]:
    """resourceclaim.Name: the ResourceClaim a pod claim refers to (None: no claim needed),
    whether the pod must own it, or why there is none."""
    if claim.resource_claim_name is not None:
        return claim.resource_claim_name, False, ""
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if claim.resource_claim_template_name is not None:
        for st in pod.status.resource_claim_statuses:
            if st.name == claim.name:
                return st.resource_claim_name, True, ""
        return None, False, f'pod "{key}": ResourceClaim not created yet'
    return None, False, (
        f'pod "{key}", spec.resourceClaim "{claim.name}": none of the supported fields are set'
    )


def _controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """metav1.IsControlledBy; a pod written without a uid is matched by name."""
    uid = pod.metadata.uid
    for ref in claim.metadata.owner_references:
        if ref.controller and (ref.uid == uid if uid else ref.name == pod.metadata.name):
            return True
    return False


def is_reserved_for(pod: Pod, claim: ResourceClaim) -> bool:
    """resourceclaim.IsReservedForPod: by UID only."""
    return any(r.uid == pod.uid for r in claim.status.reserved_for)


def pod_claims(pod: Pod, objects: Any) -> tuple[list[ResourceClaim], str]:
    """foreachPodResourceClaim: the pod's claims in spec order, or why one is unusable."""
    out: list[ResourceClaim] = []
    ns = pod.metadata.namespace
    for c in pod.spec.resource_claims:
        name, must_own, err = claim_name(pod, c)
        if err:
            return [], err
        if name is None:
            continue
        obj = objects.get_object(KIND_RESOURCE_CLAIM, f"{ns}/{name}")
        if not isinstance(obj, ResourceClaim):
            return [], f'could not find ResourceClaim "{ns}/{name}"'
        if obj.metadata.deletion_timestamp is not None:
            return [], f'resourceclaim "{name}" is being deleted'
        if must_own and not _controlled_by(obj, pod):
            return [], (
                f"ResourceClaim {ns}/{name} was not created for pod {ns}/{pod.metadata.name} "
                "(pod is not owner)"
            )
        out.append(obj)
    return out, ""


def extended_resource_claim(pod: Pod, objects: Any) -> ResourceClaim | None:
    """findExtendedResourceClaim: the claim the scheduler created for the pod's DRA-backed
    extended resources (annotated, controlled by the pod), if any."""
    for c in objects.list_objects(KIND_RESOURCE_CLAIM):
        if (
            isinstance(c, ResourceClaim)
            and c.metadata.namespace == pod.metadata.namespace
            and c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
            and any(
                r.controller and r.name == pod.metadata.name
                and (r.uid == pod.metadata.uid if pod.metadata.uid else True)
                for r in c.metadata.owner_references
            )
        ):
            return c
    return None
