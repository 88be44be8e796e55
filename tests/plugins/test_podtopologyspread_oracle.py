"""Oracle tests: PodTopologySpread (and InterPodAffinity) reproduce kube-scheduler v1.35's
filter statuses and final weighted scores on the topology-spread conformance scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugins.test_interpodaffinity_oracle import run_scenario, scenario_paths


@pytest.mark.parametrize("path", scenario_paths("topology-spread"), ids=lambda p: p.stem)
def test_topology_spread_scenarios(path: Path) -> None:
    mismatches = run_scenario(path)
    assert not mismatches, "\n".join(mismatches)


def test_topology_spread_corpus_is_present() -> None:
    assert len(scenario_paths("topology-spread")) >= 23
