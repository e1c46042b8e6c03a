"""`mir review list` and `mir reviewers list` on a real terminal (a pty): the table a
reviewer reads keeps the flow id, the agent, the action, its key fields and what it
waits for whole at 80 and 120 columns, and prints no markup."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE
from tests.functional.test_review_identity import declare, pending, require
from tests.support.terminal import read_terminal


def on_terminal(cwd: Path, *args: str, columns: int) -> str:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("NO_COLOR", None)  # a real terminal: colour on, then stripped here
    process = subprocess.Popen([str(MIR_EXE), *args], cwd=cwd, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    received = read_terminal(master, process)
    assert process.wait(timeout=60) == 0, received.decode(errors="replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", received.decode())


@pytest.mark.parametrize("columns", [80, 120])
def test_review_list_on_a_terminal(run_mir, app: Path, tmp_path: Path, columns: int):
    require(app, "{roles: [lead], count: 2, signed: true}")
    ana = declare(run_mir, app, tmp_path, "ana")
    declare(run_mir, app, tmp_path, "bob")
    flow = pending(run_mir, app)
    assert run_mir("approve", flow, "--key", str(ana), cwd=app).returncode == 0
    shown = on_terminal(app, "review", "list", columns=columns)
    assert "[bold" not in shown and "[/" not in shown  # no rich markup printed
    assert max(len(line) for line in shown.splitlines()) <= columns
    flat = " ".join(shown.split())
    assert flow[:12] in flat and "refunds.triage" in flat and " refund " in flat
    assert "1 of 2" in flat and "(lead)" in flat, shown  # what it still waits for
    assert "…" not in shown, shown  # a narrow terminal wraps the key fields, cuts none
    if columns >= 120:  # each key field on its own line, whole
        for whole in ("amount=40", "reason=arrived broken", "confidence=0.3"):
            assert any(whole in line for line in shown.splitlines()), shown


@pytest.mark.parametrize("columns", [80, 120])
def test_reviewers_list_on_a_terminal(run_mir, app: Path, tmp_path: Path, columns: int):
    declare(run_mir, app, tmp_path, "ana")
    declare(run_mir, app, tmp_path, "bartholomew_the_second", role="support_lead")
    shown = on_terminal(app, "reviewers", "list", columns=columns)
    assert "[bold" not in shown and "[/" not in shown
    assert max(len(line) for line in shown.splitlines()) <= columns
    for name, role in (("ana", "lead"), ("bartholomew_the_second", "support_lead")):
        [row] = [line for line in shown.splitlines() if name in line]
        assert role in row
