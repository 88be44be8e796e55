"""Assertions on scheduling results whose failure messages say what happened instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kschedlib.results import Explanation, Outcome, SchedulingResult

__all__ = [
    "assert_feasible",
    "assert_preempted",
    "assert_rejected",
    "assert_schedulable",
    "assert_scheduled",
    "assert_score_order",
    "assert_unschedulable",
    "describe",
]


def describe(result: SchedulingResult) -> str:
    """A short account of an attempt: outcome, node or message, and the explanation's
    rejections and top scores when one was recorded."""
    lines = [f"pod {result.key}: {result.outcome.value}"
             + (f" on {result.node}" if result.node else "")
             + (f" (nominated {result.nominated_node})" if result.nominated_node else "")]
    if result.message:
        lines.append(f"  message: {result.message}")
    exp = result.explanation
    if exp is not None:
        if exp.pre_filter is not None:
            lines.append(f"  PreFilter {exp.pre_filter.plugin}: {', '.join(exp.pre_filter.reasons)}")
        for node, v in sorted(exp.rejected.items())[:10]:
            lines.append(f"  rejected {node} by {v.plugin or '-'}: {', '.join(v.reasons)}")
        if len(exp.rejected) > 10:
            lines.append(f"  ... {len(exp.rejected) - 10} more rejected nodes")
        ranked = sorted(exp.scores.items(), key=lambda kv: (-kv[1].total, kv[0]))
        for node, s in ranked[:5]:
            parts = ", ".join(f"{p}={d.weighted}" for p, d in s.plugins.items() if d.weighted)
            lines.append(f"  score {node}: {s.total} ({parts})")
    return "\n".join(lines)


def _explanation(result: SchedulingResult | Explanation) -> Explanation:
    if isinstance(result, Explanation):
        return result
    exp = result.explanation
    if exp is None:
        raise AssertionError(
            f"no explanation recorded for {result.pod.key}; build the Scheduler with explain=True"
        )
    return exp


def assert_scheduled(result: SchedulingResult | None, on: str | Iterable[str] | None = None) -> None:
    """The attempt scheduled the pod (on ``on``, or on one of the nodes ``on`` lists)."""
    if result is None:
        raise AssertionError("expected a scheduling result, got None (pod was not attempted)")
    if result.outcome != Outcome.Scheduled:
        raise AssertionError(f"expected {result.key} to be scheduled\n{describe(result)}")
    if on is None:
        return
    allowed = {on} if isinstance(on, str) else set(on)
    if result.node not in allowed:
        want = on if isinstance(on, str) else f"one of {sorted(allowed)}"
        raise AssertionError(f"expected {result.key} on {want}, got {result.node}\n{describe(result)}")


def assert_unschedulable(result: SchedulingResult | None, reason: str | None = None) -> None:
    """The attempt found no node; ``reason`` must appear in the FailedScheduling message."""
    if result is None:
        raise AssertionError("expected a scheduling result, got None (pod was not attempted)")
    if result.outcome != Outcome.Unschedulable:
        raise AssertionError(f"expected {result.key} to be unschedulable\n{describe(result)}")
    if reason is not None and reason not in result.message:
        raise AssertionError(
            f"expected the FailedScheduling message of {result.key} to mention {reason!r}\n"
            f"{describe(result)}"
        )


def assert_schedulable(result: SchedulingResult | None) -> None:
    """Alias of ``assert_scheduled(result)`` for symmetry with ``assert_unschedulable``."""
    assert_scheduled(result)


def assert_feasible(result: SchedulingResult | Explanation, nodes: Iterable[str]) -> None:
    """Exactly ``nodes`` passed Filter."""
    exp = _explanation(result)
    want, got = sorted(nodes), sorted(exp.feasible)
    if want != got:
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        why = [f"  {n} rejected by {exp.rejected[n].plugin}: {', '.join(exp.rejected[n].reasons)}"
               for n in missing if n in exp.rejected]
        raise AssertionError(
            f"feasible nodes of {exp.pod}: expected {want}, got {got}"
            + (f"\n  missing: {missing}" if missing else "")
            + (f"\n  unexpected: {extra}" if extra else "")
            + ("\n" + "\n".join(why) if why else "")
        )


def assert_rejected(result: SchedulingResult | Explanation, node: str, *,
                    plugin: str | None = None, reason: str | None = None) -> None:
    """Filter rejected ``node`` (by ``plugin``, with ``reason`` among its reasons)."""
    exp = _explanation(result)
    v = exp.rejected.get(node)
    if v is None:
        state = "feasible" if node in exp.feasible else "not evaluated"
        raise AssertionError(f"expected {node} to be rejected for {exp.pod}, but it was {state}")
    if plugin is not None and v.plugin != plugin:
        raise AssertionError(
            f"expected {node} to be rejected by {plugin} for {exp.pod}, "
            f"but {v.plugin} rejected it: {', '.join(v.reasons)}"
        )
    if reason is not None and not any(reason in r for r in v.reasons):
        raise AssertionError(
            f"expected a reason containing {reason!r} for {node}, got {list(v.reasons)}"
        )


def assert_score_order(result: SchedulingResult | Explanation, nodes: Sequence[str], *,
                       plugin: str | None = None, strict: bool = True) -> None:
    """``nodes`` are ranked in this order by total score (or by ``plugin``'s weighted
    score): each scores more than the next (or at least as much, with ``strict=False``)."""
    exp = _explanation(result)
    scores: list[tuple[str, int]] = []
    for n in nodes:
        s = exp.scores.get(n)
        if s is None:
            raise AssertionError(
                f"{n} was not scored for {exp.pod} (scored: {sorted(exp.scores)})"
            )
        if plugin is None:
            scores.append((n, s.total))
        else:
            d = s.plugins.get(plugin)
            if d is None:
                raise AssertionError(f"plugin {plugin} did not score {n} (plugins: {sorted(s.plugins)})")
            scores.append((n, d.weighted))
    for (a, sa), (b, sb) in zip(scores, scores[1:], strict=False):
        if sa < sb or (strict and sa == sb):
            what = f"{plugin} score" if plugin else "total score"
            table = ", ".join(f"{n}={v}" for n, v in scores)
            raise AssertionError(
                f"expected {what} order {list(nodes)} for {exp.pod}, but {a}={sa} "
                f"{'<' if sa < sb else '=='} {b}={sb} ({table})"
            )


def assert_preempted(result: SchedulingResult | None, victims: Iterable[str] | None = None,
                     node: str | None = None) -> None:
    """The attempt preempted: nominated ``node`` (if given) and evicted exactly ``victims``
    (pod keys, if given)."""
    if result is None:
        raise AssertionError("expected a scheduling result, got None (pod was not attempted)")
    if not result.victims:
        raise AssertionError(f"expected {result.key} to preempt\n{describe(result)}")
    got = sorted(v.key for v in result.victims)
    if victims is not None and sorted(victims) != got:
        raise AssertionError(f"expected victims {sorted(victims)}, got {got}\n{describe(result)}")
    if node is not None and result.nominated_node != node:
        raise AssertionError(
            f"expected {result.key} nominated to {node}, got {result.nominated_node}"
        )
