"""What the Scheduler facade hands back: attempt results, events, explanations, metrics."""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.batch import BatchMetrics


class Outcome(str, enum.Enum):
    """How a scheduling attempt ended."""

    Scheduled = "Scheduled"
    Unschedulable = "Unschedulable"
    Error = "Error"
    Waiting = "Waiting"
    BindFailed = "BindFailed"


@attrs.define(slots=True, frozen=True)
class Event:
    """A Kubernetes-style event: ``Scheduled`` (Normal) or ``FailedScheduling`` (Warning)."""

    type: str
    reason: str
    pod: str
    message: str
    timestamp: float


class EventLog(list[Event]):
    """The scheduler's events, oldest first, trimmed to the newest ``limit`` so a long-running
    host keeps flat memory (kube-scheduler's events expire on the API server too). The last
    FailedScheduling message of each pod not yet scheduled stays in ``last_failure``."""

    def __init__(self, items: Iterable[Event] = (), limit: int = 10_000) -> None:
        super().__init__(items)
        self.limit = limit
        self.last_failure: dict[str, str] = {}

    def append(self, event: Event) -> None:
        super().append(event)
        if event.reason == "FailedScheduling":
            self.last_failure[event.pod] = event.message
        elif event.reason == "Scheduled":
            self.last_failure.pop(event.pod, None)
        if len(self) > 2 * self.limit:  # amortized O(1): trim once per ``limit`` events
            del self[: len(self) - self.limit]

    def forget(self, pod_key: str) -> None:
        """The pod is gone: drop what is kept for it apart from the log."""
        self.last_failure.pop(pod_key, None)

    def copy(self) -> EventLog:
        new = EventLog(self, self.limit)
        new.last_failure = dict(self.last_failure)
        return new


@attrs.define(slots=True, frozen=True)
class NodeVerdict:
    """Why Filter rejected a node: the plugin (None for PreFilter/extender verdicts), the
    status code name and the reasons, verbatim."""

    plugin: str | None
    code: str
    reasons: tuple[str, ...]


@attrs.define(slots=True, frozen=True)
class PluginScoreDetail:
    raw: int
    normalized: int
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@attrs.define(slots=True, frozen=True)
class NodeScoreDetail:
    """A feasible node's score per plugin (raw, normalized, weight) plus extenders, and total."""

    plugins: dict[str, PluginScoreDetail]
    extenders: dict[str, int]
    total: int


class LazyScores(Mapping[str, NodeScoreDetail]):
    """Node name -> NodeScoreDetail, built on first use from the columns a scheduling cycle
    kept (recording an attempt costs a reference, not a breakdown of every node)."""

    __slots__ = ("_build", "_data")

    def __init__(self, build: Callable[[], dict[str, NodeScoreDetail]]) -> None:
        self._build: Callable[[], dict[str, NodeScoreDetail]] | None = build
        self._data: dict[str, NodeScoreDetail] | None = None

    def _get(self) -> dict[str, NodeScoreDetail]:
        if self._data is None:
            assert self._build is not None
            self._data, self._build = self._build(), None
        return self._data

    def __getitem__(self, key: str) -> NodeScoreDetail:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied as the built dict
        return (dict, (self._get(),))


@attrs.define(slots=True, frozen=True)
class Explanation:
    """The full breakdown of one scheduling attempt, as kube-scheduler-simulator shows it."""

    pod: str
    profile: str
    pre_filter: NodeVerdict | None
    rejected: dict[str, NodeVerdict]
    feasible: tuple[str, ...]
    scores: Mapping[str, NodeScoreDetail]
    selected: str | None
    nominated_fast_path: bool = False
    post_filter_message: str = ""
    batch: str | None = None
    """The opportunistic batch's outcome (``no_hint``, ``hint_used``, ``hint_not_used``;
    None with OpportunisticBatching off)."""
    batch_hint: str | None = None
    """The node the batch offered as a hint, if any."""
    _kept: Any = attrs.field(default=None, eq=False, repr=False, kw_only=True)
    """What lazily built fields read besides their record (the folded score path's table of
    rows): held here so the record is a tuple the garbage collector stops tracking. Not
    part of the value (not compared, shown, pickled nor copied)."""

    def __getstate__(self) -> dict[str, Any]:
        """The fields' values (lazy ones built), without ``_kept``."""
        return {a.name: getattr(self, a.name) for a in _FIELDS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_kept", None)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "pod": self.pod,
            "profile": self.profile,
            "preFilter": None if self.pre_filter is None else _verdict(self.pre_filter),
            "rejected": {n: _verdict(v) for n, v in sorted(self.rejected.items())},
            "feasible": list(self.feasible),
            "scores": {
                n: {
                    "plugins": {
                        p: {"raw": d.raw, "normalized": d.normalized, "weight": d.weight,
                            "weighted": d.weighted}
                        for p, d in s.plugins.items()
                    },
                    "extenders": dict(s.extenders),
                    "total": s.total,
                }
                for n, s in self.scores.items()
            },
            "selected": self.selected,
            "postFilterMessage": self.post_filter_message,
        }
        if self.batch is not None:
            d["batch"] = self.batch
        if self.batch_hint is not None:
            d["batchHint"] = self.batch_hint
        return d


