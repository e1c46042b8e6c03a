"""``mir review list`` / ``mir review expire`` through the installed executable."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

from .test_review_identity import approve as identity_approve
from .test_review_identity import pending as identity_pending
from .test_review_identity import team  # noqa: F401 - the fixture: four lead reviewers
from .test_run_agent import GOOD, executed, run, script


def _pending(run_mir, app: Path, **changes) -> str:
    # both routes of the fixture answer (a low confidence cascades to the second one)
    low = {**GOOD, "confidence": 0.3, **changes}
    name = script(app, low, low)
    _, record = run(run_mir, app, "--provider", "scripted", "--responses", name, "--json")
    assert record["status"] == "pending_review"
    return record["flow_id"]


def test_review_list_shows_what_waits_and_json_carries_the_page(run_mir, app: Path):
    first = _pending(run_mir, app)
    second = _pending(run_mir, app, amount=12, reason="[bold]x[/bold] <script>")
    listed = run_mir("review", "list", cwd=app)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:4] == ["flow", "age", "agent", "action"]
    assert "waits for" in lines[0] and "key fields" in lines[0]
    assert first in lines[1] and second in lines[2]  # oldest first; a pipe gets the full id
    assert "amount=40" in lines[1] and "confidence=0.3" in lines[1] and "review" in lines[1]
    assert "[bold]x[/bold] <script>" in lines[2]  # model text is shown as stored
    for args in (("--json",), ("--format", "json")):
        page = json.loads(run_mir("review", "list", *args, cwd=app).stdout)
        assert page["total"] == 2 and [i["flow_id"] for i in page["items"]] == [first, second]
        item = page["items"][0]
        assert item["fields"] == {"amount": 40, "reason": "arrived broken", "confidence": 0.3}
        assert item["agent"] == "refunds.triage" and item["waits_for"] == "review"
        assert item["ttl_s"] == 300 and item["input"]["order_id"] == "A1"
    short = json.loads(run_mir("review", "list", "--agent", "triage", "--json", cwd=app).stdout)
    assert short["total"] == 2
    paged = json.loads(
        run_mir("review", "list", "--limit", "1", "--offset", "1", "--json", cwd=app).stdout
    )
    assert [i["flow_id"] for i in paged["items"]] == [second]


def test_review_list_usage_errors_are_one_line(run_mir, app: Path):
    _pending(run_mir, app)
    unknown = run_mir("review", "list", "--agent", "nobody", cwd=app)
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "nobody" in unknown.stderr and "Traceback" not in unknown.stderr
    clash = run_mir("review", "list", "--json", "--format", "table", cwd=app)
    assert clash.returncode == 2 and "disagree" in clash.stderr


def test_review_expire_closes_flows_past_their_ttl(run_mir, app: Path):
    contract = app / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract.write_text(contract.read_text().replace("ttl_seconds: 300", "ttl_seconds: 1"))
    flow_id = _pending(run_mir, app)
    time.sleep(1.2)
    expired = run_mir("review", "expire", cwd=app)
    assert expired.returncode == 0, expired.stderr
    assert f"expired {flow_id}" in expired.stdout
    assert "0 flow(s) still waiting" in expired.stdout
    again = run_mir("review", "expire", "--json", cwd=app)
    assert json.loads(again.stdout) == {"expired": [], "pending": 0}
    shown = json.loads(run_mir("traces", "show", flow_id, "--json", cwd=app).stdout)
    assert shown[-1]["step"] == "final" and shown[-1]["status"] == "expired"
    assert "ttl_expired" in shown[-1]["reasons"]
    listed = json.loads(run_mir("traces", "list", "--status", "expired", "--json", cwd=app).stdout)
    assert [f["flow_id"] for f in listed] == [flow_id]
    approve = run_mir("approve", flow_id, cwd=app)
    assert approve.returncode == 1 and "already expired" in approve.stderr
    assert executed(app) == []
    assert run_mir("review", "list", cwd=app).stdout.strip() == "no flow waits for review"


def test_review_remind_alerts_through_the_command_once_per_period(run_mir, app: Path):
    out = app / "alerts.jsonl"
    code = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read() + '\\n')"
    command = f"{sys.executable} -c {shlex.quote(code)}"
    pyproject = app / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + f"\n[tool.mir.alerts]\ncommand = {json.dumps(command)}\n"
        + '\n[tool.mir.review]\ninbox_url = "http://127.0.0.1:8765"\n'
    )
    contract = app / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract.write_text(
        contract.read_text().replace(
            "  confidence_threshold: 0.7\n", "  confidence_threshold: 0.7\n  remind_after: 5\n"
        )
    )
    flow_id = _pending(run_mir, app)
    time.sleep(5.1)  # one period; the next starts at 10 s
    reminded = run_mir("review", "remind", cwd=app)
    assert reminded.returncode == 0, reminded.stderr
    assert f"reminded reviewers of {flow_id}" in reminded.stdout
    again = json.loads(run_mir("review", "remind", "--json", cwd=app).stdout)
    assert again == {"reminded": [], "expired": [], "notes": []}  # same period
    alerts = [json.loads(line) for line in out.read_text().splitlines() if line]
    assert [a["kind"] for a in alerts] == ["review", "remind"]
    assert {a["link"] for a in alerts} == {f"http://127.0.0.1:8765/flows/{flow_id}"}
    assert alerts[1]["fields"]["amount"] == 40


def test_review_list_says_how_many_approvals_a_flow_still_waits_for(run_mir, app: Path, team):  # noqa: F811
    flow_id = identity_pending(run_mir, app, requester="req")
    waiting = json.loads(run_mir("review", "list", "--json", cwd=app).stdout)["items"]
    assert [(i["flow_id"], i["waits_for"], i["requested_by"]) for i in waiting] == [
        (flow_id, "0 of 2 approvals (lead)", "req")
    ]
    assert identity_approve(run_mir, app, flow_id, "ana", team["ana"]).returncode == 0
    [item] = json.loads(run_mir("review", "list", "--json", cwd=app).stdout)["items"]
    assert item["waits_for"] == "1 of 2 approvals (lead)"
    assert "1 of 2 approvals (lead)" in run_mir("review", "list", cwd=app).stdout
    assert identity_approve(run_mir, app, flow_id, "bob", team["bob"]).returncode == 0
    assert json.loads(run_mir("review", "list", "--json", cwd=app).stdout)["total"] == 0
