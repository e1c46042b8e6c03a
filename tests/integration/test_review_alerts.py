"""Review alerts through real channels: a 127.0.0.1 webhook server and a command. A flow
that starts waiting alerts once; one still waiting after ``review.remind_after`` is
reminded once per period, however many queue reads race; a dead channel never fails a
decision."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mir.reviews import pending_page
from mir.runtime import load_agent

from .test_review_queue import HIGH, LOW, TICKET, app, decide  # noqa: F401 - the fixture


@pytest.fixture
def hook() -> Iterator[tuple[str, list[dict]]]:
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(json.loads(body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def configure(root: Path, webhook: str, *, remind_after: int | None = 60, on: str = "") -> Path:
    """Alerts to ``webhook`` and to a command appending each payload to a file."""
    out = root / "command-alerts.jsonl"
    code = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read() + '\\n')"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + f"\n[tool.mir.alerts]\nwebhook = {json.dumps(webhook)}\ncommand = {json.dumps(command)}\n"
        + (f"on = {on}\n" if on else "")
        + '\n[tool.mir.review]\ninbox_url = "https://review.example.com/"\n'
    )
    if remind_after is not None:
        contract = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
        text = contract.read_text().replace(
            "  confidence_threshold: 0.7\n",
            f"  confidence_threshold: 0.7\n  remind_after: {remind_after}\n",
        )
        contract.write_text(text)
    return out


def commands(out: Path) -> list[dict]:
    return (
        [json.loads(line) for line in out.read_text().splitlines() if line] if out.exists() else []
    )


def test_a_flow_that_starts_waiting_alerts_once_with_a_link(app: Path, hook):  # noqa: F811
    url, received = hook
    out = configure(app, url)
    [flow_id, _done] = decide(app, LOW, HIGH)
    assert [p["kind"] for p in received] == ["review"]  # the executed flow is no alert
    [payload] = received
    assert payload["flow_id"] == flow_id and payload["agent"] == "refunds.triage"
    assert payload["action"] == "refund"
    assert payload["fields"] == {"amount": 40, "reason": "arrived broken", "confidence": 0.3}
    assert payload["link"] == f"https://review.example.com/flows/{flow_id}"
    assert "low_confidence" in payload["reasons"]
    assert commands(out) == [payload]


def test_reminders_fire_once_per_period(app: Path, hook):  # noqa: F811
    url, received = hook
    out = configure(app, url)
    [flow_id] = decide(app, LOW)
    created = pending_page(app).items[0].created_at
    received.clear()
    assert pending_page(app, now=created + timedelta(seconds=59)).reminded == []
    first = pending_page(app, now=created + timedelta(seconds=61))
    assert first.reminded == [flow_id] and first.notes == []
    assert pending_page(app, now=created + timedelta(seconds=119)).reminded == []  # same period
    assert pending_page(app, now=created + timedelta(seconds=121)).reminded == [flow_id]
    assert [p["kind"] for p in received] == ["remind", "remind"]
    assert received[0]["flow_id"] == flow_id and received[0]["fields"]["amount"] == 40
    assert received[0]["link"] == f"https://review.example.com/flows/{flow_id}"
    assert received[0]["age_s"] == pytest.approx(61, abs=1)
    assert [p["kind"] for p in commands(out)] == ["review", "remind", "remind"]
    # many reads at once, one period later: one reminder
    later = created + timedelta(seconds=185)
    pages: list = []
    threads = [
        threading.Thread(target=lambda: pages.append(pending_page(app, now=later)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(page.reminded) for page in pages) == [0, 0, 0, 1]
    assert len(received) == 3


def test_no_reminder_without_remind_after_or_when_on_leaves_it_out(app: Path, hook):  # noqa: F811
    url, received = hook
    configure(app, url, on='["warn", "suspend", "remind"]')
    decide(app, LOW)
    assert received == []  # "review" is not in `on`: no alert when it starts waiting
    created = pending_page(app).items[0].created_at
    assert pending_page(app, now=created + timedelta(seconds=61)).reminded != []


def test_a_dead_channel_never_fails_the_decision(app: Path):  # noqa: F811
    configure(app, "http://127.0.0.1:9/nothing-listens", remind_after=1)
    (app / "pyproject.toml").write_text(
        (app / "pyproject.toml").read_text().replace("command = ", "# command = ")
    )
    [flow_id] = decide(app, LOW)
    page = pending_page(app, now=pending_page(app).items[0].created_at + timedelta(seconds=2))
    assert [i.flow_id for i in page.items] == [flow_id] and page.reminded == [flow_id]
    assert len(page.notes) == 1 and "alert webhook failed" in page.notes[0]


def test_a_reminder_no_channel_delivered_is_retried_on_the_next_read(app: Path, hook):  # noqa: F811
    url, received = hook
    configure(app, "http://127.0.0.1:9/nothing-listens", remind_after=1)
    pyproject = app / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("command = ", "# command = "))
    [flow_id] = decide(app, LOW)
    created = pending_page(app).items[0].created_at
    for seconds in (2.0, 2.3):  # the same period: retried, since nothing was delivered
        page = pending_page(app, now=created + timedelta(seconds=seconds))
        assert page.reminded == [flow_id] and "alert webhook failed" in page.notes[0]
    pyproject.write_text(pyproject.read_text().replace("http://127.0.0.1:9/nothing-listens", url))
    delivered = pending_page(app, now=created + timedelta(seconds=2.6))
    assert delivered.reminded == [flow_id] and delivered.notes == []
    assert pending_page(app, now=created + timedelta(seconds=2.9)).reminded == []  # sent once
    assert [(p["kind"], p["flow_id"]) for p in received] == [("remind", flow_id)]


def test_eval_flows_never_alert(app: Path, hook):  # noqa: F811
    url, received = hook
    configure(app, url)
    script = app / "eval.jsonl"
    script.write_text(json.dumps(json.dumps(LOW)) + "\n" + json.dumps(json.dumps(LOW)) + "\n")
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, mode="eval"
    ) as agent:
        assert agent.decide(TICKET).status == "pending_review"
    assert received == [] and pending_page(app).total == 0


def test_an_alert_never_carries_a_secret_the_traces_would_not_keep(app: Path, hook):  # noqa: F811
    url, received = hook
    configure(app, url)
    decide(app, {**LOW, "reason": "key sk-proj-ABCDEFGHIJKLMNOPQRST"})
    [payload] = received
    assert "sk-proj-ABCDEFGHIJKLMNOPQRST" not in json.dumps(payload)
    assert payload["fields"]["reason"] == "key [REDACTED]"


def test_a_slow_webhook_never_delays_the_decision(app: Path):  # noqa: F811
    import time

    received: list[dict] = []

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            time.sleep(4)
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        configure(app, f"http://127.0.0.1:{server.server_address[1]}/hook")
        script = app / "responses.jsonl"
        script.write_text(json.dumps(json.dumps(LOW)) + "\n")
        with load_agent(
            "refunds.triage", project=app, provider="scripted", responses=script
        ) as agent:
            started = time.perf_counter()
            record = agent.decide(TICKET)
            took = time.perf_counter() - started
            assert record.status == "pending_review" and received == []
        assert took < 3, took  # the alert went on in the background ...
        assert [p["flow_id"] for p in received] == [record.flow_id]  # ... and close waited
    finally:
        server.shutdown()
        server.server_close()
