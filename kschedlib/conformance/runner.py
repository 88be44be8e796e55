"""Compare kschedlib's decisions with kube-scheduler's recorded ones, scenario by scenario."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterator
from typing import Any

import attrs

from kschedlib.api.scenario import Scenario
from kschedlib.conformance.session import ScenarioSession
from kschedlib.features import FeatureGates

FIELDS = (
    "preFilter", "feasibleNodes", "filterStatuses", "scores", "totals", "selected", "error",
    "postFilter", "preEnqueue", "claims", "batchHint",
)


@attrs.define(slots=True)
class Mismatch:
    scenario: str
    pod: str
    field: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return (
            f"{self.scenario}: {self.pod}: {self.field}: expected "
            f"{json.dumps(self.expected, sort_keys=True)} got {json.dumps(self.got, sort_keys=True)}"
        )


@attrs.define(slots=True)
class ScenarioResult:
    name: str
    family: str
    passed: bool
    mismatches: list[Mismatch]
    error: str = ""


def scenario_files(directory: str, batching: bool = True) -> Iterator[tuple[str, str]]:
    """(scenario path, expectation path) pairs in name order. With ``batching`` (the
    OpportunisticBatching gate), ``<name>.batching.expected.json`` is preferred when present
    (kube-scheduler's cycles with batching hints)."""
    for fname in sorted(os.listdir(directory)):
        if fname.endswith(".json") and not fname.endswith(".expected.json"):
            base = os.path.join(directory, fname[: -len(".json")])
            exp = base + ".expected.json"
            if batching and os.path.exists(base + ".batching.expected.json"):
                exp = base + ".batching.expected.json"
            if os.path.exists(exp):
                yield os.path.join(directory, fname), exp


def _claims_key(claims: Any) -> Any:
    """The claims of a result with the random 5 characters of the extended-resource claim's
    name left out (kube-apiserver picks them)."""
    if not isinstance(claims, dict):
        return claims
    return {
        (k[:-5] if isinstance(v, dict) and v.get("extendedResources") else k): v
        for k, v in claims.items()
    }


def compare(name: str, expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> list[Mismatch]:
    out: list[Mismatch] = []
    for i in range(max(len(expected), len(got))):
        e = expected[i] if i < len(expected) else None
        g = got[i] if i < len(got) else None
        pod = (e or g or {}).get("pod", f"#{i}")
        if e is None or g is None:
            out.append(Mismatch(name, pod, "result", e is not None, g is not None))
            continue
        if e.get("pod") != g.get("pod") or bool(e.get("retry")) != bool(g.get("retry")):
            out.append(Mismatch(name, pod, "pod", [e.get("pod"), e.get("retry")], [g.get("pod"), g.get("retry")]))
            continue
        for f in FIELDS:
            ev, gv = e.get(f), g.get(f)
            if f == "claims":
                ev, gv = _claims_key(ev), _claims_key(gv)
            if ev != gv:
                out.append(Mismatch(name, pod, f, e.get(f), g.get(f)))
    return out


def run_scenario(
    path: str, expected_path: str, feature_gates: FeatureGates | str | None = None
) -> ScenarioResult:
    with open(expected_path, encoding="utf-8") as fh:
        expected = json.load(fh)
    name = expected.get("scenario") or os.path.basename(path)[: -len(".json")]
    try:
        scenario = Scenario.load(path)
        got = ScenarioSession(scenario, feature_gates=feature_gates).run()
    except Exception as exc:  # a crash is a failed scenario, reported with its cause
        tb = traceback.format_exc(limit=3)
        fam = name.rpartition("-")[0]
        return ScenarioResult(name, fam, False, [], f"{type(exc).__name__}: {exc}\n{tb}")
    mismatches = compare(name, expected["results"], got)
    return ScenarioResult(name, scenario.family, not mismatches, mismatches)


def run_directory(
    directory: str, families: set[str] | None = None,
    feature_gates: FeatureGates | str | None = None,
) -> list[ScenarioResult]:
    gates = FeatureGates.of(feature_gates)
    results = []
    for path, exp in scenario_files(directory, gates.enabled("OpportunisticBatching")):
        fam = os.path.basename(path)[: -len(".json")].rpartition("-")[0]
        if families and fam not in families:
            continue
        results.append(run_scenario(path, exp, gates))
    return results
