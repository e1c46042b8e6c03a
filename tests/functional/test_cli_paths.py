"""Paths given on the command line are checked up front: one ``error:`` line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.traces import TraceStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\n\n[tool.mir]\n')
    TraceStore(tmp_path / ".mir" / "traces", environ={}).close()
    return tmp_path


def one_error_line(result, expected: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("schema", "--write", "pyproject.toml"), "--write: pyproject.toml is a file"),
        (("schema", "--write", "/proc/x"), "--write: cannot create files in /proc"),
        (("schema", "--write", "no/such/dir"), "folder no/such does not exist"),
        (("schema", "--check", "/nonexistent"), "--check: folder not found: /nonexistent"),
        (("schema", "--check", "pyproject.toml"), "--check: pyproject.toml is a file"),
        (("init", "/proc/foo"), "FOLDER: cannot create files in /proc"),
        (("init", "pyproject.toml/app"), "pyproject.toml is a file, not a folder"),
    ],
)
def test_schema_and_init_paths(run_mir, project: Path, args, expected):
    one_error_line(run_mir(*args, cwd=project), expected)


def test_init_creates_missing_parent_folders_like_git_init(run_mir, project: Path):
    result = run_mir("init", "no/such/app", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "no" / "such" / "app" / "pyproject.toml").is_file()


@pytest.mark.parametrize("fmt", ["parquet", "json", "otlp"])
def test_export_to_a_missing_folder(run_mir, project: Path, fmt: str):
    result = run_mir(
        "traces", "export", "--format", fmt, "-o", "/nonexistent/dir/x.out", cwd=project
    )
    one_error_line(result, "--output: /nonexistent/dir/x.out: folder /nonexistent/dir does not")


def test_export_into_a_folder_that_refuses_files(run_mir, project: Path):
    result = run_mir("traces", "export", "-f", "parquet", "-o", "/proc/x.parquet", cwd=project)
    one_error_line(result, "--output: cannot create files in /proc")


def test_export_whose_folder_is_a_file(run_mir, project: Path):
    result = run_mir("traces", "export", "-o", "pyproject.toml/x.json", cwd=project)
    one_error_line(result, "pyproject.toml is a file, not a folder")


def test_a_good_path_still_works(run_mir, project: Path):
    assert run_mir("schema", "--write", "out/schemas", cwd=project).returncode == 2
    (project / "out").mkdir()
    written = run_mir("schema", "--write", "out/schemas", cwd=project)
    assert written.returncode == 0, written.stderr
    assert run_mir("schema", "--check", "out/schemas", cwd=project).returncode == 0
    exported = run_mir("traces", "export", "-o", "out/events.json", cwd=project)
    assert exported.returncode == 0, exported.stderr
    assert (project / "out" / "events.json").exists()
    assert list(project.glob("out/.mir-probe-*")) == []
