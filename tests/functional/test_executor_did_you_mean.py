"""A misspelt executor (its function or its module) gets a did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest


def _executor(app: Path, ref: str) -> None:
    contract = app / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    assert "executor: adapters:issue_refund" in text
    contract.write_text(text.replace("executor: adapters:issue_refund", f"executor: {ref}"))


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("adapters:issue_refnd", "adapters has no 'issue_refnd' (did you mean "
         "`adapters:issue_refund`?)"),
        ("adaptrs:issue_refund", "no module 'adaptrs' in {caps} (did you mean "
         "`adapters:issue_refund`? If not, create {caps}/adaptrs.py)"),
    ],
)  # fmt: skip
def test_a_misspelt_executor_gets_a_did_you_mean(run_mir, app: Path, ref: str, said: str):
    _executor(app, ref)
    result = run_mir("run", "agent", "refunds.triage", "-i", "{}", "--provider", "rules", cwd=app)
    assert result.returncode == 2
    caps = app.resolve() / "capabilities" / "refunds"
    assert result.stderr.strip().endswith(f"actions.refund.executor: {said.format(caps=caps)}")


def test_nothing_close_gets_no_guess(run_mir, app: Path):
    _executor(app, "adapters:zzz")
    result = run_mir("run", "agent", "refunds.triage", "-i", "{}", "--provider", "rules", cwd=app)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("adapters has no 'zzz'")
