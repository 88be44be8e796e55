"""The structured allocator of k8s.io/dynamic-resource-allocation (v1.35, the implementation
selected for the default feature set: AdminAccess and PrioritizedList on, the alpha features
off): which devices a node can give to a pod's claims.

Search order, as in Go: claims in pod order, requests in claim order (a request with
``firstAvailable`` tries its subrequests in order), then for each device needed the pools
(here: in the order their first slice appears), each pool's slices in list order (the
scheduler lists them by name) and each slice's devices in order, backtracking over earlier
choices when a later request or a ``matchAttribute`` constraint cannot be satisfied."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

from kschedlib.api.node import Node
from kschedlib.api.resource_v1 import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.api.selectors import (
    NodeSelector,
    NodeSelectorMatcher,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kschedlib.plugins.dynamicresources.selector_cache import (
    CELCompileError,
    CELError,
    SelectorCache,
)

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""


class AllocationError(Exception):
    """Something wrong with a claim, class or pool: aborts the scheduling cycle (Error)."""


class _TooMany(Exception):
    """errAllocationResultMaxSizeExceeded: the claim would get more results than allowed."""


class FailedOnNode(AllocationError):  # noqa: N818 - the Go name
    """ErrFailedAllocationOnNode: a problem of this node only (invalid pools); the node is
    unschedulable with this message, other nodes may still work."""


@attrs.define(slots=True, frozen=True)
class Features:
    """The allocator features of v1.35's default feature set; alpha ones off."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False  # DRAPartitionableDevices (alpha)
    device_taints: bool = False  # DRADeviceTaints (alpha)
    consumable_capacity: bool = False  # DRAConsumableCapacity (alpha)
    device_binding_conditions: bool = False  # DRADeviceBindingConditions (alpha)


def node_selector_of_slice(s: ResourceSlice) -> NodeSelectorMatcher | None:
    sel = s.spec.node_selector
    return NodeSelectorMatcher(sel) if sel is not None else None


class _Pool:
    __slots__ = ("driver", "name", "generation", "slices", "incomplete", "invalid", "_flat")

    def __init__(self, driver: str, name: str, first: ResourceSlice) -> None:
        self.driver = driver
        self.name = name
        self.generation = first.spec.pool.generation
        self.slices: list[ResourceSlice] = [first]
        self.incomplete = False
        self.invalid = ""
        self._flat: list[tuple[DeviceID, Device, ResourceSlice]] | None = None

    def devices(self) -> list[tuple[DeviceID, Device, ResourceSlice]]:
        """The pool's devices in search order (slices in order, devices in order)."""
        flat = self._flat
        if flat is None:
            flat = [
                ((s.spec.driver, s.spec.pool.name, d.name), d, s)
                for s in self.slices
                for d in s.spec.devices
            ]
            self._flat = flat
        return flat

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _add_slice(pools: dict[tuple[str, str], _Pool], s: ResourceSlice) -> None:
    key = (s.spec.driver, s.spec.pool.name)
    pool = pools.get(key)
    if pool is None:
        pools[key] = _Pool(key[0], key[1], s)
        return
    gen = s.spec.pool.generation
    if gen < pool.generation:
        return  # outdated
    if gen > pool.generation:
        pool.slices = []
        pool.generation = gen
    pool.slices.append(s)


