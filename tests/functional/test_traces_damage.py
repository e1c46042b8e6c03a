"""Damaged trace stores through the real CLI: one clear line and exit 2, nothing lost;
a read-only ``.mir`` still reads; unreadable lines are quarantined and said so."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

from .test_traces_tamper import segments, three_segments


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return three_segments(tmp_path)


READERS = (
    ("traces", "list"),
    ("traces", "show", "f1-1"),
    ("traces", "export"),
    ("traces", "verify"),
)


def one_error_line(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in line


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[1])
def test_a_half_truncated_database_is_one_line_and_exit_2(run_mir, project, command):
    assert run_mir("traces", "compact", cwd=project).returncode == 0
    db = project / ".mir" / "traces" / "traces.duckdb"
    os.truncate(db, db.stat().st_size // 2)
    size = db.stat().st_size
    one_error_line(run_mir(*command, cwd=project), "traces.duckdb", "not a readable")
    assert db.stat().st_size == size  # left as it was, for whoever investigates


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[1])
def test_a_lock_that_is_a_folder_is_one_line_and_exit_2(run_mir, project, command):
    (project / ".mir" / "traces" / "traces.lock").mkdir()
    one_error_line(run_mir(*command, cwd=project), "traces.lock", "not a regular file")
    assert len(segments(project)) == 3


def test_compacting_with_a_lock_that_is_a_folder_loses_nothing(run_mir, project):
    (project / ".mir" / "traces" / "traces.lock").mkdir()
    one_error_line(run_mir("traces", "compact", cwd=project), "traces.lock")
    assert len(segments(project)) == 3


def test_a_garbled_middle_line_is_quarantined_and_said_so(run_mir, project):
    segment = segments(project)[1]
    lines = segment.read_text().splitlines(keepends=True)
    lines[7] = '{"v":1,"n":7,"hash":"00", garbage\n'
    segment.write_text("".join(lines))
    before = run_mir("traces", "verify", cwd=project)
    assert before.returncode == 1 and f"{segment.name}:7: unreadable line" in before.stdout
    result = run_mir("traces", "compact", cwd=project)
    assert result.returncode == 0, result.stderr
    [warning] = result.stderr.strip().splitlines()
    assert warning.startswith("warning: 1 torn or unreadable trace line(s)")
    assert segment.name in warning
    quarantined = project / ".mir" / "traces" / "quarantine" / segment.name
    assert quarantined.read_text() == "".join(lines)  # kept whole, as found
    verify = run_mir("traces", "verify", cwd=project)
    assert verify.returncode == 1
    assert "1 unreadable line(s) at compaction" in verify.stdout
    assert f"quarantine/{segment.name}" in verify.stdout
    listed = run_mir("traces", "list", "--json", cwd=project)
    assert listed.returncode == 0  # the other 19 lines of that segment still read


def _read_only(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run mir with ``.mir`` bind-mounted read-only (root ignores file modes)."""
    mir = root / ".mir"
    script = (
        f'mount --bind "{mir}" "{mir}" && mount -o remount,ro,bind "{mir}" && exec "{MIR_EXE}" "$@"'
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )


def _can_mount_read_only(tmp: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp / "probe"
    probe.mkdir()
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         f'mount --bind "{probe}" "{probe}" && mount -o remount,ro,bind "{probe}"'],
        capture_output=True, check=False,
    )  # fmt: skip
    return result.returncode == 0


@pytest.mark.parametrize("compacted", [False, True], ids=["segments", "database"])
def test_read_only_commands_work_on_a_read_only_store(run_mir, project, tmp_path, compacted):
    if not _can_mount_read_only(tmp_path):
        pytest.skip("needs unshare and mount (a read-only bind mount)")
    if compacted:
        assert run_mir("traces", "compact", cwd=project).returncode == 0
    (project / ".mir" / "traces" / "traces.lock").unlink(missing_ok=True)
    for command in READERS:
        result = _read_only(project, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
    verified = _read_only(project, "traces", "verify")
    assert "ok: 60 line(s)" in verified.stdout
    assert "read-only store: progress not recorded" in verified.stdout
    assert not (project / ".mir" / "traces" / "traces.lock").exists()


def _database_read_only(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run mir with only ``traces.duckdb`` bind-mounted read-only: a healthy database
    this user may only read, in a folder it may write."""
    db = root / ".mir" / "traces" / "traces.duckdb"
    script = (
        f'mount --bind "{db}" "{db}" && mount -o remount,ro,bind "{db}" && exec "{MIR_EXE}" "$@"'
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *args],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )  # fmt: skip


def test_drift_show_reads_a_database_this_user_may_only_read(run_mir, project, tmp_path):
    # it opened the database read-write (to keep its derived rows and metric history)
    # and refused: "the trace database is read-only for this user"
    if not _can_mount_read_only(tmp_path):
        pytest.skip("needs unshare and mount (a read-only bind mount)")
    assert run_mir("traces", "compact", cwd=project).returncode == 0
    db = project / ".mir" / "traces" / "traces.duckdb"
    before = db.read_bytes()
    for command in (("drift",), ("drift", "show", "--last", "5"), ("traces", "list")):
        result = _database_read_only(project, *command)
        assert result.returncode in (0, 1), (command, result.stdout, result.stderr)
        assert "read-only for this user" not in result.stderr and "Traceback" not in result.stderr
    shown = _database_read_only(project, "drift", "--format", "json")
    assert shown.returncode in (0, 1) and '"agents"' in shown.stdout, shown.stderr
    assert "not recorded" in shown.stdout + shown.stderr  # it says what it could not keep
    assert db.read_bytes() == before
