"""SchedulingGates: keeps pods with spec.schedulingGates out of the active queue."""

from kschedlib.plugins.schedulinggates.scheduling_gates import (
    NAME,
    PLUGINS,
    SchedulingGates,
    new,
)

__all__ = ["NAME", "PLUGINS", "SchedulingGates", "new"]
