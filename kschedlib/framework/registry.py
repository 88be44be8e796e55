"""Plugin registry: factories by name, with the type of their configuration args."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from kschedlib.errors import ConfigError

PluginFactory = Callable[[Any, Any], Any]
"""``factory(args, handle) -> plugin``; ``args`` is the typed args object or None."""


@attrs.define(slots=True, frozen=True)
class PluginSpec:
    """A registered plugin: its factory and, when it takes arguments, their attrs type.

    An args type is decodable by ``kschedlib.api.codec.decode`` (defaults equal to
    kube-scheduler v1.35's) and may define ``validate(self) -> list[tuple[str, str]]``
    returning (field path, message) pairs.
    """

    name: str
    factory: PluginFactory
    args_type: type | None = None


class Registry(Mapping[str, PluginSpec]):
    """Name -> PluginSpec. In-tree and out-of-tree plugins register the same way."""

    def __init__(self, specs: Mapping[str, PluginSpec] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = dict(specs or {})

    def register(self, name: str, factory: PluginFactory, args_type: type | None = None) -> None:
        if name in self._specs:
            raise ConfigError(f"a plugin named {name} already exists")
        self._specs[name] = PluginSpec(name, factory, args_type)

    def merge(self, other: Mapping[str, PluginSpec]) -> Registry:
        merged = Registry(self._specs)
        for name, spec in other.items():
            merged.register(name, spec.factory, spec.args_type)
        return merged

    def __getitem__(self, name: str) -> PluginSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)
