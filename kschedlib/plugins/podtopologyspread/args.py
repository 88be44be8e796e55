"""PodTopologySpreadArgs: cluster-level default constraints, defaulted and validated as
kube-scheduler v1.35 does (config/v1 defaults, ValidatePodTopologySpreadArgs)."""

from __future__ import annotations

import attrs

from kschedlib.api.pod import TopologySpreadConstraint
from kschedlib.plugins.noderesources.args import qualified_name_errors
from kschedlib.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)
"""The constraints ``defaultingType: System`` applies to pods without their own."""


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@attrs.define(slots=True, frozen=True)
class PodTopologySpreadArgs:
    """Args of PodTopologySpread: constraints for pods that define none, and whether they come
    from ``defaultConstraints`` (List) or are kube-scheduler's built-in ones (System)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    def effective_default_constraints(self) -> tuple[TopologySpreadConstraint, ...]:
        """The constraints the plugin applies to pods without constraints of their own."""
        if self.defaulting_type == SYSTEM_DEFAULTING:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints

    def validate(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        dt = self.defaulting_type
        if dt not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(
                (
                    "defaultingType",
                    f"Unsupported value: {_quote(dt)}: supported values: "
                    f'"{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"',
                )
            )
        elif dt == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(
                (
                    "defaultingType",
                    f"Invalid value: {_quote(dt)}: when .defaultConstraints are not empty",
                )
            )
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(self.default_constraints):
            path = f"defaultConstraints[{i}]"
            if c.max_skew <= 0:
                errs.append(
                    (
                        f"{path}.maxSkew",
                        f"Invalid value: {c.max_skew}: not in valid range (0, inf)",
                    )
                )
            key = c.topology_key
            if not key:
                errs.append((f"{path}.topologyKey", "Required value: can not be empty"))
            else:
                errs.extend(
                    (f"{path}.topologyKey", f"Invalid value: {_quote(key)}: {msg}")
                    for msg in qualified_name_errors(key)
                )
            if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(
                    (
                        f"{path}.whenUnsatisfiable",
                        f"Unsupported value: {_quote(c.when_unsatisfiable)}: supported values: "
                        f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"',
                    )
                )
            if c.label_selector is not None:
                errs.append(
                    (
                        f"{path}.labelSelector",
                        "Forbidden: constraint must not define a selector, as they deduced for "
                        "each pod",
                    )
                )
            pair = (key, c.when_unsatisfiable)
            if pair in seen:
                errs.append((path, f"Duplicate value: {_quote('{' + key + ', ' + pair[1] + '}')}"))
            seen.add(pair)
        return errs
