"""The device selector memo: results per (expression, device). cel-python's grammar is
loaded on the first selector to compile, so clusters without DRA selectors never load it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedlib.api.cel.errors import CELCompileError as CELCompileError
from kschedlib.api.cel.errors import CELError as CELError
from kschedlib.plugins.dynamicresources.cel import compile_expression, device_activation

if TYPE_CHECKING:
    from kschedlib.api.resource_v1 import Device


class SelectorCache:
    """Memoized (expression, device) results; devices are immutable objects, so a new
    slice generation brings new keys. Runtime errors are memoized as well.

    A device's CEL activation is built when an expression meets the device for the first
    time and kept only for the next expression on the same device (a class's selectors,
    then the request's): since results are memoized, keeping every activation (about
    1.2 KB a device) would buy one rebuild per new expression and device."""

    __slots__ = ("_last", "_results")

    MAX_ENTRIES = 200_000

    def __init__(self) -> None:
        self._results: dict[tuple[str, int], tuple[Device, bool | str]] = {}
        self._last: tuple[Device | None, str, dict[str, Any]] = (None, "", {})

    def matches(self, expression: str, driver: str, device: Device) -> bool:
        key = (expression, id(device))
        hit = self._results.get(key)
        if hit is not None and hit[0] is device:
            r = hit[1]
        else:
            compiled = compile_expression(expression)
            if compiled.error is not None:
                raise CELCompileError(compiled.error)
            last = self._last
            if last[0] is device and last[1] == driver:
                act = last[2]
            else:
                act = device_activation(driver, device)
                self._last = (device, driver, act)
            try:
                r = compiled.device_matches(act)
            except CELError as exc:
                r = str(exc)
            if len(self._results) > self.MAX_ENTRIES:
                self._results.clear()
            self._results[key] = (device, r)
        if isinstance(r, str):
            raise CELError(r)
        return r
