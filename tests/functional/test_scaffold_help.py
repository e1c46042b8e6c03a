"""The help pages of the scaffolding commands, snapshotted so a change is reviewed."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "command",
    [("init",), ("new",), ("new", "capability"), ("new", "agent")],
    ids=["init", "new", "new-capability", "new-agent"],
)
def test_help_page(run_mir, snapshot, command):
    result = run_mir(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot
