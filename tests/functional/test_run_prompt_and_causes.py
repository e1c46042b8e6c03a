"""What a newcomer needs to see of one decision: the prompt the model was shown (before
any call, and afterwards in the trace, redacted) and why a provider call failed."""

from __future__ import annotations

import json
from pathlib import Path

SECRET = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
INPUT = json.dumps({"order_id": "A1", "amount": 40, "message": f"my key is {SECRET}"})
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}


def script(root: Path, *outputs: object) -> str:
    lines = [json.dumps(o if isinstance(o, str) else json.dumps(o)) for o in outputs]
    (root / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return "responses.jsonl"


def flows(run_mir, root: Path) -> list[dict]:
    listed = run_mir("traces", "list", "--json", cwd=root)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout or "[]")


def test_show_prompt_renders_the_prompt_and_calls_no_model(run_mir, app: Path):
    result = run_mir("run", "agent", "refunds.triage", "--input", INPUT, "--show-prompt", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "Decide what to do with one refund request" in result.stdout
    assert '"order_id": "A1"' in result.stdout
    assert '"order_total": 80' in result.stdout  # the context loader's world, in scope
    assert "- refund: Refund the amount to the customer." in result.stdout
    # render only: no flow was traced and nothing executed
    assert flows(run_mir, app) == []
    assert not (app / "executed.jsonl").exists()


def test_show_prompt_refuses_an_input_the_contract_refuses(run_mir, app: Path):
    result = run_mir("run", "agent", "refunds.triage", "--input", "[1]", "--show-prompt", cwd=app)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_the_infer_event_keeps_the_template_hash_and_the_redacted_prompt(run_mir, app: Path):
    result = run_mir(
        "run",
        "agent",
        "refunds.triage",
        "--input",
        INPUT,
        "--provider",
        "scripted",
        "--responses",
        script(app, GOOD),
        "--json",
        cwd=app,
    )
    assert result.returncode == 0, result.stderr
    flow_id = json.loads(result.stdout)["flow_id"]
    shown = run_mir("traces", "show", flow_id, "--json", cwd=app)
    infer = next(e for e in json.loads(shown.stdout) if e["step"] == "infer")
    prompt = infer["data"]["prompt"]
    assert len(prompt["template"]) == 12
    assert "Decide what to do with one refund request" in prompt["text"]
    assert "my key is [REDACTED]" in prompt["text"]
    assert SECRET not in shown.stdout
    table = run_mir("traces", "show", flow_id, cwd=app, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert f"prompt (template {prompt['template']})" in table.stdout
    assert "Decide what to do with one refund request" in table.stdout
    assert SECRET not in table.stdout
    assert not any(SECRET in p.read_text() for p in (app / ".mir").rglob("*.jsonl"))


def test_a_provider_error_shows_its_cause_on_one_line(run_mir, app: Path):
    # One unusable answer, then the script runs out: the retries fail in the provider.
    result = run_mir(
        "run",
        "agent",
        "refunds.triage",
        "--input",
        INPUT,
        "--provider",
        "scripted",
        "--responses",
        script(app, "not json"),
        cwd=app,
        env={"COLUMNS": "200"},
    )
    assert "provider_error" in result.stdout
    why = [line for line in result.stdout.splitlines() if "scripted responses exhausted" in line]
    assert why, result.stdout
    assert SECRET not in result.stdout
