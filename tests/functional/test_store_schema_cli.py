"""A store written by a newer mir (a schema step this mir does not know, in
``_mir_migrations``), through the real ``mir`` CLI: one line naming the step and the
file, exit 2, no traceback; and a step of another capability's scope (drift's) does not
stop the trace store's own readers."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.functional.test_attack_reviewers import copy_desk, pending


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_desk(tmp_path, monkeypatch)


def _future(db: Path, scope: str) -> None:
    con = duckdb.connect(str(db))
    con.execute(
        "INSERT INTO _mir_migrations VALUES (?, '9999_from_the_future', '2031-01-01')", [scope]
    )
    con.close()


def test_a_newer_schema_step_is_one_line_exit_2(run_mir, desk):
    pending(run_mir, desk)
    done = run_mir("traces", "compact", cwd=desk)
    assert done.returncode == 0, done.stderr
    db = desk / ".mir" / "traces" / "traces.duckdb"
    drift = run_mir("drift", "--last", "5", "--format", "json", cwd=desk)
    assert drift.returncode in (0, 1), drift.stderr  # drift's own tables made here

    _future(db, "drift")
    listed = run_mir("traces", "list", cwd=desk)
    assert listed.returncode == 0, listed.stderr  # another scope's step: not the store's
    refused = run_mir("drift", "--last", "5", cwd=desk)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "'9999_from_the_future'" in refused.stderr and str(db) in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1

    _future(db, "traces")
    refused = run_mir("traces", "list", cwd=desk)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "traces schema step '9999_from_the_future'" in refused.stderr
    assert "newer mir" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
