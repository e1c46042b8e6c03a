"""The review inbox in a real headless Chromium (Debian's `chromium`, driven by Playwright
through `executable_path`), JavaScript off: `mir review serve` as a child process; a
reviewer logs in, approves one flow, rejects one and corrects one; the ledger and the
traces show exactly those outcomes; no console error; a model's `<script>` is text; a
POST without the CSRF token is refused.

``MIR_INBOX_SCREENSHOT=PATH`` also saves the queue's screenshot there (the README's
docs/images/review-inbox.png is made so)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support.inbox import PASSWORDS, executed, inbox_project, pend, refund, require, served

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium not found: `make test` installs it (apt-get install -y chromium)",
    ),
]
HOSTILE = "<script>alert('inbox')</script>"
RULE = """  when:
    - name: expensive_refund
      conditions:
        - {field: action, op: "==", value: refund}
        - {field: decision.amount, op: ">", value: 50}
"""


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra)")
    with sync_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


def test_review_three_flows_in_chromium(browser, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    require(root, "{roles: [support], count: 1, signed: true}")
    contract = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract.write_text(contract.read_text().replace("review:\n", "review:\n" + RULE, 1))
    approve_me, reject_me, correct_me, hostile = pend(
        root,
        refund(amount=40, reason="arrived broken"),
        refund(amount=75, reason="changed my mind"),
        refund(amount=60, reason="half of it was missing"),
        refund(amount=30, reason=HOSTILE),
    )
    problems: list[str] = []
    with served(root, keys=keys) as url:
        context = browser.new_context(
            java_script_enabled=False, viewport={"width": 1280, "height": 720}
        )
        page = context.new_page()
        page.on(
            "console",
            lambda m: (
                problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
            ),
        )
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on(
            "response",
            lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )

        page.goto(f"{url}/")
        assert page.url == f"{url}/login"
        page.fill("input[name=name]", "ana")
        page.fill("input[name=password]", PASSWORDS["ana"])
        page.click("button[type=submit]")
        assert page.url == f"{url}/", (page.content(), problems)
        # Failed once on a CI machine with 0 rows and never here: say what the page and the
        # server said, so the next failure explains itself.
        shown = (page.locator("tr.flow").count(), page.text_content("#total"))
        assert shown == (4, "4"), (shown, page.inner_text("body")[:3000], _served_log(root))
        why = page.text_content(f'tr[data-flow="{reject_me}"] td.reasons')
        assert "review_rule:expensive_refund" in why and "low_confidence" in why
        assert (
            page.text_content(f'tr[data-flow="{approve_me}"] td.waits')
            == "0 of 1 approval (support)"
        )
        shot = page.screenshot(path=str(tmp_path / "review-inbox.png"), full_page=True)
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) < 300_000
        if os.environ.get("MIR_INBOX_SCREENSHOT"):
            Path(os.environ["MIR_INBOX_SCREENSHOT"]).write_bytes(shot)

        def review(flow: str, form: str, reason: str, **fields: str) -> str:
            page.goto(f"{url}/")
            page.click(f'tr[data-flow="{flow}"] a')
            assert page.url == f"{url}/flows/{flow}"
            for name, value in fields.items():
                page.fill(f'form.{form} input[name="set.{name}"]', value)
            page.fill(f"form.{form} textarea[name=reason]", reason)
            page.click(f"form.{form} button[type=submit]")
            assert page.url == f"{url}/", page.content()
            return page.text_content("p.flash") or ""

        assert review(approve_me, "approve", "the photo shows the damage") == (
            f"{approve_me} approved: executed"
        )
        assert review(reject_me, "reject", "a change of mind is not refunded") == (
            f"{reject_me} rejected: rejected"
        )
        assert review(correct_me, "correct", "refund the missing half only", amount="30") == (
            f"{correct_me} corrected: executed"
        )

        # the model's markup is shown as the text it is, and nothing ran
        page.goto(f"{url}/flows/{hostile}")
        assert HOSTILE in page.text_content("pre.decision")
        assert page.locator("script").count() == 0
        # a POST from this logged-in browser without the form's token is refused
        forged = context.request.post(f"{url}/flows/{hostile}/approve", form={"reason": "x"})
        assert forged.status == 403
        problems = [p for p in problems if not p.startswith(f"403 {url}/flows/{hostile}")]
        page.goto(f"{url}/")
        assert page.locator("tr.flow").count() == 1 and page.text_content("#total") == "1"
        context.close()

    assert problems == []
    paid = sorted((e["action"], e["params"]["amount"]) for e in executed(root))
    assert paid == [("refund", 30), ("refund", 40)]
    with TraceStore.for_project(find_project(root)) as store:
        stories = {flow: store.flow(flow) for flow in (approve_me, reject_me, correct_me, hostile)}
    finals = {f: [e.status for e in events if e.step == "final"] for f, events in stories.items()}
    assert finals == {
        approve_me: ["executed"], reject_me: ["rejected"], correct_me: ["executed"], hostile: []
    }  # fmt: skip
    reviews = {
        f: [(e.data["by"], e.data["verdict"]) for e in events if e.step == "review"]
        for f, events in stories.items()
    }
    assert reviews == {
        approve_me: [("ana", "approve")], reject_me: [("ana", "reject")],
        correct_me: [("ana", "approve")], hostile: [],
    }  # fmt: skip
    [final] = [e for e in stories[correct_me] if e.step == "final"]
    assert final.data["human_override"] is True and final.data["proposal"]["amount"] == 60
    [corrected] = [e for e in stories[correct_me] if e.step == "review"]
    assert corrected.data["correction"] == {"amount": 30}
    assert all(
        e.data["signature"] for f in (approve_me, reject_me, correct_me)
        for e in stories[f] if e.step == "review"
    )  # fmt: skip
    # every signature checks out against reviewers.toml
    verified = subprocess.run(
        [str(MIR_EXE), "traces", "verify"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _served_log(root: Path) -> str:
    """The tail of every ``mir review serve`` log next to ``root`` (see ``served``)."""
    return "\n".join(log.read_text()[-2000:] for log in sorted(root.parent.glob("inbox-*.log")))
