"""Replay cluster events or a task list through a Scheduler and record metrics as it goes
(``replay_events``, ``replay_submissions``, ``inflate``), and reproduce the FGD paper's
experiments on the Alibaba GPU trace (``kschedlib.replay.paper``)."""

from kschedlib.replay.engine import (
    ReplayEvent,
    ReplayResult,
    Sampler,
    allocatable_meter,
    discretize,
    events_from_tasks,
    inflate,
    replay_events,
    replay_submissions,
    requests_meter,
)

__all__ = [
    "ReplayEvent",
    "ReplayResult",
    "Sampler",
    "allocatable_meter",
    "discretize",
    "events_from_tasks",
    "inflate",
    "replay_events",
    "replay_submissions",
    "requests_meter",
]
