"""A promotion gate (``mir models promote --to production``) runs the agents' suites:
those runs are in ``mir eval history`` too, marked as the promotion gate of the version
they tested, beside the ordinary ``mir eval`` runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.functional.test_models_cli import _setup, desk  # noqa: F401  (the fixture)


def test_a_promotion_gate_run_is_in_the_eval_history(run_mir, desk: Path):  # noqa: F811
    _setup(run_mir, desk)
    ran = run_mir(
        "eval", "refunds.triage", "--responses", "responses/eval-triage.jsonl", "-q", cwd=desk
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    promoted = run_mir(
        "models", "promote", "qwen", "2", "--to", "production", "--force",
        "--responses", "responses/eval-triage.jsonl", cwd=desk,
    )  # fmt: skip
    assert promoted.returncode == 0, promoted.stdout + promoted.stderr

    shown = run_mir("eval", "history", "refunds.triage", "--json", cwd=desk)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert [row["origin"] for row in rows] == [None, "promotion gate qwen@2"]
    table = run_mir("eval", "history", "refunds.triage", cwd=desk)
    assert "promotion gate qwen@2" in table.stdout
