"""kschedlib against recorded kube-scheduler v1.35 decisions, through the Scheduler facade.

Every family listed in ASSERTED must pass at 100%; the others are reported by the runner.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from kschedlib.conformance.runner import ScenarioResult, run_directory
from tests.corpus import CORPUS, DRA_ALPHA_CORPUS

ASSERTED = (
    "basics",
    "dra",
    "image-locality",
    "mixed",
    "node-affinity",
    "nodename-unschedulable",
    "pod-affinity",
    "ports",
    "preemption",
    "resources",
    "scoring-strategies",
    "taints",
    "topology-spread",
    "volumes",
)


@pytest.fixture(scope="module")
def results() -> dict[str, list[ScenarioResult]]:
    assert CORPUS.is_dir(), f"conformance corpus not found at {CORPUS}"
    by_family: dict[str, list[ScenarioResult]] = defaultdict(list)
    for r in run_directory(str(CORPUS)):
        by_family[r.family].append(r)
    return by_family


def test_corpus_has_every_family(results: dict[str, list[ScenarioResult]]) -> None:
    assert set(ASSERTED) <= set(results)


@pytest.mark.parametrize("family", ASSERTED)
def test_family_passes(results: dict[str, list[ScenarioResult]], family: str) -> None:
    failed = [r for r in results[family] if not r.passed]
    details = "\n".join(
        f"{r.name}: {r.error.splitlines()[0] if r.error else ''}"
        + "".join(f"\n  {m}" for m in r.mismatches[:3])
        for r in failed[:5]
    )
    assert not failed, f"{len(failed)}/{len(results[family])} {family} scenarios differ:\n{details}"


def test_dra_alpha_corpus_passes() -> None:
    """The DRA alpha-gate scenarios (recorded with their featureGates on) all pass."""
    assert DRA_ALPHA_CORPUS.is_dir(), f"corpus not found at {DRA_ALPHA_CORPUS}"
    got = run_directory(str(DRA_ALPHA_CORPUS))
    assert len(got) >= 19
    failed = [r for r in got if not r.passed]
    details = "\n".join(
        f"{r.name}: {r.error.splitlines()[0] if r.error else ''}"
        + "".join(f"\n  {m}" for m in r.mismatches[:3])
        for r in failed[:5]
    )
    assert not failed, f"{len(failed)}/{len(got)} dra-alpha scenarios differ:\n{details}"
