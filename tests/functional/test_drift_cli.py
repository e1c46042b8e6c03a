"""`mir drift` through the real executable: the support desk's month with a shift in
week 4 is caught, the breaker suspends the agent (rules decide, the model is not called)
and alerts a webhook on 127.0.0.1; bad input is one line, exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import jsonschema
import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
SCHEMAS = Path(__file__).parents[2] / "schemas"
WEEK4 = ("--window", "7d", "--reference", "21d")


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return root


def month(root: Path, *args: str) -> None:
    script = root / "scripts" / "drift_month.py"
    done = subprocess.run(
        [sys.executable, str(script), "--project", str(root), "--per-day", "60", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote 1800 decisions" in done.stdout


class Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        Hook.received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook():
    server = HTTPServer(("127.0.0.1", 0), Hook)
    Hook.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/drift", Hook.received
    server.shutdown()


def test_the_week4_shift_is_caught_grouped_by_kind(run_mir, desk: Path):
    month(desk)
    result = run_mir("drift", *WEEK4, cwd=desk)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "refunds.triage  SUSPEND" in out
    for kind in ("optimization drift", "semantic drift"):
        assert kind in out
    assert "refund:" in out and "likely causes: new model: SmolLM2-360M" in out
    as_json = run_mir(
        "drift", "triage", *WEEK4, "--format", "json", "--html", "drift.html", cwd=desk
    )
    report = json.loads(as_json.stdout)
    page = (desk / "drift.html").read_text()
    assert "refunds.triage" in page and "SUSPEND" in page and "semantic drift" in page
    assert "<svg" in page and "<script" not in page
    schema = json.loads((SCHEMAS / "drift-report.schema.json").read_text())
    jsonschema.validate(report, schema)
    [agent] = report["agents"]
    verdicts = {m["metric"]: (m["verdict"], m["kind"]) for m in agent["metrics"]}
    assert verdicts["confidence.ks"] == ("suspend", "semantic")
    assert verdicts["action.js"][1] == "optimization"
    assert verdicts["action.js"][0] in ("warn", "suspend")


def test_a_stable_month_exits_0(run_mir, desk: Path):
    month(desk, "--no-shift")
    result = run_mir("drift", *WEEK4, cwd=desk)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "none moved" in result.stdout


def test_the_breaker_suspends_rules_decide_and_resume_restores_the_model(
    run_mir, desk: Path, webhook
):
    url, received = webhook
    with (desk / "pyproject.toml").open("a") as f:
        f.write(f'\n[tool.mir.alerts]\nwebhook = "{url}"\n')
    month(desk)
    check = run_mir("drift", "check", *WEEK4, cwd=desk)
    assert check.returncode == 1, check.stderr
    assert "SUSPENDED by the breaker" in check.stdout
    [state] = json.loads(run_mir("agents", "list", "--json", cwd=desk).stdout)
    assert state["state"] == "suspended" and state["by"] == "mir drift"
    assert state["reason"].startswith("drift: ") and "current 7d" in state["reason"]
    # the webhook got the suspension, with the metric, value and windows
    [payload] = received
    assert payload["event"] == "drift_suspend" and payload["agent"] == "refunds.triage"
    assert payload["suspended"] is True and payload["current"]["label"] == "7d"
    assert any(m["verdict"] == "suspend" for m in payload["metrics"])
    # the suspension is in the traces too
    flows = json.loads(run_mir("traces", "list", "--json", "--limit", "1", cwd=desk).stdout)
    shown = json.loads(run_mir("traces", "show", flows[0]["flow_id"], "--json", cwd=desk).stdout)
    assert shown[0]["data"]["event"] == "agent_suspended"
    # the next decision: rules, no model (the embedded model is never loaded)
    ticket = "@inputs/damaged_mug.json"
    ran = run_mir("run", "agent", "refunds.triage", "--input", ticket, "--json", cwd=desk)
    record = json.loads(ran.stdout)
    assert record["provider"] == "rules" and "agent_suspended" in record["reasons"]
    # a second check does not suspend again (the first reason stays), still exits 1
    again = run_mir("drift", "check", *WEEK4, cwd=desk)
    assert again.returncode == 1
    assert json.loads(run_mir("agents", "list", "--json", cwd=desk).stdout)[0]["at"] == state["at"]
    # resumed: the model decides again
    assert run_mir("agents", "resume", "triage", cwd=desk).returncode == 0
    # (another ticket: the mug's refund was paid by the rules above)
    ticket = "@inputs/blender_broken.json"
    scripted = ("--provider", "scripted", "--responses", "responses/blender_broken.jsonl")
    ran = run_mir(
        "run", "agent", "refunds.triage", "--input", ticket, *scripted, "--json", cwd=desk
    )
    record = json.loads(ran.stdout)
    assert record["provider"] == "scripted" and "agent_suspended" not in record["reasons"]


def test_snapshot_then_compare_with_it_and_the_history(run_mir, desk: Path):
    month(desk)
    frozen = run_mir("drift", "snapshot", "triage", "before", "--window", "28d", cwd=desk)
    assert frozen.returncode == 0, frozen.stderr
    assert "froze" in frozen.stdout and "'before'" in frozen.stdout
    compared = run_mir("drift", "--reference", "before", "--window", "7d", cwd=desk)
    assert compared.returncode == 1 and "snapshot before" in compared.stdout
    run_mir("drift", *WEEK4, cwd=desk)
    history = run_mir("drift", "history", "triage", "confidence.ks", "--format", "json", cwd=desk)
    points = json.loads(history.stdout)
    assert len(points) == 2 and {p["verdict"] for p in points} == {"suspend"}
    table = run_mir("drift", "history", "triage", cwd=desk)
    assert "confidence.ks" in table.stdout and "limits.hugging" in table.stdout


def test_watch_runs_the_breaker_a_bounded_number_of_times(run_mir, desk: Path):
    month(desk)
    watched = run_mir("drift", "watch", "--every", "1s", "--iterations", "2", *WEEK4, cwd=desk)
    assert watched.returncode == 1, watched.stderr
    assert watched.stdout.count("refunds.triage  SUSPEND") == 2


def test_an_empty_store_says_so(run_mir, desk: Path):
    result = run_mir("drift", cwd=desk)
    assert result.returncode == 0
    assert result.stderr.strip() == "no decisions yet"
    assert run_mir("drift", "check", cwd=desk).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--window", "24x"), "error: bad --window '24x': expected a positive number"),
        (("--reference", "0d"), "error: bad --reference '0d'"),
        (("nosuch",), "error: no agent 'nosuch' in this project or its traces"),
        (("--last", "10", "--window", "1d"), "error: --window and --last both choose"),
        (("--format", "yaml"), "error: unknown --format 'yaml'"),
        (("history", "triage", "nosuch.metric"), "error: no metric 'nosuch.metric' recorded"),
        (("--reference", "nosuch"), "error: no frozen reference 'nosuch' for refunds.triage"),
    ],
)
def test_bad_input_is_one_line_exit_2(run_mir, desk: Path, args, message):
    month(desk)
    run_mir("drift", *WEEK4, cwd=desk)
    result = run_mir("drift", *args, cwd=desk)
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(message), line


def test_a_threshold_on_an_unknown_metric_is_a_config_error_with_its_line(run_mir, desk: Path):
    contract = desk / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    contract.write_text(text + "drift:\n  thresholds:\n    action.pis: {warn: 0.1}\n")
    line = len(text.splitlines()) + 1
    result = run_mir("drift", cwd=desk)
    assert result.returncode == 2
    [error] = result.stderr.strip().splitlines()
    assert f"triage.yaml:{line}" in error and "unknown drift metric(s) 'action.pis'" in error
