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
    slice generation brings new keys. Runtime errors are memoized as well."""

    __slots__ = ("_activations", "_results")

    MAX_ENTRIES = 200_000

    def __init__(self) -> None:
        self._results: dict[tuple[str, int], tuple[Device, bool | str]] = {}
        self._activations: dict[int, tuple[Device, dict[str, Any]]] = {}

    def matches(self, expression: str, driver: str, device: Device) -> bool:
        key = (expression, id(device))
        hit = self._results.get(key)
        if hit is not None and hit[0] is device:
            r = hit[1]
        else:
            compiled = compile_expression(expression)
            if compiled.error is not None:
                raise CELCompileError(compiled.error)
            act = self._activations.get(id(device))
            if act is None or act[0] is not device:
                act = (device, device_activation(driver, device))
                self._activations[id(device)] = act
            try:
                r = compiled.device_matches(act[1])
            except CELError as exc:
                r = str(exc)
            if len(self._results) > self.MAX_ENTRIES:
                self._results.clear()
                self._activations.clear()
            self._results[key] = (device, r)
        if isinstance(r, str):
            raise CELError(r)
        return r
