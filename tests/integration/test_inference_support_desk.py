"""The support_desk example end to end: its own test suite, its CLI runs on recorded
responses, and two real decisions of the embedded SmolLM2 model (slow)."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mir.contracts import load_contract
from tests.conftest import REPO, RunMir
from tests.functional.reviewer_keys import sign_as

EXAMPLE = REPO / "examples" / "support_desk"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    sign_as(copy, tmp_path / "keys", monkeypatch)  # refunds need a support lead's signature
    return copy


def test_the_contract_validates() -> None:
    contract = load_contract(EXAMPLE / "capabilities" / "refunds" / "agents" / "triage.yaml")
    assert contract.actions["refund"].limits["amount"].maximum == 200


def test_the_example_suite_passes(desk: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=desk,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_recorded_refunds_wait_for_review_and_a_paid_order_makes_the_second_stale(
    desk: Path, run_mir: RunMir
) -> None:
    def pending() -> str:
        ran = run_mir(
            "run", "agent", "refunds.triage", "--input", "@inputs/blender_broken.json",
            "--provider", "scripted", "--responses", "responses/blender_broken.jsonl", "--json",
            cwd=desk,
        )  # fmt: skip
        record = json.loads(ran.stdout)
        assert (record["status"], record["action"], record["executed"]) == (
            "pending_review",
            "refund",
            False,
        )
        return record["flow_id"]

    def ledger_rows() -> list[tuple]:
        path = desk / ".mir" / "support_ledger.sqlite3"
        if not path.exists():
            return []
        with sqlite3.connect(path) as db:
            return db.execute("SELECT kind, order_id, amount FROM entries").fetchall()

    first, second = pending(), pending()
    assert ledger_rows() == []

    def approve(flow_id: str) -> dict:
        done = run_mir("approve", flow_id, "--json", cwd=desk)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert approve(first)["status"] == "executed"
    # The refund changed the order (nothing left to refund): the second is never paid.
    stale = approve(second)
    assert (stale["status"], stale["executed"]) == ("stale", False)
    assert ledger_rows() == [("refund", "A-1002", 149.0)]


@pytest.mark.slow
def test_embedded_model_refunds_the_mug_and_waits_for_a_human_on_the_blender(desk: Path) -> None:
    from mir import load_agent

    def ticket(name: str) -> dict:
        return json.loads((desk / "inputs" / f"{name}.json").read_text())

    with load_agent("refunds.triage", project=desk) as agent:
        mug = agent.decide(ticket("damaged_mug"))
        blender = agent.decide(ticket("blender_broken"))
    assert (mug.status, mug.action, mug.provider) == ("executed", "refund", "llama")
    assert mug.decision is not None and mug.decision["amount"] == 24.9
    assert (blender.status, blender.action) == ("pending_review", "refund")
