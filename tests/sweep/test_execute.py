from __future__ import annotations

import io
import json

import pytest
from distributed import Client, LocalCluster

from kschedlib.errors import KSchedError
from kschedlib.sweep import (
    Variant,
    baseline,
    growth,
    random_failures,
    run_sweep,
    text_progress,
    zones_down,
)
from kschedlib.sweep.results import records_equal
from tests.sweep.cluster_fixtures import three_zone_cluster


def _variants():  # type: ignore[no-untyped-def]
    base = three_zone_cluster()
    return base, [baseline(), *zones_down(base), *growth("1:3:1"),
                  *random_failures(base, samples=3, nodes=2, seed=5),
                  Variant(name="bad", remove_nodes=["nope"])]


def test_local_run_keeps_variant_order_and_reports_bad_variants_as_records() -> None:
    base, variants = _variants()
    seen = []
    res = run_sweep(base, variants, progress=lambda d, t: seen.append((d, t)))
    assert [r["variant"] for r in res.records] == [v.name for v in variants]
    assert seen[-1] == (len(variants), len(variants))
    assert "node 'nope' is not in the cluster" in res.records[-1]["error"]
    assert res.records[0]["scheduled"] == 8


def test_duplicate_names_are_refused() -> None:
    base, _ = _variants()
    with pytest.raises(KSchedError, match="duplicate variant names: x"):
        run_sweep(base, [Variant(name="x"), Variant(name="x")])


def test_dask_local_cluster_gives_identical_records() -> None:
    base, variants = _variants()
    local = run_sweep(base, variants)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        done = []
        remote = run_sweep(base, variants, client=client, progress=lambda d, t: done.append(d))
    assert records_equal(local.records, remote.records)
    assert sorted(done) == list(range(1, len(variants) + 1))


def test_writers_and_summary() -> None:
    base, variants = _variants()
    res = run_sweep(base, variants[:3])
    buf = io.StringIO()
    res.write_jsonl(buf)
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert lines == json.loads(json.dumps(res.to_dicts()))
    csv_buf = io.StringIO()
    res.write_csv(csv_buf)
    rows = csv_buf.getvalue().splitlines()
    assert rows[0].startswith("index,variant,") and len(rows) == 4
    table = res.summary_table()
    assert "zone-down:zone-a" in table and table.splitlines()[0].startswith("VARIANT")
    out = io.StringIO()
    text_progress(out)(3, 3)
    assert out.getvalue().endswith("3/3\n")
    # Off a terminal: no carriage returns, only the final line of a short run.
    out = io.StringIO()
    show = text_progress(out)
    for i in range(1, 4):
        show(i, 3)
    assert out.getvalue() == f"variants [{'#' * 30}] 3/3\n"

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    show = text_progress(tty)
    for i in range(1, 4):
        show(i, 3)
    assert tty.getvalue().count("\r") == 3 and tty.getvalue().endswith("3/3\n")
