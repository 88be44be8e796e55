"""Device-taint eviction (pkg/controller/devicetainteviction, DRADeviceTaints): pods using an
allocated device with a NoExecute taint that the allocation's tolerations do not tolerate
are deleted at once; tolerated with ``tolerationSeconds``, once that much time has passed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import (
    Device,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.plugins.dynamicresources.allocator import DeviceID, device_taints, tolerates
from kschedlib.plugins.dynamicresources.selector_cache import SelectorCache


@attrs.define(slots=True, frozen=True)
class DeviceTaintEviction:
    """A pod the device-taint eviction controller deletes (or has scheduled), and why."""

    pod: Pod
    claim: str
    device: DeviceID
    taint: DeviceTaint
    created_at: float
    fire_at: float
    reason: str


def _wait(taint: DeviceTaint, tolerations: Sequence[DeviceToleration]) -> float | None:
    """None: not tolerated; -1: tolerated forever; else the seconds it is tolerated."""
    used = [t for t in tolerations if tolerates(t, taint)]
    if not used:
        return None
    secs = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not secs:
        return -1.0
    return float(max(0, min(secs)))


class DeviceTaintEvictionController:
    """The controller's timed work, by the host's clock: ``sync`` schedules or cancels, ``due``
    pops what is due."""

    def __init__(self) -> None:
        self._work: dict[str, DeviceTaintEviction] = {}
        self._cel = SelectorCache()

    def scheduled(self) -> list[DeviceTaintEviction]:
        return list(self._work.values())

    def sync(
        self,
        pods: Iterable[Pod],
        claims: Iterable[ResourceClaim],
        slices: Iterable[ResourceSlice],
        rules: Sequence[DeviceTaintRule],
        classes: Mapping[str, DeviceClass],
        now: float,
    ) -> None:
        devices = {
            (s.spec.driver, s.spec.pool.name, d.name): d for s in slices for d in s.spec.devices
        }
        by_uid = {p.uid: p for p in pods}
        seen: set[str] = set()
        for claim in claims:
            alloc = claim.status.allocation
            if alloc is None:
                continue
            for ref in claim.status.reserved_for:
                pod = by_uid.get(ref.uid)
                if pod is None or pod.metadata.deletion_timestamp is not None:
                    continue
                verdict = self._verdict(claim, alloc.devices.results, devices, rules, classes)
                if verdict is None:
                    continue
                did, taint, wait = verdict
                seen.add(pod.uid)
                old = self._work.get(pod.uid)
                start = old.created_at if old is not None else now
                if wait is None:
                    reason = f"the allocation does not tolerate the NoExecute device taint {_s(taint)}"
                    fire = now if old is None else min(old.fire_at, now)
                else:
                    reason = f"tolerationSeconds {int(wait)} for device taint {_s(taint)} ran out"
                    fire = start + wait if old is None else min(old.fire_at, start + wait)
                self._work[pod.uid] = DeviceTaintEviction(
                    pod, claim.metadata.key, did, taint, start, fire, reason)
        for uid in [u for u in self._work if u not in seen]:
            del self._work[uid]

    def _verdict(
        self, claim: ResourceClaim, results: Iterable[DeviceRequestAllocationResult],
        devices: Mapping[DeviceID, Device], rules: Sequence[DeviceTaintRule],
        classes: Mapping[str, DeviceClass],
    ) -> tuple[DeviceID, DeviceTaint, float | None] | None:
        """The first untolerated NoExecute taint of the claim's devices (wait None), else the
        soonest time-bound one; None when nothing evicts."""
        best: tuple[DeviceID, DeviceTaint, float | None] | None = None
        for r in results:
            did: DeviceID = (r.driver, r.pool, r.device)
            dev = devices.get(did)
            if dev is None:
                continue
            for taint in device_taints(did, dev, rules, classes.get, self._cel):
                if taint.effect != "NoExecute":
                    continue
                wait = _wait(taint, r.tolerations)
                if wait is None:
                    return did, taint, None
                if wait >= 0 and (best is None or (best[2] is not None and wait < best[2])):
                    best = (did, taint, wait)
        return best

    def due(self, now: float) -> list[DeviceTaintEviction]:
        ready = sorted((w for w in self._work.values() if w.fire_at <= now),
                       key=lambda w: (w.fire_at, w.pod.key))
        for w in ready:
            del self._work[w.pod.uid]
        return ready


def _s(t: DeviceTaint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
