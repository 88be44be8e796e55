"""SchedulingGates: keeps pods with spec.schedulingGates out of the active queue."""

from kschedlib.plugins.schedulinggates.scheduling_gates import (
    NAME,
    PLUGINS,
    SchedulingGates,
    gates_message,
    is_schedulable_after_update_pod_scheduling_gates_eliminated,
    new,
)

__all__ = ["NAME", "PLUGINS", "SchedulingGates", "new", "gates_message", "is_schedulable_after_update_pod_scheduling_gates_eliminated"]
