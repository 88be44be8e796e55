"""Pods held at Permit: allowed, rejected or timed out by plugins, with no threads."""

from __future__ import annotations

from collections.abc import Callable

from kschedlib.api.pod import Pod
from kschedlib.framework.status import Code, Status


class WaitingPod:
    """A pod some Permit plugins asked to wait for; each has its own deadline."""

    __slots__ = ("pod", "_deadlines", "_timeouts", "verdict")

    def __init__(self, pod: Pod, timeouts: dict[str, float], now: float) -> None:
        self.pod = pod
        self._timeouts = dict(timeouts)
        self._deadlines = {name: now + t for name, t in timeouts.items()}
        self.verdict: Status | None = None

    def get_pending_plugins(self) -> list[str]:
        return sorted(self._deadlines)

    def allow(self, plugin_name: str) -> None:
        if self.verdict is not None:
            return
        self._deadlines.pop(plugin_name, None)
        if not self._deadlines:
            self.verdict = Status(Code.Success)

    def reject(self, plugin_name: str, msg: str) -> None:
        if self.verdict is None:
            self.verdict = Status(Code.Unschedulable, (msg,), plugin_name)

    def check_timeouts(self, now: float) -> None:
        """Reject for the first plugin whose wait has run out."""
        if self.verdict is not None:
            return
        for name, deadline in sorted(self._deadlines.items(), key=lambda kv: kv[1]):
            if now >= deadline:
                waited = go_duration(self._timeouts[name])
                self.reject(name, f"rejected due to timeout after waiting {waited} at plugin {name}")
                return

    def next_deadline(self) -> float | None:
        return min(self._deadlines.values()) if self._deadlines and self.verdict is None else None


def go_duration(seconds: float) -> str:
    """time.Duration.String(): 30s, 1.5s, 1m30s, 2h0m0s, 500ms."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    h, rem = divmod(ns, 3_600_000_000_000)
    m, rem = divmod(rem, 60_000_000_000)
    secs = _trim(rem / 1e9) + "s"
    if h:
        return f"{sign}{h}h{m}m{secs}"
    if m:
        return f"{sign}{m}m{secs}"
    return sign + secs


def _trim(x: float) -> str:
    text = f"{x:.9f}".rstrip("0").rstrip(".")
    return text or "0"


class WaitingPodsMap:
    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        for wp in list(self._pods.values()):
            callback(wp)

    def __len__(self) -> int:
        return len(self._pods)
