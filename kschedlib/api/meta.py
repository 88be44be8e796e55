"""ObjectMeta and friends, shared by every object."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import attrs

_T = TypeVar("_T", bound="KubeObject")


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
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()
    creation_timestamp: _dt.datetime | None = None
    deletion_timestamp: _dt.datetime | None = None

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for cluster-scoped objects."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


class KubeObject:
    """Mixin of top-level objects: decoding with errors that name the object, encoding, and
    the name/key accessors. Subclasses set ``label`` (the word used in error messages)."""

    __slots__ = ()
    label: ClassVar[str] = "object"
    metadata: ObjectMeta

    @classmethod
    def from_dict(cls: type[_T], data: Any, *, validate: bool = True) -> _T:
        """Decode Kubernetes JSON; with ``validate`` (the default) an object the API server
        would reject raises InvalidObjectError (``validate=False`` only checks types, for
        test tables ported from kube-scheduler's Go tests, which skip API validation)."""
        from kschedlib.api.clients import as_api_dict, find_snake_case_key
        from kschedlib.api.codec import object_label
        from kschedlib.api.validation import decode_object

        # Client objects are converted; a snake_case dict (a client's to_dict()) is refused.
        if type(data) is not dict or find_snake_case_key(data) is not None:
            data = as_api_dict(data, object_label(cls.label, data))
        return decode_object(cls, cls.label, data, validate=validate)

    def to_dict(self) -> dict[str, Any]:
        """The object as Kubernetes JSON (camelCase keys, quantities as strings);
        ``from_dict(obj.to_dict()) == obj``."""
        from kschedlib.api.codec import encode

        return encode(self)

    def with_changes(self: _T, changes: Mapping[str, Any] | None = None, /, **fields: Any) -> _T:
        """A copy with some fields replaced: top-level fields by keyword
        (``pod.with_changes(spec=...)``) and nested ones by dotted snake_case path
        (``pod.with_changes({"spec.node_name": "n1", "metadata.labels": {"app": "x"}})``).
        The original is unchanged (objects are immutable)."""
        out: Any = attrs.evolve(self, **fields) if fields else self  # type: ignore[misc]
        for path, value in (changes or {}).items():
            out = _replace_path(out, path.split("."), value, path)
        return out  # type: ignore[no-any-return]

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for cluster-scoped objects."""
        return self.metadata.key


def _replace_path(obj: Any, parts: list[str], value: Any, full: str) -> Any:
    name = parts[0]
    if not attrs.has(type(obj)) or name not in attrs.fields_dict(type(obj)):
        raise AttributeError(f"{type(obj).__name__} has no field {name!r} (in {full!r})")
    if len(parts) == 1:
        return attrs.evolve(obj, **{name: value})
    return attrs.evolve(obj, **{name: _replace_path(getattr(obj, name), parts[1:], value, full)})
