"""``mir traces``: a healthy store this user may only read is not called damaged, and
``verify`` names each break's file by its path."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO

from .test_traces_tamper import segments, three_segments


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """The file as a reader who may not write it sees it: root ignores modes, so for
    root an immutable flag (what a read-only mount does too)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_database_is_not_called_damaged(run_mir, tmp_path: Path):
    project = three_segments(tmp_path)
    assert run_mir("traces", "compact", cwd=project).returncode == 0
    database = project / ".mir" / "traces" / "traces.duckdb"
    with read_only(database):
        listed = run_mir("traces", "list", "--json", cwd=project)
        assert listed.returncode == 0, listed.stderr
        # compacting needs to write: one line that says so, not "move it aside"
        compacted = run_mir("traces", "compact", cwd=project)
    assert compacted.returncode == 2
    assert "move it aside" not in compacted.stderr
    assert "not a readable trace database" not in compacted.stderr
    assert compacted.stderr.strip() == (
        f"error: {database}: the trace database is read-only for this user (reading "
        "commands (`mir traces list|show|export|verify`) work; compacting writes to it: "
        "run as its owner or make it writable; it is not damaged)"
    )


def test_a_torn_database_is_still_called_unreadable(run_mir, tmp_path: Path):
    project = three_segments(tmp_path)
    assert run_mir("traces", "compact", cwd=project).returncode == 0
    database = project / ".mir" / "traces" / "traces.duckdb"
    database.write_bytes(b"not duckdb at all" * 100)
    result = run_mir("traces", "compact", cwd=project)
    assert result.returncode == 2
    assert "not a readable trace database" in result.stderr and "move it aside" in result.stderr


def test_verify_prints_each_break_with_the_segment_s_path(run_mir, tmp_path: Path):
    project = three_segments(tmp_path)
    deleted = segments(project)[1]
    deleted.unlink()
    result = run_mir("traces", "verify", cwd=project)
    assert result.returncode == 1
    assert f".mir/traces/segments/{deleted.name}:0: segment file deleted" in result.stdout
    # from a folder outside the project the path is absolute, so it opens from there
    elsewhere = run_mir("traces", "verify", "--project", str(project), cwd=REPO)
    assert f"{deleted}:0: segment file deleted" in elsewhere.stdout


def test_compact_prints_a_project_path_with_brackets_as_it_is(run_mir, tmp_path: Path):
    # rich read "[bold]" in the database's path as markup and dropped it from the line
    (tmp_path / "shop[bold]").mkdir()
    project = three_segments(tmp_path / "shop[bold]")
    result = run_mir("traces", "compact", "--project", str(project), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"into {project / '.mir' / 'traces' / 'traces.duckdb'}" in result.stdout
