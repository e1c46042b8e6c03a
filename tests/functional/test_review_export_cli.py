"""``mir review export --eval / --sft`` end to end: flows approved, corrected and
rejected on the CLI become cases of the agent's suite that `mir eval` runs, and chats."""

from __future__ import annotations

import json
from pathlib import Path

from .test_run_agent import GOOD, executed, script

SUITE = Path("capabilities/refunds/evals/triage.yaml")
EXISTING = """\
# Hand-written cases: this comment must survive an export.
agent: triage
cases:
  # the first case, by hand
  - id: by-hand
    input: {order_id: A1, amount: 5, message: "hand"}
    context: {order_total: 80}
    expect: {action: refund}
"""


def _pending(run_mir, app: Path, message: str, amount: float = 40) -> str:
    low = {**GOOD, "confidence": 0.3, "amount": amount, "reason": message[:20]}
    name = script(app, low, low)  # both routes of the fixture answer
    ticket = json.dumps({"order_id": "A1", "amount": amount, "message": message})
    done = run_mir(
        "run", "agent", "refunds.triage", "--input", ticket,
        "--provider", "scripted", "--responses", name, "--json", cwd=app,
    )  # fmt: skip
    record = json.loads(done.stdout)
    assert record["status"] == "pending_review", done.stderr
    return record["flow_id"]


def _reviewed(run_mir, app: Path) -> dict[str, str]:
    flows = {
        "approved": _pending(run_mir, app, "mug arrived broken"),
        "corrected": _pending(run_mir, app, "half of it arrived", amount=60),
        "rejected": _pending(run_mir, app, "changed my mind"),
        "duplicate": _pending(run_mir, app, "hand", amount=5),
    }
    assert run_mir("approve", flows["approved"], "--by", "ana", cwd=app).returncode == 0
    fixed = run_mir("approve", flows["corrected"], "--by", "ana", "--set", "amount=30", cwd=app)
    assert fixed.returncode == 0, fixed.stderr
    assert run_mir("reject", flows["rejected"], "--by", "bo", cwd=app).returncode == 0
    assert run_mir("approve", flows["duplicate"], "--by", "ana", cwd=app).returncode == 0
    return flows


def _answers(app: Path, *decisions: dict) -> str:
    """One replayed model answer per case run, in case order."""
    return script(app, *[{**d, "confidence": 0.95} for d in decisions], name="eval.jsonl")


def test_reviews_become_cases_that_run_in_mir_eval(run_mir, app: Path):
    suite = app / SUITE
    suite.parent.mkdir(parents=True)
    suite.write_text(EXISTING)
    flows = _reviewed(run_mir, app)
    done = run_mir("review", "export", "--eval", "--json", cwd=app)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [exported] = report["suites"]
    assert exported["agent"] == "refunds.triage" and exported["duplicates"] == [flows["duplicate"]]
    ids = [f"review-{flows[k][:12]}" for k in ("approved", "corrected", "rejected")]
    assert exported["added"] == ids
    text = suite.read_text()
    assert text.startswith(EXISTING)  # every byte that was there, comments included
    assert "from review (3 case(s)" in text
    # a second export adds nothing: the suite already holds each input and world
    again = json.loads(run_mir("review", "export", "--eval", "--json", cwd=app).stdout)
    assert again["suites"][0]["added"] == [] and suite.read_text() == text
    # the suite checker accepts the result, and the cases pass when the model answers
    # as the reviewers decided: the corrected amount, another action than the rejected one
    by_hand = {**GOOD, "amount": 5}
    right = _answers(
        app, by_hand, GOOD, {**GOOD, "amount": 30}, {**GOOD, "action": "deny", "amount": 0}
    )
    passed = run_mir("eval", str(SUITE), "--provider", "scripted", "--responses", right, cwd=app)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # ... and fail when it answers what it proposed before the review
    wrong = _answers(app, by_hand, GOOD, {**GOOD, "amount": 60}, GOOD)
    failed = run_mir(
        "eval", str(SUITE), "--provider", "scripted", "--responses", wrong, "--json", cwd=app
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    result = json.loads(failed.stdout)
    cases = {c["case_id"]: c for s in result["suites"] for c in s["cases"]}
    assert [k for k, c in cases.items() if not c["pass_all"]] == ids[1:]
    assert len(executed(app)) == 3  # eval runs execute nothing (approve executed three)


def test_sft_writes_one_chat_per_approved_or_corrected_flow(run_mir, app: Path, tmp_path):
    flows = _reviewed(run_mir, app)
    out = tmp_path / "sft" / "reviews.jsonl"
    done = run_mir("review", "export", "--sft", str(out), cwd=app)
    assert done.returncode == 0, done.stderr
    assert "3 chat(s) written" in done.stdout
    chats = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(chats) == 3
    by_answer = {json.loads(c["messages"][1]["content"])["amount"]: c for c in chats}
    assert set(by_answer) == {40, 30, 5}  # the corrected flow teaches its correction
    corrected = by_answer[30]["messages"]
    assert [m["role"] for m in corrected] == ["user", "assistant"]
    assert "half of it arrived" in corrected[0]["content"]
    # the one message the model was sent (the runtime renders no system message)
    events = json.loads(run_mir("traces", "show", flows["corrected"], "--json", cwd=app).stdout)
    infer = next(e for e in events if e["step"] == "infer")
    assert corrected[0]["content"] == infer["data"]["prompt"]["text"]
    assert not (app / SUITE).exists()  # --sft alone writes no suite
    assert flows


def test_export_usage_errors(run_mir, app: Path):
    nothing = run_mir("review", "export", cwd=app)
    assert nothing.returncode == 2 and "--eval" in nothing.stderr
    assert len(nothing.stderr.strip().splitlines()) == 1
    suite_alone = run_mir("review", "export", "--suite", "x.yaml", cwd=app)
    assert suite_alone.returncode == 2


def test_a_value_the_current_rules_redact_never_lands_in_the_suite(run_mir, app: Path):
    flows = _reviewed(run_mir, app)
    pyproject = app / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text() + '\n[tool.mir.traces]\nredact_patterns = ["changed my mind"]\n'
    )
    done = run_mir("review", "export", "--eval", "--json", cwd=app)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert f"review-{flows['rejected'][:12]}" not in report["suites"][0]["added"]
    assert any(flows["rejected"] in note for note in report["notes"])
    assert "changed my mind" not in (app / SUITE).read_text()
