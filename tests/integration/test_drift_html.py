"""The drift HTML page in a real headless Chromium (Debian's `chromium`, driven by
Playwright through `executable_path`): at 1280 px wide it never scrolls sideways, whatever
the report holds (64-character hashes, long field names, long details), and it loads with
no console error and fetches nothing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mir.drift import AgentDrift, DriftReport, MetricResult, Window
from mir.drift import html_page as drift_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not found: `make test` installs it (apt-get install -y chromium)",
)


@pytest.fixture
def browser_page():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra)")
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 800})
        finally:
            browser.close()


def _report() -> DriftReport:
    hashes = ", ".join(f"{i:x}" * 64 for i in range(1, 6))
    field = "customer_reported_problem_category_" * 3
    metrics = [
        MetricResult(
            metric="change.contract", kind="semantic", family="change", value=5.0, warn=1.0,
            verdict="warn", detail=hashes, reference_n=900, current_n=300,
        ),
        MetricResult(
            metric=f"field.{field}.js", kind="semantic", family="categorical.js", value=0.31,
            warn=0.15, suspend=0.25, verdict="suspend", detail=f"{'x' * 300}: 12% -> 80%",
            reference_histogram=[0.02] * 50, current_histogram=[0.02] * 50,
            reference_n=900, current_n=300,
        ),
        MetricResult(
            metric="rate.review_requested", kind="semantic", family="rate", reference=0.132,
            current=0.005, value=-0.127, p_value=1.1e-7, warn=0.05, suspend=0.15,
            verdict="warn", reference_n=900, current_n=300,
        ),
    ]  # fmt: skip
    agent = AgentDrift(
        agent="refunds." + "very_long_agent_name_" * 6,
        reference=Window(label="21d", decisions=900),
        current=Window(label="7d since resumed 2026-12-01 10:00", decisions=300),
        metrics=metrics,
        likely_causes=[f"new contract: {'d' * 64}"],
    )
    return DriftReport(
        run_id="r" * 32, at=datetime(2026, 12, 1, tzinfo=UTC), agents=[agent],
        notes=["a note " + "n" * 400],
    )  # fmt: skip


def test_the_page_never_scrolls_sideways_at_1280_px(browser_page, tmp_path: Path):
    path = tmp_path / "drift.html"
    path.write_text(drift_page(_report()), encoding="utf-8")
    problems: list[str] = []
    requests: list[str] = []
    browser_page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    browser_page.on("request", lambda r: requests.append(r.url))
    browser_page.goto(path.as_uri())
    browser_page.wait_for_load_state("load")
    assert problems == [] and requests == [path.as_uri()]
    width = browser_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, width
    text = browser_page.text_content("body") or ""
    assert "13.2%" in text and "0.5%" in text  # rates as the CLI shows them
    assert "d" * 13 not in text and "1" * 13 not in text  # hashes by 12 characters
