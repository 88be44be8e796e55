"""The bench freezes the loaded cluster out of GC passes only while timing, with the same
placements as without."""

from __future__ import annotations

import gc
from typing import Any

from kschedlib.bench.scheduling import load, schedule
from tests.corpus import CORPUS


def _placements(freeze_gc: bool) -> list[tuple[str, str, str]]:
    before = gc.get_freeze_count()
    b = schedule(load(str(CORPUS / "basics-002.json")), freeze_gc=freeze_gc)
    assert gc.get_freeze_count() == before  # unfrozen again afterwards (or left as it was)
    return [(r.pod.key, r.node or "", r.message) for r in b.results]


def test_freezing_changes_nothing_but_the_collector() -> None:
    frozen = _placements(True)
    assert frozen and frozen == _placements(False)


def test_an_existing_freeze_is_left_alone() -> None:
    if gc.get_freeze_count() == 0:
        gc.freeze()  # as a host that froze its own objects
        try:
            assert _placements(True)
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()
    else:
        assert _placements(True)


def test_the_explain_cost_bench_leaves_the_collector_as_it_found_it(capsys: Any) -> None:
    from kschedlib.bench.__main__ import main

    before = gc.get_freeze_count()
    for extra in ([], ["--gc-as-is"]):
        assert main(["--explain-cost", str(CORPUS / "basics-002.json"), "--rounds", "1",
                     *extra]) == 0
        assert gc.get_freeze_count() == before
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and all(ln.startswith("explain cost: ") for ln in out)
    assert "collector as is" in out[1] and "collector as is" not in out[0]
