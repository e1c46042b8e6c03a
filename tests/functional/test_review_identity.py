"""Who may approve, proven: declared reviewers, signed and M-of-N approvals, the requester,
corrections, through the installed `mir` on a copy of the runtime fixture project."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

PENDING = {"action": "refund", "confidence": 0.3, "amount": 40, "reason": "arrived broken"}
INPUT = json.dumps({"order_id": "A1", "amount": 40, "message": "arrived broken"})


def require(app: Path, rule: str) -> None:
    """Give the fixture's refund action an approvals rule."""
    contract = app / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text()
    marker = "    limits:\n      amount: {minimum: 0, maximum: 500}\n"
    assert marker in text
    contract.write_text(text.replace(marker, marker + f"    approvals: {rule}\n", 1))


def declare(run_mir, app: Path, tmp_path: Path, name: str, role: str = "lead") -> Path:
    key = tmp_path / "keys" / f"{name}.key"
    made = run_mir("reviewers", "keygen", name, "--out", str(key), cwd=app)
    assert made.returncode == 0, made.stderr
    added = run_mir(
        "reviewers", "add", name, "--role", role, "--public-key", made.stdout.strip(), cwd=app
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    return key


def pending(run_mir, app: Path, requester: str = "req") -> str:
    (app / "pending.jsonl").write_text(json.dumps(json.dumps(PENDING)) + "\n")
    done = run_mir(
        "run", "agent", "refunds.triage", "--input", INPUT, "--provider", "scripted",
        "--responses", "pending.jsonl", "--as", requester, "--json", cwd=app,
    )  # fmt: skip
    record = json.loads(done.stdout)
    assert record["status"] == "pending_review", record
    return record["flow_id"]


def executed(app: Path) -> list[dict]:
    log = app / "executed.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def claims(app: Path) -> list[tuple]:
    """The ledger's flow claims (none when the ledger never made its tables)."""
    with sqlite3.connect(app / ".mir" / "executions.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        return db.execute("SELECT * FROM flows").fetchall() if "flows" in tables else []


def approve(run_mir, app: Path, flow: str, by: str, key: Path | None, *more: str):
    extra = ("--key", str(key)) if key is not None else ()
    return run_mir("approve", flow, "--by", by, *extra, *more, "--json", cwd=app)


@pytest.fixture
def team(run_mir, app: Path, tmp_path: Path) -> dict[str, Path]:
    require(app, "{roles: [lead], count: 2, signed: true}")
    keys = {name: declare(run_mir, app, tmp_path, name) for name in ("ana", "bob", "cy", "req")}
    keys["dan"] = declare(run_mir, app, tmp_path, "dan", role="support")
    return keys


def test_two_distinct_reviewers_execute_it_once_and_neither_twice_nor_the_requester_count(
    run_mir, app, team
):
    flow = pending(run_mir, app)
    first = approve(run_mir, app, flow, "ana", team["ana"])
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "pending_review"
    assert executed(app) == []
    twice = approve(run_mir, app, flow, "ana", team["ana"])
    assert twice.returncode == 2 and "already approved" in twice.stderr
    own = approve(run_mir, app, flow, "req", team["req"])
    assert own.returncode == 2 and "requested flow" in own.stderr
    role = approve(run_mir, app, flow, "dan", team["dan"])
    assert role.returncode == 2 and "role lead" in role.stderr
    assert executed(app) == []
    second = approve(run_mir, app, flow, "bob", team["bob"])
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["status"] == "executed"
    late = approve(run_mir, app, flow, "cy", team["cy"])
    assert late.returncode == 1 and "already executed" in late.stderr
    assert len(executed(app)) == 1


def test_an_unsigned_or_foreign_key_approval_is_refused_and_nothing_is_claimed(
    run_mir, app, team, tmp_path
):
    flow = pending(run_mir, app)
    unsigned = approve(run_mir, app, flow, "ana", None)
    assert unsigned.returncode == 2 and "unsigned" in unsigned.stderr
    assert unsigned.stderr.count("error:") == 1 and "Traceback" not in unsigned.stderr
    foreign = approve(run_mir, app, flow, "ana", team["bob"])
    assert foreign.returncode == 2 and "not ana's declared key" in foreign.stderr
    stranger = tmp_path / "mallory.key"
    assert (
        run_mir("reviewers", "keygen", "mallory", "--out", str(stranger), cwd=app).returncode == 0
    )
    undeclared = approve(run_mir, app, flow, "mallory", stranger)
    assert undeclared.returncode == 2 and "not a reviewer declared" in undeclared.stderr
    assert executed(app) == [] and claims(app) == []
    events = json.loads(run_mir("traces", "show", flow, "--json", cwd=app).stdout)
    assert not [e for e in events if e["step"] == "review"]


def test_reject_by_one_qualified_reviewer_ends_the_flow(run_mir, app, team):
    flow = pending(run_mir, app)
    done = run_mir("reject", flow, "--by", "cy", "--key", str(team["cy"]), "--json", cwd=app)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "rejected"
    after = approve(run_mir, app, flow, "ana", team["ana"])
    assert after.returncode == 1 and executed(app) == []


def test_a_correction_is_checked_again_executed_instead_and_kept_beside_the_proposal(
    run_mir, app, tmp_path
):
    require(app, "{roles: [lead], count: 1, signed: true}")
    ana = declare(run_mir, app, tmp_path, "ana")
    flow = pending(run_mir, app)
    refused = approve(run_mir, app, flow, "ana", ana, "--set", "amount=900")
    assert refused.returncode == 2 and "refused by the contract" in refused.stderr
    unknown = approve(run_mir, app, flow, "ana", ana, "--patch", '{"amout": 30}')
    assert unknown.returncode == 2 and executed(app) == []
    done = approve(run_mir, app, flow, "ana", ana, "--set", "amount=30", "--set", "reason=half")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "executed"
    assert record["decision"]["amount"] == 30 and record["decision"]["reason"] == "half"
    assert [e["params"]["amount"] for e in executed(app)] == [30]
    events = json.loads(run_mir("traces", "show", flow, "--json", cwd=app).stdout)
    final = next(e for e in events if e["step"] == "final")
    assert final["data"]["human_override"] is True
    assert final["data"]["proposal"]["amount"] == 40
    review = next(e for e in events if e["step"] == "review")
    assert review["data"]["correction"] == {"amount": 30, "reason": "half"}
    assert review["data"]["statement"]["correction"] == {"amount": 30, "reason": "half"}
    shown = run_mir("traces", "show", flow, cwd=app).stdout
    assert "human override" in shown


def test_two_racing_last_approvals_execute_once(run_mir, app, team):
    flow = pending(run_mir, app)
    assert approve(run_mir, app, flow, "ana", team["ana"]).returncode == 0
    racers = [
        subprocess.Popen(
            [str(MIR_EXE), "approve", flow, "--by", name, "--key", str(team[name]), "--json"],
            cwd=app,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("bob", "cy")
    ]
    codes = sorted(p.wait(timeout=120) for p in racers)
    assert codes == [0, 1], [p.stderr.read() for p in racers]
    assert len(executed(app)) == 1


def test_without_reviewers_toml_an_approvals_rule_cannot_be_met(run_mir, app):
    require(app, "{count: 1}")
    flow = pending(run_mir, app)
    done = run_mir("approve", flow, "--by", "ana", cwd=app)
    assert done.returncode == 2 and "no reviewers.toml" in done.stderr
    assert executed(app) == []


def edit_review(app: Path, flow: str, change) -> None:
    """Rewrite the flow's review event where it is stored: its segment file or, once
    compacted, the database (the chain then breaks too)."""
    import duckdb

    for segment in (app / ".mir" / "traces" / "segments").glob("*.jsonl"):
        lines = segment.read_text().splitlines()
        for i, raw in enumerate(lines):
            line = json.loads(raw)
            if line.get("flow_id") == flow and line.get("step") == "review":
                change(line["data"])
                lines[i] = json.dumps(line)
        segment.write_text("\n".join(lines) + "\n")
    con = duckdb.connect(str(app / ".mir" / "traces" / "traces.duckdb"))
    try:
        tables = {
            row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
        if "events" not in tables:
            return  # nothing compacted yet: the segments hold every event
        for (data,) in con.execute(
            "SELECT data FROM events WHERE flow_id = ? AND step = 'review'", [flow]
        ).fetchall():
            parsed = json.loads(data)
            change(parsed)
            con.execute(
                "UPDATE events SET data = ? WHERE flow_id = ? AND step = 'review'",
                [json.dumps(parsed), flow],
            )
    finally:
        con.close()


def test_verify_names_the_flow_of_an_edited_missing_or_foreign_signature(run_mir, app, tmp_path):
    from mir.reviewers import Statement, generate_key

    require(app, "{roles: [lead], count: 1, signed: true}")
    ana = declare(run_mir, app, tmp_path, "ana")
    flows = []
    for _ in range(4):
        flow = pending(run_mir, app)
        assert approve(run_mir, app, flow, "ana", ana).returncode == 0
        flows.append(flow)
    clean = run_mir("traces", "verify", cwd=app)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "reviews: 4 checked, 4 signed: ok" in clean.stdout
    mallory = generate_key()

    def foreign(data):
        data["signature"] = mallory.sign(Statement.model_validate(data["statement"]))
        data["signer_key"] = mallory.public_key

    def edited_statement(data):
        data["statement"]["at"] = data["at"] = "2026-01-01T00:00:00+00:00"

    def flipped(data):
        data["signature"] = (
            data["signature"][:10]
            + ("A" if data["signature"][10] != "A" else "B")
            + data["signature"][11:]
        )

    def stripped(data):
        data["statement"] = data["signature"] = data["signer_key"] = None

    for flow, change in zip(flows, (foreign, edited_statement, flipped, stripped), strict=True):
        edit_review(app, flow, change)
    done = run_mir("traces", "verify", cwd=app)
    assert done.returncode == 1
    found = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("flow ")}
    assert "wrong_key" in found[flows[0]]
    assert "forged" in found[flows[1]] and "forged" in found[flows[2]]
    assert "unsigned" in found[flows[3]]
    (app / "reviewers.toml").write_text("")  # ana no longer declared
    gone = run_mir("traces", "verify", cwd=app)
    assert gone.returncode == 1 and "unknown_reviewer" in gone.stdout
