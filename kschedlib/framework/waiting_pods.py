"""Pods held at Permit: allowed, rejected or timed out by plugins, with no threads."""

from __future__ import annotations

from collections.abc import Callable

from kschedlib.api.pod import Pod
from kschedlib.framework.status import Code, Status


class WaitingPod:
    """A pod some Permit plugins asked to wait for; each has its own deadline."""

    __slots__ = ("pod", "_deadlines", "verdict")

    def __init__(self, pod: Pod, timeouts: dict[str, float], now: float) -> None:
        self.pod = pod
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
                self.reject(name, f"rejected due to timeout after waiting at plugin {name}")
                return

    def next_deadline(self) -> float | None:
        return min(self._deadlines.values()) if self._deadlines and self.verdict is None else None


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
