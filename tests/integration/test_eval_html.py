"""The HTML report in a real headless Chromium (Debian's `chromium`, driven by
Playwright through `executable_path`: no browser download). It must load with no
console error, run no injected script, fetch nothing, and show the counts the JSON
report has; its filters must work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.evals.reports import render_html, render_json
from tests.unit.evals.test_reports import nasty_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not found: `make test` installs it (apt-get install -y chromium)",
)


@pytest.fixture
def page(tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra)")
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_report_loads_cleanly_and_its_counts_match_the_json(page, tmp_path: Path) -> None:
    report = nasty_report()
    traces = {"flow-a-0": [{"seq": 0, "step": "snapshot", "data": {"source": "eval"}}]}
    path = tmp_path / "report.html"
    path.write_text(render_html(report, traces), encoding="utf-8")
    problems: list[str] = []
    requests: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")

    assert problems == []
    assert requests == [path.as_uri()]  # nothing but the file itself
    data = json.loads(render_json(report))
    for index, suite in enumerate(data["suites"]):
        shown = {
            key: int(page.text_content(f'[data-suite="{index}"] [data-count="{key}"]'))
            for key in ("runs", "passed", "failed", "cases", "flaky")
        }
        passed = sum(run["passed"] for run in suite["runs"])
        assert shown == {
            "runs": len(suite["runs"]),
            "passed": passed,
            "failed": len(suite["runs"]) - passed,
            "cases": len(suite["cases"]),
            "flaky": len(suite["flaky"]),
        }
        if suite["comparison"]:
            for key in ("broken", "fixed"):
                counted = page.text_content(f'[data-suite="{index}"] [data-count="{key}"]')
                assert int(counted) == len(suite["comparison"][key])
    total = sum(len(s["runs"]) for s in data["suites"])
    assert int(page.text_content("#total")) == total == int(page.text_content("#shown"))
    assert int(page.text_content('[data-count="exit_code"]')) == data["exit_code"]
    # the decision's HTML is text, exactly as the model wrote it
    decisions = page.locator("pre.decision").all_text_contents()
    assert any("</script><script>alert(1)</script>" in text for text in decisions)
    # the judge's reason of a failed rubric shows in its row, as text
    reasons = page.locator("tr.run.failed .reason").all_text_contents()
    assert any("<b>bold</b>" in text for text in reasons)


def test_filters_hide_and_count_rows(page, tmp_path: Path) -> None:
    report = nasty_report()
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page.goto(path.as_uri())
    failed = sum(not r.passed for s in report.suites for r in s.runs)
    page.select_option("#status-filter", "failed")
    assert int(page.text_content("#shown")) == failed == page.locator("tr.run:visible").count()
    page.select_option("#status-filter", "broken")
    assert int(page.text_content("#shown")) == 2  # both repeats of the broken case
    page.select_option("#status-filter", "all")
    page.fill("#text-filter", "refunds")  # the second suite's agent is not in a row
    assert int(page.text_content("#shown")) == 0
    page.fill("#text-filter", "crashed")
    assert int(page.text_content("#shown")) == 1


def _wide_report():
    from tests.unit.evals.test_reports import make_run, make_suite, result_of

    ids = ["expensive-refund-of-a-damaged-blender-waits-for-a-human", "small-refund", "b"]
    suite = make_suite(ids, repeat=2)
    long = "the decision's reason " * 40
    runs = [
        make_run(i, r == 0, repeat=r, decision={"action": "reply", "text": long}, confidence=0.5)
        for i in ids
        for r in (0, 1)
    ]
    # a long token with no space (a URL, a hash, a path) in a failed run's message
    runs[1] = runs[1].model_copy(update={"error": "ValueError: " + "x" * 400})
    first = result_of(suite, runs)
    return first.model_copy(update={"flaky": tuple(ids)})


def test_the_report_fits_1280_px_and_case_ids_stay_on_one_line(page, tmp_path: Path) -> None:
    from mir.evals.domain import EvalReport

    report = EvalReport(suites=(_wide_report(),), exit_code=0)
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(path.as_uri())
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, f"the page is {width} px wide at 1280"
    lines = page.evaluate(
        "Array.from(document.querySelectorAll('td.case-id')).map(td => {"
        " const r = document.createRange(); r.selectNodeContents(td);"
        " return [td.textContent, r.getClientRects().length]; })"
    )
    assert len(lines) == 3 + 6  # the cases table and the runs table
    for text, count in lines:
        assert count == 1, f"{text!r} wraps onto {count} lines"
    # pass^k and pass@k per case, as the README promises
    cases = page.locator("table.cases tr.case").all_text_contents()
    assert len(cases) == 3 and all("no" in row and "yes" in row for row in cases)
    assert page.text_content('[data-count="pass_all"]') == "0/3"
    assert page.text_content('[data-count="pass_any"]') == "3/3"
