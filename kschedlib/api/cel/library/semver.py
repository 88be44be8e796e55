"""Kubernetes' semver library: ``semver``, ``isSemver`` and the version parts."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import _cost_recv, _want, define
from kschedlib.api.cel.library.values import SemverValue, no_overload


def _semver(s: Any, *normalize: Any) -> SemverValue:
    if type(s) is not str or (normalize and type(normalize[0]) is not bool):
        raise no_overload("semver", s, *normalize)
    return SemverValue(s, bool(normalize and normalize[0]))


def _is_semver(s: Any, *normalize: Any) -> bool:
    if type(s) is not str or (normalize and type(normalize[0]) is not bool):
        raise no_overload("isSemver", s, *normalize)
    try:
        SemverValue(s, bool(normalize and normalize[0]))
    except CELError:
        return False
    return True


define("semver", ["semver(string) -> Semver", "semver(string, bool) -> Semver"], _semver,
       _cost_recv)
define("isSemver", ["isSemver(string) -> bool", "isSemver(string, bool) -> bool"], _is_semver,
       _cost_recv)
define("major", ["Semver.major() -> int"], lambda v: _want(v, SemverValue, "major", v).major)
define("minor", ["Semver.minor() -> int"], lambda v: _want(v, SemverValue, "minor", v).minor)
define("patch", ["Semver.patch() -> int"], lambda v: _want(v, SemverValue, "patch", v).patch)