class SliceIndex:
    """The ResourceSlices of a cycle, indexed by node so that gathering a node's pools does
    not walk every slice (GatherPools' result is the same)."""

    __slots__ = ("_by_node", "_selected", "order", "_pools", "_generations")

    def __init__(self, slices: Iterable[ResourceSlice], features: Features) -> None:
        ordered = sorted(slices, key=lambda s: s.metadata.name)
        self.order = {id(s): i for i, s in enumerate(ordered)}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        # Pools per node object (nodes are immutable: a label change is a new object).
        self._pools: dict[str, tuple[Node, list[_Pool]]] = {}
        # Slices for all nodes or with a node selector, in order, with their matcher (None =
        # all nodes).
        self._selected: list[tuple[ResourceSlice, NodeSelectorMatcher | None]] = []
        # Per pool: how many slices each generation has, over all slices (checkSlicesInPool).
        self._generations: dict[tuple[str, str], dict[int, int]] = {}
        for s in ordered:
            spec = s.spec
            gens = self._generations.setdefault((spec.driver, spec.pool.name), {})
            gens[spec.pool.generation] = gens.get(spec.pool.generation, 0) + 1
            if not features.partitionable_devices and spec.per_device_node_selection:
                continue  # perDeviceNodeSelection needs DRAPartitionableDevices
            if spec.node_name:
                self._by_node.setdefault(spec.node_name, []).append(s)
            elif spec.all_nodes:
                self._selected.append((s, None))
            elif spec.node_selector is not None:
                self._selected.append((s, NodeSelectorMatcher(spec.node_selector)))
            # else: nothing known set (a future extension): ignored

    def pools_for(self, node: Node) -> list[_Pool]:
        """GatherPools: the pools whose slices are available on the node."""
        hit = self._pools.get(node.metadata.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._gather(node)
        self._pools[node.metadata.name] = (node, out)
        return out

    def _gather(self, node: Node) -> list[_Pool]:
        local = self._by_node.get(node.metadata.name, ())
        chosen: list[ResourceSlice] = list(local)
        labels = node.metadata.labels
        name = node.metadata.name
        for s, m in self._selected:
            if m is None or m.matches(labels, name):
                chosen.append(s)
        if local and len(chosen) > len(local):
            chosen.sort(key=lambda s: self.order[id(s)])
        pools: dict[tuple[str, str], _Pool] = {}
        for s in chosen:
            _add_slice(pools, s)
        out: list[_Pool] = []
        for p in pools.values():
            want = p.slices[0].spec.pool.resource_slice_count
            complete = len(p.slices) == want
            if not complete:
                # Slices of the pool for other nodes count too; a newer generation elsewhere
                # means this one is being replaced: the pool is ignored.
                gens = self._generations.get((p.driver, p.name), {})
                if any(g > p.generation for g in gens):
                    continue
                complete = gens.get(p.generation, 0) == want
            p.incomplete = not complete
            out.append(p)
            seen: set[str] = set()
            for s in p.slices:
                for d in s.spec.devices:
                    if d.name in seen:
                        p.invalid = f"duplicate device name {d.name}"
                        break
                    seen.add(d.name)
                if p.invalid:
                    break
        return out


@attrs.define(slots=True)
class _Req:
    """requestData: one request or subrequest to satisfy."""

    name: str  # the request's (or subrequest's) own name
    parent: str  # the parent request's name for a subrequest, else ""
    device_class: DeviceClass | None
    selectors: tuple[DeviceSelector, ...]
    mode: str
    count: int
    admin_access: bool
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base_name(self) -> str:
        return self.parent or self.name

    @property
    def sub_name(self) -> str:
        return self.name if self.parent else ""


class _MatchAttribute:
    __slots__ = ("request_names", "attribute", "value", "num")

    def __init__(self, requests: Sequence[str], attribute: str) -> None:
        self.request_names = set(requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.num = 0

    def _applies(self, base: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return base in self.request_names
        return base in self.request_names or f"{base}/{sub}" in self.request_names

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.value = attr
            self.num = 1
            return True
        cur = self.value
        assert cur is not None
        if attr.string is not None:
            ok = cur.string is not None and cur.string == attr.string
        elif attr.int is not None:
            ok = cur.int is not None and cur.int == attr.int
        elif attr.bool is not None:
            ok = cur.bool is not None and cur.bool == attr.bool
        elif attr.version is not None:
            ok = cur.version is not None and cur.version == attr.version
        else:
            ok = False
        if ok:
            self.num += 1
        return ok

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.num -= 1


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """An attribute by fully qualified name; the driver's own domain may be left out."""
    a = device.attributes.get(name)
    if a is not None:
        return a
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


@attrs.define(slots=True)
class _Result:
    req: _Req
    id: DeviceID
    slice: ResourceSlice


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


class Allocator:
    """structured.Allocator for one scheduling cycle: the claims' view of the cluster's
    devices (slices, classes, devices in use). ``allocate`` is called per node."""

    __slots__ = (
        "features", "classes", "allocated", "slices", "cel", "matches", "_setups",
        "request_matches",
    )

    def __init__(
        self,
        features: Features,
        allocated: AbstractSet[DeviceID],
        classes: Callable[[str], DeviceClass | None],
        slices: SliceIndex,
        cel: SelectorCache,
        request_matches: dict[Any, tuple[Any, Device, bool]] | None = None,
    ) -> None:
        self.features = features
        self.request_matches = request_matches if request_matches is not None else {}
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self.cel = cel
        # Whether a device fits a (sub)request does not depend on the node: shared by the
        # per-node runs of one cycle (keyed by claim identity and request indices).
        self.matches: dict[tuple[int, int, int, DeviceID], bool] = {}
        # Node-independent request setups (claims without allocationMode All).
        self._setups: dict[tuple[int, ...], tuple[Any, Any]] = {}

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[AllocationResult] | None:
        """One AllocationResult per claim, or None when the node cannot satisfy them all.
        AllocationError when something is wrong with a claim, class or pool."""
        return _Run(self, node, claims).run()

    def setup_for(self, claims: Sequence[ResourceClaim]) -> tuple[Any, Any] | None:
        return self._setups.get(tuple(id(c) for c in claims))

    def remember_setup(self, claims: Sequence[ResourceClaim], setup: tuple[Any, Any]) -> None:
        self._setups[tuple(id(c) for c in claims)] = setup


class _Run:
    """One Allocate call (the Go ``allocator`` struct)."""

    def __init__(self, a: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools = a.slices.pools_for(node)
        self.requests: list[list[list[_Req]]] = []  # claim -> request -> (sub)requests
        self.has_subrequests: list[list[bool]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        # Devices being allocated in this run, with the claims (indices) they go to.
        self.allocating: dict[DeviceID, set[int]] = {}
        self.matches = a.matches
        self.claim_ids = [id(c) for c in claims]

    # ------------------------------------------------------------------ setup

    def _validate(self, ci: int, ri: int, si: int, req: _Req) -> None:
        claim = self.claims[ci]
        if req.device_class is None:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {req.name}: could not retrieve device "
                f'class : deviceclass.resource.k8s.io "" not found'
            )
        if req.mode == ALLOCATION_MODE_EXACT_COUNT:
            req.num_devices = req.count
        elif req.mode == ALLOCATION_MODE_ALL:
            req.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {req.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for d in s.spec.devices:
                        did = (s.spec.driver, s.spec.pool.name, d.name)
                        if self._selectable(ci, ri, si, req, d, did):
                            req.all_devices.append((did, d, s))
            req.num_devices = len(req.all_devices)
        else:
            raise AllocationError(
                f"claim {_claim_key(claim)}, request {req.name}: unsupported count mode "
                f"{req.mode}"
            )

    def _class(self, ci: int, request_name: str, class_name: str) -> DeviceClass:
        dc = self.a.classes(class_name)
        if dc is None:
            raise AllocationError(
                f"claim {_claim_key(self.claims[ci])}, request {request_name}: could not "
                f'retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" '
                "not found"
            )
        return dc

    def _setup(self) -> None:
        cached = self.a.setup_for(self.claims)
        if cached is not None:
            self.requests, self.has_subrequests = cached
        else:
            self._setup_requests()
        for claim in self.claims:
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                if c.match_attribute is not None:
                    cons.append(_MatchAttribute(c.requests, c.match_attribute))
                else:
                    # distinctAttribute needs DRAConsumableCapacity (off): unsupported here.
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            self.constraints.append(cons)

    def _setup_requests(self) -> None:
        node_independent = True
        for ci, claim in enumerate(self.claims):
            per_claim = 0
            reqs: list[list[_Req]] = []
            subs: list[bool] = []
            for ri, r in enumerate(claim.spec.devices.requests):
                if r.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {_claim_key(claim)}, request {r.name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    alts: list[_Req] = []
                    for si, sr in enumerate(r.first_available):
                        req = _Req(
                            sr.name, r.name, self._class(ci, sr.name, sr.device_class_name),
                            sr.selectors, sr.allocation_mode, sr.count, False,
                        )
                        self._validate(ci, ri, si, req)
                        alts.append(req)
                    per_claim += min(x.num_devices for x in alts)
                    reqs.append(alts)
                    subs.append(True)
                elif r.exactly is not None:
                    ex = r.exactly
                    admin = bool(ex.admin_access) and self.a.features.admin_access
                    req = _Req(
                        r.name, "", self._class(ci, r.name, ex.device_class_name),
                        ex.selectors, ex.allocation_mode, ex.count, admin,
                    )
                    self._validate(ci, ri, 0, req)
                    per_claim += req.num_devices
                    reqs.append([req])
                    subs.append(False)
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {r.name}: unsupported request type"
                    )
            if per_claim > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_claim_key(claim)}: number of requested devices {per_claim} "
                    f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.requests.append(reqs)
            self.has_subrequests.append(subs)
            if any(x.mode == ALLOCATION_MODE_ALL for alts in reqs for x in alts):
                node_independent = False
        if node_independent:
            self.a.remember_setup(self.claims, (self.requests, self.has_subrequests))

    # ------------------------------------------------------------------ selection

    def _selectors_match(
        self, ci: int, device: Device, driver: str, dc: DeviceClass | None,
        selectors: Sequence[DeviceSelector],
    ) -> bool:
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                continue
            try:
                ok = self.a.cel.matches(sel.cel.expression, driver, device)
            except CELCompileError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {exc}") from None
            except CELError as exc:
                where = f"class {dc.metadata.name}" if dc is not None else (
                    f"claim {_claim_key(self.claims[ci])}"
                )
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {exc}") from None
            if not ok:
                return False
        return True

    def _selectable(
        self, ci: int, ri: int, si: int, req: _Req, device: Device, did: DeviceID
    ) -> bool:
        if device.binding_conditions and not self.a.features.device_binding_conditions:
            return False  # devices with binding conditions need DRADeviceBindingConditions
        key = (self.claim_ids[ci], ri, si, did)
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = self._request_matches(ci, req, device, did[0])
        self.matches[key] = ok
        return ok

    def _request_matches(self, ci: int, req: _Req, device: Device, driver: str) -> bool:
        """The class's selectors, then the request's; memoized across cycles by (class,
        selectors, device) since none of them depends on the claim or the node. Errors are
        not memoized: their message names the claim."""
        dc = req.device_class
        shared = self.a.request_matches
        key = (id(dc), req.selectors, id(device))
        hit = shared.get(key)
        if hit is not None and hit[0] is dc and hit[1] is device:
            return hit[2]
        ok = (
            dc is None or self._selectors_match(ci, device, driver, dc, dc.spec.selectors)
        ) and self._selectors_match(ci, device, driver, None, req.selectors)
        if len(shared) > 200_000:
            shared.clear()
        shared[key] = (dc, device, ok)
        return ok

    def _in_use(self, did: DeviceID) -> bool:
        """deviceInUse: allocated already, or being allocated for any claim of this run."""
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _usable(self, ci: int, req: _Req, did: DeviceID) -> bool:
        """The "in use" check: an admin-access request only avoids devices it is already
        allocating for the same claim."""
        if req.admin_access:
            return ci not in self.allocating.get(did, ())
        return not self._in_use(did)

    def _take(
        self, ci: int, req: _Req, did: DeviceID, device: Device, s: ResourceSlice, must: bool
    ) -> bool:
        """allocateDevice: check use and constraints, then record the device."""
        if not self._usable(ci, req, did):
            return False
        if device.consumes_counters and not self.a.features.partitionable_devices:
            return False  # counters need DRAPartitionableDevices
        base, sub = req.base_name, req.sub_name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, device, did[0]):
                if must:
                    raise AllocationError(
                        f"claim {_claim_key(self.claims[ci])}, request {req.name}: cannot add "
                        f"device {did[0]}/{did[1]}/{did[2]} because a claim constraint would "
                        "not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return False
        self.allocating.setdefault(did, set()).add(ci)
        self.results[ci].append(_Result(req, did, s))
        return True

    def _untake(self, ci: int, req: _Req, did: DeviceID, keep: int) -> None:
        """The rollback of _take: results are truncated to what they were before it."""
        for c in self.constraints[ci]:
            c.remove(req.base_name, req.sub_name)
        holders = self.allocating.get(did)
        if holders is not None:
            holders.discard(ci)
        del self.results[ci][keep:]

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: satisfy device ``di`` of (sub)request (ci, ri, si), then the rest.
        _TooMany when the claim would exceed the result limit (more aggressive backtracking)."""
        if ci >= len(self.claims):
            return True
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _TooMany:
                return False
        alts = reqs[ri]
        if not in_sub and self.has_subrequests[ci][ri]:
            all_too_many = True
            for sub in range(len(alts)):
                try:
                    if self._one(ci, ri, sub, 0, True):
                        return True
                except _TooMany:
                    continue
                all_too_many = False
            if all_too_many:
                raise _TooMany
            return False
        req = alts[si]
        do_all = req.mode == ALLOCATION_MODE_ALL
        if do_all and not req.all_devices:
            return False
        if di >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooMany
        if do_all:
            assert req.all_devices is not None
            did, device, s = req.all_devices[di]
            keep = len(self.results[ci])
            if not self._take(ci, req, did, device, s, True):
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except _TooMany:
                self._untake(ci, req, did, keep)
                raise
            if not done:
                self._untake(ci, req, did, keep)
            return done
        allocated, allocating, admin = self.a.allocated, self.allocating, req.admin_access
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue  # never allocated from, but other pools may do
            for did, device, s in pool.devices():
                # The "in use" check, inlined from _usable (hot loop).
                if admin:
                    holders = allocating.get(did)
                    if holders and ci in holders:
                        continue
                elif did in allocated or allocating.get(did):
                    continue
                if not self._selectable(ci, ri, si, req, device, did):
                    continue
                keep = len(self.results[ci])
                if not self._take(ci, req, did, device, s, False):
                    continue
                try:
                    done = self._one(ci, ri, si, di + 1, in_sub)
                except _TooMany:
                    self._untake(ci, req, did, keep)
                    raise
                if done:
                    return True
                self._untake(ci, req, did, keep)
        return False

    # ------------------------------------------------------------------ results

    def run(self) -> list[AllocationResult] | None:
        self._setup()
        try:
            done = self._one(0, 0, 0, 0, False)
        except _TooMany:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        out: list[AllocationResult] = []
        for ci, claim in enumerate(self.claims):
            results = tuple(_device_result(r.req.full_name, r.id, r.req.admin_access)
                            for r in self.results[ci])
            config = self._config(claim, self.results[ci])
            out.append(
                AllocationResult(
                    devices=DeviceAllocationResult(results=results, config=config),
                    node_selector=self._node_selector(self.results[ci]),
                )
            )
        return out

    @staticmethod
    def _config(
        claim: ResourceClaim, results: list[_Result]
    ) -> tuple[DeviceAllocationConfiguration, ...]:
        """Class configs of the chosen (sub)requests' classes, then the claim's configs that
        apply to all requests or name a request or a chosen subrequest."""
        out: list[DeviceAllocationConfiguration] = []
        seen: dict[str, _Req] = {}
        for r in results:
            seen.setdefault(r.req.full_name, r.req)
        for name, req in seen.items():
            dc = req.device_class
            if dc is None:
                continue
            for c in dc.spec.config:
                out.append(DeviceAllocationConfiguration(
                    source="FromClass", requests=(name,), opaque=c.opaque))
        if claim.spec.devices.config:
            names = set(seen) | {req.base_name for req in seen.values()}
            for cc in claim.spec.devices.config:
                if not cc.requests or any(n in names for n in cc.requests):
                    out.append(DeviceAllocationConfiguration(
                        source="FromClaim", requests=cc.requests, opaque=cc.opaque))
        return tuple(out)

    @staticmethod
    def _node_selector(results: list[_Result]) -> NodeSelector | None:
        fields: list[NodeSelectorRequirement] = []
        exprs: list[NodeSelectorRequirement] = []
        for r in results:
            spec = r.slice.spec
            if spec.node_name:
                return _node_name_selector(spec.node_name)
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


def allocated_devices(claims: Iterable[ResourceClaim]) -> set[DeviceID]:
    """GatherAllocatedState: devices of allocated claims, except admin-access results."""
    out: set[DeviceID] = set()
    for c in claims:
        alloc = c.status.allocation
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.admin_access:
                continue
            out.add((r.driver, r.pool, r.device))
    return out

