"""The SQLite execution ledger: at most once per key, one holder per flow, redacted,
migrated from the older file-per-key folder."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mir.runtime.ledger import LedgerError, SqliteExecutionLedger, migrate_folder
from mir.runtime.ports import FlowAlreadyDecided


def ledger(tmp_path: Path, **kw) -> SqliteExecutionLedger:
    return SqliteExecutionLedger(tmp_path / "executions.db", **kw)


def dead_pid() -> int:
    code = "import os; print(os.getpid())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)


def test_each_key_is_claimed_once_across_threads_and_ledgers(tmp_path: Path):
    shared = ledger(tmp_path)
    wins: list[bool] = []
    claim = lambda: wins.append(shared.claim("k1", {}))  # noqa: E731
    threads = [threading.Thread(target=claim) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins.count(True) == 1
    assert shared.claimed("k1") and not shared.claimed("k2")
    assert shared.outcome("k1") is None  # claimed, no outcome yet: in doubt
    shared.complete("k1", {"ok": True})
    again = ledger(tmp_path)  # another process, later
    assert again.claim("k1", {}) is False
    assert again.outcome("k1") == {"ok": True}


def test_the_first_holder_of_a_flow_wins_and_the_loser_learns_who(tmp_path: Path):
    ana, bo = ledger(tmp_path), ledger(tmp_path)
    assert ana.claim_flow("f1", "approved", by="ana").won
    lost = bo.claim_flow("f1", "rejected", by="bo")
    assert not lost.won and lost.holder is not None
    assert (lost.holder.state, lost.holder.by, lost.holder.final) == ("approved", "ana", None)
    assert "pid" in lost.holder.process
    assert ana.claim("k1", {"flow_id": "f1"})  # the holder's own execution claim
    assert bo.holder("f1").state == "executing"
    ana.complete("k1", {"ok": True})
    assert bo.holder("f1").state == "executed"
    ana.settle_flow("f1", "executed")
    held = bo.claim_flow("f1", "approved", by="bo").holder
    assert held is not None and held.status == "executed" and held.final == "executed"
    error = FlowAlreadyDecided.held_by(held)
    assert error.exit_code == 1
    assert str(error).startswith("flow f1 is already executed (by ana, at ")


def test_a_run_executing_a_flow_holds_it(tmp_path: Path):
    run, reviewer = ledger(tmp_path), ledger(tmp_path)
    assert run.claim("k1", {"flow_id": "f1", "by": "its run"})
    assert not reviewer.claim_flow("f1", "replaying", by="ana").won
    # and a reviewer who got there first keeps the run out
    assert reviewer.claim_flow("f2", "replaying", by="ana").won
    with pytest.raises(FlowAlreadyDecided, match="already replaying"):
        run.claim("k2", {"flow_id": "f2"})
    assert not run.claimed("k2")  # nothing of the refused claim was written


def test_an_unsettled_claim_of_a_dead_process_is_taken_over_once(tmp_path: Path):
    ana = ledger(tmp_path)
    assert ana.claim_flow("f1", "approved", by="ana").won
    with sqlite3.connect(tmp_path / "executions.db") as con:
        con.execute("UPDATE flows SET pid = ?", (dead_pid(),))
    bo, cy = ledger(tmp_path), ledger(tmp_path)
    taken = bo.claim_flow("f1", "replaying", by="bo")
    assert taken.won and taken.holder is not None and taken.holder.by == "ana"
    assert not cy.claim_flow("f1", "replaying", by="cy").won  # bo is alive


def test_a_claim_from_another_host_or_a_settled_one_is_never_taken_over(tmp_path: Path):
    ana = ledger(tmp_path)
    ana.claim_flow("f1", "approved", by="ana")
    ana.claim_flow("f2", "rejected", by="ana")
    ana.settle_flow("f2", "rejected")
    with sqlite3.connect(tmp_path / "executions.db") as con:
        con.execute("UPDATE flows SET pid = ?", (dead_pid(),))
        con.execute("UPDATE flows SET host = 'elsewhere' WHERE flow_id = 'f1'")
    bo = ledger(tmp_path)
    assert not bo.claim_flow("f1", "approved", by="bo").won
    assert not bo.claim_flow("f2", "approved", by="bo").won


def test_released_claims_free_the_flow(tmp_path: Path):
    ana, bo = ledger(tmp_path), ledger(tmp_path)
    ana.claim_flow("f1", "replaying", by="ana")
    bo.release_flow("f1")  # not bo's: nothing happens
    assert not bo.claim_flow("f1", "approved", by="bo").won
    ana.release_flow("f1")
    assert bo.claim_flow("f1", "approved", by="bo").won


def test_stored_info_results_and_errors_are_redacted(tmp_path: Path):
    def redact(value):
        return json.loads(json.dumps(value).replace("sk-secret", "[REDACTED]"))

    book = ledger(tmp_path, redact=redact)
    book.claim("k1", {"flow_id": "f1", "note": "sk-secret"})
    book.complete("k1", {"ok": False, "error": "RuntimeError('token sk-secret')"})
    raw = (tmp_path / "executions.db").read_bytes()
    wal = (tmp_path / "executions.db-wal").read_bytes()
    assert b"sk-secret" not in raw + wal
    assert book.outcome("k1") == {"ok": False, "error": "RuntimeError('token [REDACTED]')"}


@pytest.mark.parametrize(("fsync", "level"), [(True, 2), (False, 1)])
def test_the_fsync_switch_sets_sqlite_synchronous(tmp_path: Path, fsync: bool, level: int):
    book = ledger(tmp_path, fsync=fsync)
    book.claim("k1", {})
    assert book._con().execute("PRAGMA synchronous").fetchone()[0] == level
    assert book._con().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_damaged_ledger_file_is_one_clear_error(tmp_path: Path):
    (tmp_path / "executions.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError, match="execution ledger is unusable"):
        ledger(tmp_path).claim("k1", {})


def legacy_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "done").write_text('{"flow_id": "f1"}\n{"ok": true, "result": {"id": 7}}\n')
    (folder / "doubt").write_text('{"flow_id": "f2"}\n')
    (folder / "torn").write_text('{"flow_id": "f3"}\n{"ok": tr')
    (folder / "empty").write_text("")  # killed right after O_CREAT|O_EXCL: still claimed
    (folder / "secret").write_text('{"flow_id": "f4"}\n{"ok": true, "result": "sk-secret"}\n')


def test_an_older_folder_ledger_is_migrated_on_first_use(tmp_path: Path):
    folder = tmp_path / "executions"
    legacy_folder(folder)

    def redact(value):
        return json.loads(json.dumps(value).replace("sk-secret", "[REDACTED]"))

    book = ledger(tmp_path, legacy=folder, redact=redact)
    assert book.outcome("done") == {"ok": True, "result": {"id": 7}}
    for key in ("doubt", "torn", "empty"):
        assert book.claimed(key) and book.outcome(key) is None
    assert book.outcome("secret") == {"ok": True, "result": "[REDACTED]"}
    assert not folder.exists()
    assert book.claim("done", {}) is False


def test_a_migration_interrupted_after_the_import_loses_nothing(tmp_path: Path):
    folder = tmp_path / "executions"
    legacy_folder(folder)
    book = ledger(tmp_path)
    book.claim("doubt", {"flow_id": "f2"})  # imported earlier, before the outcome line
    (folder / "doubt").write_text('{"flow_id": "f2"}\n{"ok": true}\n')
    migrate_folder(book, folder)
    (folder).mkdir()  # the crash: files were imported but not yet deleted
    legacy_folder_copy = tmp_path / "again"
    legacy_folder(legacy_folder_copy)
    assert migrate_folder(book, legacy_folder_copy) == 5  # a rerun: upserts, no error
    assert book.outcome("doubt") == {"ok": True}  # an outcome is never lost
    assert book.outcome("done") == {"ok": True, "result": {"id": 7}}
    rows = book._con().execute("SELECT count(*) FROM executions").fetchone()[0]
    assert rows == 5
