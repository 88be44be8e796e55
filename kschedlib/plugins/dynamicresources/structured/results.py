"""The AllocationResults: device results (shared between cycles when immutable), configs and
node selectors."""

from __future__ import annotations

import uuid
from typing import Any

from kschedlib.api.resource_v1 import (
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    ResourceClaim,
)
from kschedlib.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.plugins.dynamicresources.structured.common import (
    AllocationError,
    DeviceID,
    _claim_key,
    _Req,
    _Result,
)
from kschedlib.plugins.dynamicresources.structured.state import RunState


class Results(RunState):
    """Building one run's AllocationResults."""

    def _full_result(
        self, claim: ResourceClaim, index: int, r: _Result
    ) -> DeviceRequestAllocationResult:
        """An allocation result of the experimental allocator: tolerations, share ID and
        consumed capacity, binding conditions."""
        fts = self.a.features
        share_id = None
        if r.shared:
            # kube-scheduler draws a random UUID; a stable one keeps runs reproducible.
            share_id = str(uuid.uuid5(
                uuid.NAMESPACE_URL,
                f"{claim.metadata.uid or _claim_key(claim)}/{index}/{'/'.join(r.id)}",
            ))
        dev = r.device
        return DeviceRequestAllocationResult(
            request=r.req.full_name, driver=r.id[0], pool=r.id[1], device=r.id[2],
            admin_access=True if r.req.admin_access else None,
            tolerations=r.req.tolerations,
            binding_conditions=(
                dev.binding_conditions if dev is not None and fts.device_binding_conditions
                else ()
            ),
            binding_failure_conditions=(
                dev.binding_failure_conditions
                if dev is not None and fts.device_binding_conditions else ()
            ),
            share_id=share_id,
            consumed_capacity=dict(r.consumed) if r.consumed else {},
        )

    @staticmethod
    def _config(
        claim: ResourceClaim, results: list[_Result]
    ) -> tuple[DeviceAllocationConfiguration, ...]:
        """The configs of the chosen (sub)requests' classes, once per class with every
        request using the class, then the claim's configs: those for all requests, and the
        others once per request (or chosen subrequest) they name, as v1.35 writes them."""
        if not claim.spec.devices.config and all(
            r.req.device_class is None or not r.req.device_class.spec.config for r in results
        ):
            return ()
        chosen: dict[str, _Req] = {}
        for r in results:
            chosen.setdefault(r.req.base_name, r.req)
        class_configs: list[tuple[list[str], Any]] = []
        by_class: dict[str, list[list[str]]] = {}
        for request in claim.spec.devices.requests:
            req = chosen.get(request.name)
            if req is None or req.device_class is None:
                continue
            dc = req.device_class
            lists = by_class.get(dc.metadata.name)
            if lists is not None:
                for names in lists:
                    names.append(req.full_name)
                continue
            lists = []
            for c in dc.spec.config:
                names = [req.full_name]
                lists.append(names)
                class_configs.append((names, c.opaque))
            by_class[dc.metadata.name] = lists
        out = [
            DeviceAllocationConfiguration(source="FromClass", requests=tuple(names), opaque=op)
            for names, op in class_configs
        ]
        for cc in claim.spec.devices.config:
            if not cc.requests:
                out.append(DeviceAllocationConfiguration(
                    source="FromClaim", requests=cc.requests, opaque=cc.opaque))
                continue
            for request in claim.spec.devices.requests:
                req = chosen.get(request.name)
                if request.name in cc.requests or (
                    req is not None and req.parent and req.full_name in cc.requests
                ):
                    out.append(DeviceAllocationConfiguration(
                        source="FromClaim", requests=cc.requests, opaque=cc.opaque))
        return tuple(out)

    @staticmethod
    def _node_selector(results: list[_Result], node_name: str = "") -> NodeSelector | None:
        """createNodeSelector; ``node_name`` (the experimental allocator) enables per-device
        node selection and devices that bind to the node."""
        fields: list[NodeSelectorRequirement] = []
        exprs: list[NodeSelectorRequirement] = []
        for r in results:
            spec = r.slice.spec
            dev = r.device
            if node_name and spec.per_device_node_selection and dev is not None:
                if dev.node_name or dev.binds_to_node:
                    return _node_name_selector(node_name)
                sel = dev.node_selector
            else:
                if spec.node_name or (node_name and dev is not None and dev.binds_to_node):
                    return _node_name_selector(node_name or spec.node_name or "")
                sel = spec.node_selector
            if sel is not None:
                if len(sel.node_selector_terms) == 1:
                    t = sel.node_selector_terms[0]
                    fields.extend(x for x in t.match_fields if x not in fields)
                    exprs.extend(x for x in t.match_expressions if x not in exprs)
                elif len(sel.node_selector_terms) > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim: unsupported ResourceSlice.NodeSelector "
                        f"with {len(sel.node_selector_terms)} terms"
                    )
        if fields or exprs:
            return NodeSelector(node_selector_terms=(NodeSelectorTerm(
                match_expressions=tuple(exprs), match_fields=tuple(fields)),))
        return None


_NODE_NAME_SELECTORS: dict[str, NodeSelector] = {}
_DEVICE_RESULTS: dict[tuple[str, DeviceID, bool], DeviceRequestAllocationResult] = {}


def _device_result(request: str, did: DeviceID, admin: bool) -> DeviceRequestAllocationResult:
    """One allocation result (immutable, so shared between cycles)."""
    key = (request, did, admin)
    r = _DEVICE_RESULTS.get(key)
    if r is None:
        r = DeviceRequestAllocationResult(
            request=request, driver=did[0], pool=did[1], device=did[2],
            admin_access=True if admin else None,
        )
        if len(_DEVICE_RESULTS) > 100_000:
            _DEVICE_RESULTS.clear()
        _DEVICE_RESULTS[key] = r
    return r


def _node_name_selector(name: str) -> NodeSelector:
    """The selector for devices local to one node (immutable, so shared)."""
    sel = _NODE_NAME_SELECTORS.get(name)
    if sel is None:
        sel = NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(
            NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,)),
        )),))
        if len(_NODE_NAME_SELECTORS) > 100_000:
            _NODE_NAME_SELECTORS.clear()
        _NODE_NAME_SELECTORS[name] = sel
    return sel
