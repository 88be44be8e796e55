"""Deterministic names, hashes and uids for the objects the controllers create."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable
from typing import Any

from kschedlib.api.workloads import PodTemplateSpec

# utilrand's alphabet: no vowels, no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_UID_NAMESPACE = uuid.UUID("6f1c2f3e-8a4b-4b8e-9a43-5c2c7d3f1a17")


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
