"""The CLI shell: version, help, exit codes and the one-line error contract."""

from __future__ import annotations

import socket

import pytest

from mir import __version__


def test_version(run_mir):
    result = run_mir("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mir {__version__}"


def test_help_lists_commands(run_mir):
    result = run_mir("--help")
    assert result.returncode == 0
    assert "schema" in result.stdout


def test_unknown_command_is_usage_error(run_mir):
    result = run_mir("no-such-command")
    assert result.returncode == 2
    assert "No such command" in result.stderr


def test_user_error_is_one_line_without_traceback(run_mir):
    result = run_mir("schema", "nope.json")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: unknown schema 'nope.json'")
    assert "Traceback" not in result.stderr


def test_debug_shows_traceback(run_mir):
    result = run_mir("--debug", "schema", "nope.json")
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_schemas_are_fresh(run_mir, tmp_path):
    from tests.conftest import REPO

    assert run_mir("schema", "--check", str(REPO / "schemas")).returncode == 0
    stale = tmp_path / "schemas"
    stale.mkdir()
    (stale / "intent-doc.schema.json").write_text("{}")
    result = run_mir("schema", "--check", str(stale))
    assert result.returncode == 1
    assert "stale" in result.stderr


def test_network_is_blocked_in_tests():
    with pytest.raises(ConnectionRefusedError, match="blocked"):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


def test_schema_lists_formats_and_every_settings_table(run_mir):
    result = run_mir("schema")
    assert result.returncode == 0
    listed = set(result.stdout.split())
    assert {
        "agent-contract.schema.json",
        "intent-doc.schema.json",
        "eval-suite.schema.json",
        "tool-mir.schema.json",
        "tool-mir-lint.schema.json",
        "tool-mir-model.schema.json",
        "tool-mir-traces.schema.json",
    } <= listed


def test_settings_schema_describes_the_lint_table(run_mir):
    import json

    result = run_mir("schema", "tool-mir-lint.schema.json")
    assert result.returncode == 0
    assert "forbidden" in json.loads(result.stdout)["properties"]
