"""On a terminal, `mir run agent` shows the current step on stderr; never when piped or
with --json. Run under a real pseudo-terminal (stderr only: stdout stays a pipe)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE
from tests.support.terminal import read_terminal

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
ARGS = ("run", "agent", "refunds.triage", "-i", json.dumps({"order_id": "A1", "amount": 40}),
        "--provider", "scripted", "--responses", "r.jsonl")  # fmt: skip


@pytest.fixture
def app(app: Path) -> Path:
    root = app
    # the first answer is invalid: the spinner must show the second attempt
    (root / "r.jsonl").write_text(json.dumps("not json") + "\n" + json.dumps(json.dumps(GOOD)))
    return root


def run_with_terminal_stderr(root: Path, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal on stderr received)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [str(MIR_EXE), *args], cwd=root, env=env, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    terminal = read_terminal(master, process)
    stdout = process.stdout.read().decode() if process.stdout else ""
    process.wait(timeout=30)
    return process.returncode, stdout, terminal.decode(errors="replace")


def test_the_steps_show_on_a_terminal_and_vanish(app: Path):
    code, stdout, terminal = run_with_terminal_stderr(app, *ARGS)
    assert code == 0, terminal
    for step in ("inferring with scripted", "(attempt 1/3)", "(attempt 2/3)", "executing refund"):
        assert step in terminal, terminal
    # transient: the line is erased; the result itself goes to stdout only
    assert "\x1b[2K" in terminal
    assert "executed" in stdout and "inferring" not in stdout and "\x1b" not in stdout


def test_no_spinner_with_json_on_a_terminal(app: Path):
    code, stdout, terminal = run_with_terminal_stderr(app, *ARGS, "--json")
    assert code == 0, terminal
    assert terminal == "" and json.loads(stdout)["status"] == "executed"


def test_no_spinner_when_stderr_is_piped(run_mir, app: Path):
    result = run_mir(*ARGS, cwd=app)
    assert result.returncode == 0 and result.stderr == ""
