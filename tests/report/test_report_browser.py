"""The HTML report in a real headless browser (Debian's Chromium, driven by Playwright).

Skipped with a reason where Playwright or /usr/bin/chromium is missing, except under CI
(``CI`` set), where a missing browser is a failure: CI installs both.
Set ``KSCHEDLIB_SCREENSHOT_DIR`` to keep the screenshots.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from kschedlib import Report
from tests.report.cluster_gen import generated_simulation

CHROMIUM = os.environ.get("KSCHEDLIB_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser test: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[report-test]')")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str], float]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    start = time.monotonic()
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, errors, [u for u in requests if not u.startswith("file:")], time.monotonic() - start


def _shot(page: Any, tmp_path: Path, name: str) -> Path:
    out = Path(os.environ.get("KSCHEDLIB_SCREENSHOT_DIR", tmp_path)) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000  # a real picture, not a blank page
    return out


def test_report_renders_without_errors_and_matches_the_run(browser: Any, tmp_path: Path) -> None:
    sim = generated_simulation()
    rep = Report.from_simulation(sim, title="generated-90n")
    path = tmp_path / "report.html"
    rep.write_html(path)
    page, errors, remote, _ = _open(browser, path)
    assert errors == []
    assert remote == []
    s = rep.summary
    for key in ("pods", "scheduled", "unschedulable", "preempted", "preemptors", "nodes"):
        assert page.inner_text(f"#sum-{key}") == f"{s[key]:,}", key
    assert s["unschedulable"] > 0 and s["preempted"] > 0
    # Reasons table: one row per grouped reason, with its pod count.
    rows = page.locator("#reasons tbody tr")
    assert rows.count() == len(rep.data["reasons"])
    assert rows.nth(0).locator("td").nth(1).inner_text() == str(rep.data["reasons"][0][1])
    # Heat map: one canvas per zone and resource.
    assert page.locator("#heat canvas").count() == 3 * len(rep.data["resources"])
    # The first unscheduled pod is open: its rejections are listed.
    assert "Filtered out" in page.inner_text("#pod-detail")
    # Pagination: 50 rows per page, filter narrows the list.
    assert page.locator("#pods-table tbody tr").count() == 50
    page.select_option("#pod-outcome", "Unschedulable")
    assert page.locator("#pods-table tbody tr").count() == s["unschedulable"]
    page.select_option("#pod-outcome", "")
    page.fill("#pod-filter", "web-00001")
    # (The page's CSP forbids eval, so wait with a locator, not wait_for_function.)
    expect(page.locator("#pods-table tbody tr")).to_have_count(1)
    page.click("#pods-table tbody tr")
    detail = page.inner_text("#pod-detail")
    assert "Score breakdown" in detail and sim.last["shop/web-00001"].node in detail
    assert page.locator("#pod-detail svg rect").count() > 0
    # Hovering a node shows allocatable and requested.
    box = page.locator("#heat canvas").first.bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    tip = page.inner_text("#tip")
    assert "allocatable" in tip and "requested" in tip
    assert page.locator("#preemptions-table tbody tr").count() == 1
    # The preemptor's last attempt bound it; its detail still shows the preempting attempt.
    page.fill("#pod-filter", "ops/critical")
    expect(page.locator("#pods-table tbody tr")).to_have_count(1)
    expect(page.locator("#pods-table tbody tr")).to_contain_text("ops/critical")  # debounced
    page.click("#pods-table tbody tr")
    detail = page.inner_text("#pod-detail")
    assert "Earlier attempt: preempted 2 pod(s) on node-0001" in detail
    assert "batch/batch-0, batch/batch-1" in detail
    assert page.is_hidden("#devices")  # no claims in this run
    assert errors == []
    _shot(page, tmp_path, "report-generated.png")
    page.close()


def test_device_section_shows_when_claims_are_allocated(browser: Any, tmp_path: Path) -> None:
    sim = generated_simulation(12, 10)
    claim = {
        "kind": "ResourceClaim", "metadata": {"name": "gpu", "namespace": "ml"},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d.example.com", "pool": "p", "device": "dev-0"}]}}},
    }
    path = tmp_path / "claims.html"
    Report.from_results(sim.scheduler, sim.last.values(), claims=[claim]).write_html(path)
    page, errors, remote, _ = _open(browser, path)
    assert errors == [] and remote == []
    assert page.is_visible("#devices")
    assert "dev-0" in page.inner_text("#devices-table")
    page.close()


def test_example_report_shows_the_dra_allocation(browser: Any, tmp_path: Path) -> None:
    from kschedlib.cli.simulate import load_input, simulate

    config, objects = load_input(str(Path(__file__).resolve().parents[2] / "examples" / "cluster.json"))
    rep = Report.from_simulation(simulate(config, objects, explain=True), title="example")
    path = tmp_path / "example.html"
    rep.write_html(path)
    page, errors, remote, _ = _open(browser, path)
    assert errors == [] and remote == []
    assert page.inner_text("#sum-scheduled") == str(rep.summary["scheduled"])
    assert page.is_visible("#devices")
    devices = page.inner_text("#devices-table")
    assert "ml/inference-gpu-q8w4z" in devices and "gpu-0" in devices and "ml/inference" in devices
    assert "50.0%" in page.inner_text("#device-use")  # 1 of gpu1's 2 published devices
    _shot(page, tmp_path, "report-example.png")
    page.close()
