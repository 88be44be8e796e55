"""The claims' constraints across requests: ``matchAttribute`` and ``distinctAttribute``."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.api.resource_v1 import Device, DeviceAttribute


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


def _attr_equal(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    if a.string is not None:
        return b.string is not None and a.string == b.string
    if a.int is not None:
        return b.int is not None and a.int == b.int
    if a.bool is not None:
        return b.bool is not None and a.bool == b.bool
    if a.version is not None:
        return b.version is not None and a.version == b.version
    return True  # unknown type: treated as a duplicate (the device is rejected)


class _DistinctAttribute(_MatchAttribute):
    """distinctAttribute (DRAConsumableCapacity): every device of the requests has a
    different value of the attribute."""

    __slots__ = ("values",)

    def __init__(self, requests: Sequence[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[DeviceAttribute] = []

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if any(_attr_equal(attr, v) for v in self.values):
            return False
        self.values.append(attr)
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.values.pop()


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """An attribute by fully qualified name; the driver's own domain may be left out."""
    a = device.attributes.get(name)
    if a is not None:
        return a
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)
