"""Attacks through the reviewer's commands (H8): ``mir approve`` / ``mir reject`` on a copy
of examples/support_desk, with hostile reviewer names, reasons and contexts.

Each test is an attack that once worked or a guarantee the README states; the copy's
ledgers and traces are grepped or queried directly, never through mir's own readers.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.functional.reviewer_keys import sign_as

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
SECRET = "sk_live_51HqLyjWDarjtT1zdp7dcAbCd"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_desk(tmp_path, monkeypatch)


def copy_desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "desk"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    monkeypatch.delenv("SUPPORT_DESK_LEDGER", raising=False)
    monkeypatch.delenv("SUPPORT_DESK_STORE", raising=False)
    sign_as(project, tmp_path / "keys", monkeypatch)  # refunds need a support lead's signature
    return project


def pending(run_mir, desk: Path, ticket: str = "blender_broken") -> str:
    done = run_mir(
        "run", "agent", "refunds.triage", "--input", f"@inputs/{ticket}.json",
        "--provider", "scripted", "--responses", f"responses/{ticket}.jsonl", "--json",
        cwd=desk,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "pending_review", record
    return record["flow_id"]


def refunds(desk: Path) -> list[tuple[str, float]]:
    with sqlite3.connect(desk / ".mir" / "support_ledger.sqlite3") as db:
        return db.execute("SELECT order_id, amount FROM entries WHERE kind = 'refund'").fetchall()


def written_bytes(desk: Path) -> bytes:
    """Everything under .mir (SQLite files, their WAL, segments, manifest, DuckDB)."""
    return b"".join(p.read_bytes() for p in sorted((desk / ".mir").rglob("*")) if p.is_file())


def undeclare(desk: Path) -> None:
    """The project without reviewers.toml nor approvals: `--by` is a free name again."""
    (desk / "reviewers.toml").unlink()
    contract = desk / "capabilities" / "refunds" / "agents" / "triage.yaml"
    lines = contract.read_text().splitlines(keepends=True)
    contract.write_text("".join(line for line in lines if "approvals:" not in line))


def test_a_reviewer_name_holding_a_secret_is_refused_and_never_shown(run_mir, desk):
    """With declared reviewers a hostile `--by` is no reviewer: refused before anything is
    written, and the refusal does not echo the secret."""
    flow = pending(run_mir, desk)
    done = run_mir("approve", flow, "--by", f"ana {SECRET}", cwd=desk)
    assert done.returncode == 2
    assert SECRET not in done.stderr
    assert SECRET.encode() not in written_bytes(desk)
    assert refunds(desk) == []


def test_a_reviewer_name_holding_a_secret_is_not_written_to_the_execution_ledger(run_mir, desk):
    """`--by` is stored as the flow's holder in `.mir/executions.db`: it was written verbatim
    (the trace event was redacted, the ledger row was not)."""
    undeclare(desk)
    flow = pending(run_mir, desk)
    done = run_mir("approve", flow, "--by", f"ana {SECRET}", cwd=desk)
    assert done.returncode == 0, done.stderr
    assert SECRET.encode() not in written_bytes(desk)
    # The loser of a later race is told who holds the flow, redacted as stored.
    again = run_mir("reject", flow, "--reason", "dup", cwd=desk)
    assert again.returncode == 1
    assert "already executed" in again.stderr
    assert SECRET not in again.stderr


def test_a_rejection_reason_holding_a_secret_is_not_written(run_mir, desk):
    undeclare(desk)
    flow = pending(run_mir, desk)
    done = run_mir("reject", flow, "--reason", f"dup password={SECRET}", "--by", SECRET, cwd=desk)
    assert done.returncode == 0, done.stderr
    assert SECRET.encode() not in written_bytes(desk)
    assert refunds(desk) == []


def test_a_lying_context_at_approve_does_not_hide_a_changed_world(run_mir, desk):
    """Two pending refunds of one order: after the first is paid, approving the second with
    the context it was proposed in (a lie now) must end stale: the loader is asked too."""
    first, second = pending(run_mir, desk), pending(run_mir, desk)
    shown = run_mir("traces", "show", second, "--json", cwd=desk)
    snapshot = next(e for e in json.loads(shown.stdout) if e["step"] == "snapshot")
    old = desk / "old-context.json"
    old.write_text(json.dumps(snapshot["data"]["context"]), encoding="utf-8")
    assert run_mir("approve", first, "--by", "ana", cwd=desk).returncode == 0
    lie = run_mir("approve", second, "--by", "ana", "--context", f"@{old}", "--json", cwd=desk)
    assert lie.returncode == 0, lie.stderr
    record = json.loads(lie.stdout)
    assert record["status"] == "stale" and not record["executed"]
    assert refunds(desk) == [("A-1002", 149.0)]


def test_reject_then_approve_and_a_deleted_execution_ledger_run_nothing(run_mir, desk):
    flow = pending(run_mir, desk)
    assert run_mir("reject", flow, "--reason", "dup", cwd=desk).returncode == 0
    approve = run_mir("approve", flow, "--by", "eve", cwd=desk)
    assert approve.returncode == 1 and "already rejected" in approve.stderr
    for path in (desk / ".mir").glob("executions.db*"):
        path.unlink()  # the claims are gone; the trace still holds the outcome
    approve = run_mir("approve", flow, "--by", "eve", cwd=desk)
    assert approve.returncode == 1 and "rejected" in approve.stderr, approve.stderr
    assert refunds(desk) == []


def test_a_suspension_reason_holding_a_secret_is_not_written(run_mir, desk):
    """`mir agents suspend --reason` was stored verbatim in `.mir/agents.json`."""
    done = run_mir(
        "agents", "suspend", "refunds.triage", "--reason", f"alert: token={SECRET}", cwd=desk
    )
    assert done.returncode == 0, done.stderr
    assert SECRET.encode() not in written_bytes(desk)
    listed = run_mir("agents", "list", "--json", cwd=desk)
    assert SECRET not in listed.stdout and "[REDACTED]" in listed.stdout
