"""Status: what a plugin says about a pod. ``None`` means success, as a nil Status in Go."""

from __future__ import annotations

import enum

import attrs


class Code(enum.IntEnum):
    """framework.Code, in kube-scheduler's order."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


_REJECTED = frozenset((Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending))


@attrs.define(slots=True, frozen=True)
class Status:
    """A non-success plugin result: code, human-readable reasons and the plugin that said it.

    Plugins return ``None`` on success so that the success path allocates nothing.

    Equality (and hashing) compares ``code`` and ``reasons`` only; ``plugin`` and ``err``
    are ignored. In kube-scheduler a plugin never names itself (the framework sets the
    plugin after the call), so Go unit tests compare statuses without a plugin; here some
    plugins fill in their name, and this rule makes both compare equal. Compare
    ``status.plugin`` explicitly when the plugin matters.
    """

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = attrs.field(default="", eq=False)
    err: BaseException | None = attrs.field(default=None, eq=False)

    @classmethod
    def error(cls, err: BaseException | str, plugin: str = "") -> Status:
        exc = err if isinstance(err, BaseException) else RuntimeError(err)
        return cls(Code.Error, (str(exc),), plugin, exc)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_wait(self) -> bool:
        return self.code == Code.Wait

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTED

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else attrs.evolve(self, plugin=plugin)

    def as_error(self) -> BaseException:
        return self.err if self.err is not None else RuntimeError(self.message())

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message()}" if self.reasons else self.code.name


def from_exception(exc: BaseException, plugin: str = "") -> Status:
    """The Error status of an exception a plugin (or the host's binder) raised: kube-scheduler
    handles it as the plugin's error status; the message names the exception's type."""
    text = str(exc)
    msg = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return Status(Code.Error, (msg,), plugin, exc)


SKIP = Status(Code.Skip)
WAIT = Status(Code.Wait)


def is_success(status: Status | None) -> bool:
    """Status.IsSuccess: ``None`` (nil) or code Success."""
    return status is None or status.code == Code.Success


def code_of(status: Status | None) -> Code:
    """Status.Code: Success for ``None``."""
    return Code.Success if status is None else status.code


def unschedulable(*reasons: str, plugin: str = "") -> Status:
    """An Unschedulable status (NewStatus(Unschedulable, reasons...))."""
    return Status(Code.Unschedulable, reasons, plugin)


def unresolvable(*reasons: str, plugin: str = "") -> Status:
    """An UnschedulableAndUnresolvable status."""
    return Status(Code.UnschedulableAndUnresolvable, reasons, plugin)


def as_status(err: BaseException | str, plugin: str = "") -> Status:
    """framework.AsStatus: an Error status carrying ``err``."""
    return Status.error(err, plugin)


_SHARED: dict[tuple[Code, tuple[str, ...], str], Status] = {}
_MAX_SHARED = 4096


def shared(st: Status) -> Status:
    """One object for every equal rejection (code, reasons and plugin; no error attached),
    so that the equal verdicts of many nodes are one Status (a diagnosis counts and notes
    them by identity). ``st`` itself when it carries an error."""
    if st.err is not None:
        return st
    key = (st.code, st.reasons, st.plugin)
    got = _SHARED.get(key)
    if got is None:
        if len(_SHARED) >= _MAX_SHARED:  # unbounded reasons (say, taint values): start over
            _SHARED.clear()
        got = _SHARED[key] = st
    return got


def shared_rejection(code: Code, reasons: tuple[str, ...], plugin: str) -> Status:
    """``shared(Status(code, reasons, plugin))`` without building it when it is known."""
    got = _SHARED.get((code, reasons, plugin))
    return got if got is not None else shared(Status(code, reasons, plugin))
