"""`mir traces verify` holds each flow to the approvals rule that was required when it was
decided (recorded in its pending event), not to a rule the contract gained later."""

from __future__ import annotations

import json
from pathlib import Path

from tests.functional.test_review_identity import approve, declare, pending, require

CONTRACT = Path("capabilities") / "refunds" / "agents" / "triage.yaml"


def sign_from_now_on(app: Path) -> None:
    contract = app / CONTRACT
    text = contract.read_text()
    assert "approvals: {roles: [lead], count: 1}\n" in text
    contract.write_text(text.replace("count: 1}", "count: 1, signed: true}", 1))


def forget_recorded_rules(app: Path, flow: str) -> None:
    """Make the flow's pending event look like one from before rules were recorded (the
    rewritten line breaks the hash chain too; the tests read the reviews' lines)."""
    found = 0
    for segment in (app / ".mir" / "traces" / "segments").glob("*.jsonl"):
        lines = segment.read_text().splitlines()
        for i, raw in enumerate(lines):
            line = json.loads(raw)
            if line.get("flow_id") == flow and line.get("status") == "pending_review":
                found += line["data"].pop("approvals", None) is not None
                lines[i] = json.dumps(line)
        segment.write_text("\n".join(lines) + "\n")
    assert found == 1


def test_a_signature_rule_added_later_does_not_flag_flows_decided_before_it(run_mir, app, tmp_path):
    require(app, "{roles: [lead], count: 1}")
    declare(run_mir, app, tmp_path, "ana")
    flows = [pending(run_mir, app) for _ in range(2)]
    for flow in flows:
        done = approve(run_mir, app, flow, "ana", None)  # unsigned: allowed then
        assert json.loads(done.stdout)["status"] == "executed", done.stderr
    events = json.loads(run_mir("traces", "show", flows[0], "--json", cwd=app).stdout)
    routed = next(e for e in events if e["status"] == "pending_review")
    assert routed["data"]["approvals"] == {
        "refund": {"roles": ["lead"], "count": 1, "signed": False}
    }
    sign_from_now_on(app)
    done = run_mir("traces", "verify", "--full", cwd=app)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reviews: 2 checked, 0 signed: ok" in done.stdout and "note:" not in done.stdout
    # A flow traced before pending events kept their rules: the contract of today, said.
    forget_recorded_rules(app, flows[1])
    old = run_mir("traces", "verify", "--full", cwd=app)
    said = " ".join(old.stdout.split())
    assert f"flow {flows[1]}" in said and "unsigned" in said and f"flow {flows[0]}" not in said
    assert "note: 1 flow(s) were decided before flows recorded their approvals rules" in said
    findings = [line for line in old.stdout.splitlines() if line.startswith("flow ")]
    assert len(findings) == 2 and all(line.startswith(f"flow {flows[1]}") for line in findings)
    assert "unsigned" in findings[0] + findings[1] and "short" in findings[0] + findings[1]


def test_approve_holds_a_flow_to_the_count_recorded_when_it_was_decided(run_mir, app, tmp_path):
    """A contract relaxed while a flow waits does not let it through on fewer approvals
    than it was decided under (the audit would call that `short`), and a contract made
    stricter holds only the flows decided after it: approve and verify agree."""
    require(app, "{roles: [lead], count: 2}")
    declare(run_mir, app, tmp_path, "ana")
    declare(run_mir, app, tmp_path, "ben")
    strict = pending(run_mir, app)
    contract = app / CONTRACT
    contract.write_text(contract.read_text().replace("count: 2}", "count: 1}", 1))
    lenient = pending(run_mir, app)
    first = json.loads(approve(run_mir, app, strict, "ana", None).stdout)
    assert first["status"] == "pending_review"  # 1 of the 2 it was decided under
    assert json.loads(approve(run_mir, app, lenient, "ana", None).stdout)["status"] == "executed"
    contract.write_text(contract.read_text().replace("count: 1}", "count: 2}", 1))
    second = json.loads(approve(run_mir, app, strict, "ben", None).stdout)
    assert second["status"] == "executed"
    done = run_mir("traces", "verify", "--full", cwd=app)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reviews: 3 checked, 0 signed: ok" in done.stdout