class Deferred:
    """A field value an Explanation builds on first read (from immutable inputs), then keeps:
    what :meth:`build` returns."""

    __slots__ = ()

    def build(self) -> Any:
        raise NotImplementedError


LAZY = "\x00lazy"
"""The first item of a lazy record: a plain tuple that a deferred slot builds its value from
through the builder ``kschedlib.explain`` registers (a tuple of immutable things only, that
the garbage collector stops tracking; no node name holds a NUL)."""

_Builder = Callable[[str, tuple[Any, ...], Any], Any]
_lazy_builders: list[_Builder] = []


def register_lazy_builder(build: _Builder) -> None:
    """Set what builds a field's value (``feasible``, ``scores``, ``rejected``) from a lazy
    record and the Explanation's ``_kept``."""
    _lazy_builders[:] = [build]


class _SlotOverride:
    """A descriptor over an attrs slot (``slot``) that builds the stored value on read
    (subclasses' ``__get__``); writes and deletes go to the slot."""

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __set__(self, obj: Any, value: Any) -> None:
        self.slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self.slot.__delete__(obj)


class _DeferredSlot(_SlotOverride):
    """An attrs slot whose stored value may be a lazy record (see ``LAZY``) or, with
    ``deferred``, a :class:`Deferred`: built on first read and stored in its place, so every
    reader (``==``, ``to_dict``, pickling) sees the value."""

    __slots__ = ("name", "deferred")

    def __init__(self, slot: Any, name: str, deferred: bool) -> None:
        super().__init__(slot)
        self.name = name
        self.deferred = deferred

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.slot.__get__(obj, owner)
        if type(value) is tuple:
            if value and value[0] == LAZY:
                value = _lazy_builders[0](self.name, value, obj._kept)
                self.slot.__set__(obj, value)
        elif self.deferred and isinstance(value, Deferred):
            value = value.build()
            self.slot.__set__(obj, value)
        return value

    def raw(self, obj: Any) -> Any:
        """The stored value, a Deferred not built."""
        return self.slot.__get__(obj, type(obj))


FEASIBLE_SLOT = _DeferredSlot(Explanation.__dict__["feasible"], "feasible", True)
setattr(Explanation, "feasible", FEASIBLE_SLOT)  # noqa: B010 - a descriptor over the slot
SCORES_SLOT = _DeferredSlot(Explanation.__dict__["scores"], "scores", False)
setattr(Explanation, "scores", SCORES_SLOT)  # noqa: B010 - a descriptor over the slot
REJECTED_SLOT = _DeferredSlot(Explanation.__dict__["rejected"], "rejected", False)
setattr(Explanation, "rejected", REJECTED_SLOT)  # noqa: B010 - a descriptor over the slot


_FIELDS = [a for a in attrs.fields(Explanation) if a.name != "_kept"]
def _explanation_maker() -> Callable[..., Explanation]:
    """A function setting every slot of a new Explanation straight (its member descriptors),
    without the checks and descriptors of ``__init__``."""
    names = [a.name for a in attrs.fields(Explanation)]
    env: dict[str, Any] = {"_new": object.__new__, "_cls": Explanation}
    lines = []
    for i, name in enumerate(names):
        d = Explanation.__dict__[name]
        env[f"_s{i}"] = getattr(d, "slot", d).__set__
        lines.append(f"    _s{i}(e, v{i})")
    args = ", ".join(f"v{i}" for i in range(len(names)))
    src = f"def new_explanation({args}):\n    e = _new(_cls)\n" + "\n".join(lines)
    exec(src + "\n    return e\n", env)  # noqa: S102 - generated from the fields above
    return env["new_explanation"]  # type: ignore[no-any-return]


new_explanation = _explanation_maker()
"""``new_explanation(*fields, kept)``: as ``Explanation(*fields, kept=kept)`` (what
recording an attempt uses: every field given, lazy ones as stored)."""


_stored_builders: list[Callable[[tuple[Any, ...]], Explanation]] = []


def register_stored_builder(build: Callable[[tuple[Any, ...]], Explanation]) -> None:
    """Set what builds an Explanation from a stored tuple (``kschedlib.explain`` registers
    it: its compact records, else ``new_explanation``'s arguments)."""
    _stored_builders[:] = [build]


def from_stored(value: tuple[Any, ...]) -> Explanation:
    """The Explanation a stored tuple stands for."""
    if _stored_builders:
        return _stored_builders[0](value)
    return new_explanation(*value)


_ABSENT: Any = object()


