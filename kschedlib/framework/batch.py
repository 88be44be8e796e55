"""Opportunistic batching (v1.35's OpportunisticBatching, KEP-5598, beta and on by default).

After a cycle that scored several nodes, a signable pod's ranking minus the chosen node is
kept per profile. The next pod of the scheduling queue's next cycle with the same SignPod
signature, asked while the kept ranking is at most ``MAX_BATCH_AGE`` old (the injected
clock's seconds), takes the best remaining node as a hint when the node chosen last time no
longer passes its filters (one pod per node); the cycle then filters the hinted node alone,
as it would a nominated node, and on success neither scores nor moves the round-robin start.
The ranking is not rescored: it stays the first pod's.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState

__all__ = [
    "FLUSH_REASONS",
    "HINT_NOT_USED",
    "HINT_USED",
    "MAX_BATCH_AGE",
    "NO_HINT",
    "Batching",
    "BatchMetrics",
    "OpportunisticBatch",
]

MAX_BATCH_AGE = 0.5
"""Seconds a kept ranking stays usable (kube-scheduler's maxBatchAge, 500 ms)."""

NO_HINT = "no_hint"
HINT = "hint"
HINT_USED = "hint_used"
HINT_NOT_USED = "hint_not_used"

FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_EMPTY_LIST = "empty_list"
FLUSH_EXPIRED = "expired"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
FLUSH_REASONS = (
    FLUSH_POD_FAILED, FLUSH_POD_SKIPPED, FLUSH_NODE_MISSING, FLUSH_NODE_NOT_FULL,
    FLUSH_EMPTY_LIST, FLUSH_EXPIRED, FLUSH_POD_INCOMPATIBLE, FLUSH_POD_NOT_BATCHABLE,
)
"""kube-scheduler's batch_cache_flushed_total reasons (pod_failed cannot happen in v1.35.4:
only a cycle that found a node records itself)."""


@attrs.define(slots=True)
class DurationStats:
    """Count and sum of observed durations in seconds."""

    count: int = 0
    sum: float = 0.0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.sum += seconds


@attrs.define(slots=True)
class BatchMetrics:
    """scheduler_batch_attempts_total{profile,result}, scheduler_batch_cache_flushed_total
    {profile,reason}, and the durations of GetNodeHint ({hint|no_hint, profile}) and
    StoreScheduleResults ({profile})."""

    attempts: Counter[tuple[str, str]] = attrs.field(factory=Counter)
    cache_flushed: Counter[tuple[str, str]] = attrs.field(factory=Counter)
    get_node_hint_duration: dict[tuple[str, str], DurationStats] = attrs.field(factory=dict)
    store_schedule_results_duration: dict[str, DurationStats] = attrs.field(factory=dict)

    def attempts_of(self, result: str) -> int:
        """Attempts with this result over all profiles."""
        return sum(n for (_, r), n in self.attempts.items() if r == result)

    def flushes_of(self, reason: str) -> int:
        """Cache flushes for this reason over all profiles."""
        return sum(n for (_, r), n in self.cache_flushed.items() if r == reason)

    def copy(self) -> BatchMetrics:
        return BatchMetrics(
            Counter(self.attempts),
            Counter(self.cache_flushed),
            {k: attrs.evolve(v) for k, v in self.get_node_hint_duration.items()},
            {k: attrs.evolve(v) for k, v in self.store_schedule_results_duration.items()},
        )


class OpportunisticBatch:
    """One profile's batch: the kept ranking and what the last recorded cycle chose."""

    __slots__ = (
        "_created", "_det", "_last_chosen", "_last_cycle", "_metrics", "_profile", "_rng",
        "_signature", "_sorted", "batched_pods", "clock", "cycle", "hint", "outcome",
        "signature",
    )

    def __init__(
        self, profile: str, clock: Any, metrics: BatchMetrics, rng: random.Random,
        deterministic: bool,
    ) -> None:
        self._profile = profile
        self.clock = clock
        self._metrics = metrics
        self._rng = rng
        self._det = deterministic
        self._signature: Hashable | None = None
        self._sorted: list[str] = []
        """The kept ranking, worst first (the hint is popped from the end)."""
        self._created = 0.0
        self._last_cycle = -1
        self._last_chosen = ""
        self.batched_pods = 0
        # This cycle's: its queue cycle count, the signature, the hint offered, the outcome.
        self.cycle = 0
        self.signature: Hashable | None = None
        self.hint = ""
        self.outcome: str | None = None

    def copy(self, clock: Any, metrics: BatchMetrics, rng: random.Random) -> OpportunisticBatch:
        b = OpportunisticBatch(self._profile, clock, metrics, rng, self._det)
        b._signature = self._signature
        b._sorted = list(self._sorted)
        b._created = self._created
        b._last_cycle = self._last_cycle
        b._last_chosen = self._last_chosen
        b.batched_pods = self.batched_pods
        return b

    @property
    def remaining(self) -> tuple[str, ...]:
        """The kept ranking, best first."""
        return tuple(reversed(self._sorted))

    def begin(self, cycle: int) -> None:
        """A scheduling cycle of this profile starts (``cycle``: the queue's cycle count)."""
        self.cycle = cycle
        self.signature = None
        self.hint = ""
        self.outcome = NO_HINT

    def _flush(self, reason: str) -> None:
        self._metrics.cache_flushed[(self._profile, reason)] += 1

    def get_node_hint(self, fwk: Any, state: CycleState, pod: Pod, snapshot: Any) -> str:
        """GetNodeHint, after PreFilter: signs the pod and offers the best kept node when the
        kept ranking is usable for it ("" otherwise)."""
        t0 = time.perf_counter()
        sig = fwk.sign_pod(pod)
        self.signature = sig
        hint = ""
        if self._compatible(fwk, state, pod, sig, snapshot):
            hint = self._sorted.pop()
            self.hint = hint
            self.outcome = HINT_NOT_USED  # until the cycle chooses the hinted node
        else:
            self._metrics.attempts[(self._profile, NO_HINT)] += 1
        key = (HINT if hint else NO_HINT, self._profile)
        stats = self._metrics.get_node_hint_duration.get(key)
        if stats is None:
            stats = self._metrics.get_node_hint_duration[key] = DurationStats()
        stats.observe(time.perf_counter() - t0)
        return hint

    def _compatible(
        self, fwk: Any, state: CycleState, pod: Pod, sig: Hashable | None, snapshot: Any
    ) -> bool:
        if not self._sorted:
            return False
        if self.cycle != self._last_cycle + 1:
            self._flush(FLUSH_POD_SKIPPED)  # another pod's cycle ran in between
            return False
        if sig is None or sig != self._signature:
            self._flush(FLUSH_POD_INCOMPATIBLE)
            return False
        if self.clock.now() > self._created + MAX_BATCH_AGE:
            self._flush(FLUSH_EXPIRED)
            return False
        try:
            last = snapshot.node_infos().get(self._last_chosen)
        except KeyError:
            last = None
        if last is None:
            self._flush(FLUSH_NODE_MISSING)
            return False
        st = fwk.run_filter_plugins(state, pod, last)
        if st is None or not st.is_rejected():
            # The pod may still fit where the last one went: the ranking cannot say where
            # that node would rank now.
            self._flush(FLUSH_NODE_NOT_FULL)
            return False
        return True

    def store(
        self, chosen: str, nodes: Sequence[Any] | None = None, totals: Sequence[int] | None = None
    ) -> None:
        """StoreScheduleResults, after a cycle found ``chosen``: ``nodes`` (objects with a
        ``name``) and ``totals`` are the scored nodes (None when one node was feasible and
        nothing was scored)."""
        t0 = time.perf_counter()
        self._last_cycle = self.cycle
        self._last_chosen = chosen
        hint = self.hint
        if hint and hint == chosen:
            self.outcome = HINT_USED
            self._metrics.attempts[(self._profile, HINT_USED)] += 1
            self.batched_pods += 1
        else:
            if hint:
                self._metrics.attempts[(self._profile, HINT_NOT_USED)] += 1
            sig = self.signature
            rest = len(nodes) - 1 if nodes is not None else 0
            if sig is not None and rest > 0:
                assert nodes is not None and totals is not None
                self._signature = sig
                self._sorted = self._rank_rest([n.name for n in nodes], totals, chosen)
                self._created = self.clock.now()
            else:
                self._flush(FLUSH_POD_NOT_BATCHABLE if rest > 0 else FLUSH_EMPTY_LIST)
                self._signature = None
                self._sorted = []
        stats = self._metrics.store_schedule_results_duration.get(self._profile)
        if stats is None:
            stats = self._metrics.store_schedule_results_duration[self._profile] = DurationStats()
        stats.observe(time.perf_counter() - t0)

    def _rank_rest(self, names: Sequence[str], totals: Sequence[int], chosen: str) -> list[str]:
        """The scored nodes but ``chosen``, worst first: by total score, ties by node name
        (deterministic mode, best = smallest name) or at random."""
        if self._det:
            order = sorted(zip(totals, names, strict=True), key=lambda p: (-p[0], p[1]))
            out = [n for _, n in order if n != chosen]
        else:
            rnd = self._rng.random
            keyed = sorted(((t, rnd(), n) for t, n in zip(totals, names, strict=True)), reverse=True)
            out = [n for _, _, n in keyed if n != chosen]
        out.reverse()
        return out


class Batching:
    """The scheduler's batches, one per profile, and their metrics."""

    __slots__ = ("_batches", "_rng", "clock", "deterministic", "metrics")

    def __init__(
        self, profiles: Iterable[str], clock: Any, *, seed: int | None = None,
        deterministic: bool = False, metrics: BatchMetrics | None = None,
    ) -> None:
        self.clock = clock
        self.deterministic = deterministic
        self.metrics = metrics if metrics is not None else BatchMetrics()
        self._rng = random.Random(seed)
        self._batches = {
            p: OpportunisticBatch(p, clock, self.metrics, self._rng, deterministic)
            for p in profiles
        }

    def for_profile(self, profile: str) -> OpportunisticBatch | None:
        return self._batches.get(profile)

    def fork(self, clock: Any, metrics: BatchMetrics) -> Batching:
        """An independent copy (a scheduler fork's), on the fork's clock and metrics."""
        new = Batching((), clock, deterministic=self.deterministic, metrics=metrics)
        new._rng.setstate(self._rng.getstate())
        new._batches = {p: b.copy(clock, metrics, new._rng) for p, b in self._batches.items()}
        return new
