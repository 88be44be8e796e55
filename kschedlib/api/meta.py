"""ObjectMeta and friends, shared by every object."""

from __future__ import annotations

import datetime as _dt

import attrs


@attrs.define(slots=True, frozen=True, kw_only=True)
class OwnerReference:
    api_version: str = attrs.field(default="", metadata={"json": "apiVersion"})
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


@attrs.define(slots=True, frozen=True, kw_only=True)
class ObjectMeta:
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: _dt.datetime | None = None
    deletion_timestamp: _dt.datetime | None = None

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for cluster-scoped objects."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name