class ExplanationTable(dict[str, Explanation]):
    """Pod key -> its last Explanation. An explanation on the folded score path (and its
    summary, for older pods) may be stored as a plain tuple (see :func:`from_stored`; a
    tuple of immutable things leaves the garbage collector little to count):
    every read gives the Explanation, built (and kept in its place) on first read; copies
    keep what is stored."""

    __slots__ = ()

    def _built(self, key: str, value: Any) -> Explanation:
        if type(value) is tuple:
            value = from_stored(value)
            dict.__setitem__(self, key, value)
        return value  # type: ignore[no-any-return]

    def _build_all(self) -> None:
        stored: list[tuple[str, Any]] = list(dict.items(self))
        for key, value in stored:
            if type(value) is tuple:
                dict.__setitem__(self, key, from_stored(value))

    def __getitem__(self, key: str) -> Explanation:
        return self._built(key, dict.__getitem__(self, key))

    def get(self, key: str, default: Any = None) -> Any:
        value = dict.get(self, key, _ABSENT)
        return default if value is _ABSENT else self._built(key, value)

    def pop(self, key: str, default: Any = _ABSENT) -> Any:
        value = dict.pop(self, key) if default is _ABSENT else dict.pop(self, key, default)
        return from_stored(value) if type(value) is tuple else value

    def popitem(self) -> tuple[str, Explanation]:
        key, value = dict.popitem(self)
        stored: Any = value
        return key, (from_stored(stored) if type(stored) is tuple else value)

    def setdefault(self, key: str, default: Any = None) -> Any:
        return self._built(key, dict.setdefault(self, key, default))

    def items(self) -> Any:
        self._build_all()
        return dict.items(self)

    def values(self) -> Any:
        self._build_all()
        return dict.values(self)

    def __iter__(self) -> Iterator[str]:
        # Defined so that dict(table), {**table} and dict.update(d, table) go through
        # keys() and __getitem__ (built Explanations), not CPython's raw dict copy.
        return dict.__iter__(self)

    def copy(self) -> ExplanationTable:
        new = ExplanationTable()
        dict.update(new, dict.items(self))  # (what is stored, summaries unbuilt)
        return new

    def __eq__(self, other: object) -> bool:
        self._build_all()
        if isinstance(other, ExplanationTable):
            other._build_all()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        self._build_all()
        return dict.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        self._build_all()
        return (ExplanationTable, (), None, None, iter(dict.items(self)))


def _verdict(v: NodeVerdict) -> dict[str, Any]:
    return {"plugin": v.plugin, "code": v.code, "reasons": list(v.reasons)}


@attrs.define(slots=True, frozen=True)
class SchedulingResult:
    """One attempt: the pod, where it went (or why not), and any nomination/victims."""

    pod: Pod
    outcome: Outcome
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()
    explanation: Explanation | None = None
    post_filter_ran: bool = False
    batch: str | None = None
    """The opportunistic batch's outcome of the scheduling cycle (``no_hint``, ``hint_used``,
    ``hint_not_used``, as kube-scheduler's scheduler_batch_attempts_total counts them); None
    with OpportunisticBatching off or for a binding cycle resumed after Permit."""

    @property
    def key(self) -> str:
        return self.pod.key


class _ExplanationSlot(_SlotOverride):
    """SchedulingResult.explanation's slot: it may hold an Explanation as a plain tuple (what
    recording an attempt stores, see :func:`from_stored`), built into the Explanation on first
    read and kept in its place."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.slot.__get__(obj, owner)
        if type(value) is tuple:
            value = from_stored(value)
            self.slot.__set__(obj, value)
        return value


setattr(  # noqa: B010 - a descriptor over the slot
    SchedulingResult, "explanation",
    _ExplanationSlot(SchedulingResult.__dict__["explanation"]),
)


@attrs.define(slots=True)
class Histogram:
    """A plain histogram of durations in seconds (count, sum, buckets)."""

    buckets: tuple[float, ...] = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0)
    counts: list[int] = attrs.field(factory=lambda: [0] * 11)
    count: int = 0
    sum: float = 0.0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.sum += seconds
        # The first bucket whose bound is at least ``seconds``; past the last, the +Inf one.
        i = bisect_left(self.buckets, seconds)
        self.counts[min(i, len(self.counts) - 1)] += 1


@attrs.define(slots=True)
class SchedulerMetrics:
    """Counters the host can read: attempts by result and attempt durations by result."""

    schedule_attempts: Counter[str] = attrs.field(factory=Counter)
    attempt_duration: dict[str, Histogram] = attrs.field(factory=dict)
    preemption_attempts: int = 0
    preemption_victims: int = 0
    batch: BatchMetrics = attrs.field(factory=BatchMetrics)
    """Opportunistic batching: attempts by result, cache flushes by reason, durations."""

    def observe_attempt(self, result: str, seconds: float) -> None:
        self.schedule_attempts[result] += 1
        self.attempt_duration.setdefault(result, Histogram()).observe(seconds)
