"""The pytest plugin: ``pytest --mir-evals`` runs eval suites as test items (one per case
and a ``gate`` item); without the flag it collects nothing and imports nothing of mir.

Run in a child pytest on a copy of the runtime fixture project. ``-p no:mir`` then
``-p mir.pytest_plugin`` loads this checkout's plugin whether or not the installed
entry point is there yet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.test_eval_cli import GOOD, SUITE, reply

PLUGIN = ["-p", "no:mir", "-p", "mir.pytest_plugin", "-p", "no:cacheprovider"]
REPORT = """\
import sys
def pytest_sessionfinish(session):
    print("mir.evals imported:", "mir.evals" in sys.modules)
"""


@pytest.fixture
def suite_app(app: Path) -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    (app / "conftest.py").write_text(REPORT)
    return app


def pytest_in(app: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGIN, "-rxs", *args],
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_without_the_flag_nothing_is_collected_nor_imported(suite_app: Path):
    result = pytest_in(suite_app, "capabilities", "-s")
    assert result.returncode == 5, result.stdout  # no tests collected
    assert "mir.evals imported: False" in result.stdout


def test_each_case_is_an_item_and_the_gate_is_the_last(suite_app: Path):
    (suite_app / "replies.jsonl").write_text("".join(line + "\n" for line in GOOD))
    result = pytest_in(
        suite_app, "--mir-evals", "--mir-evals-responses", "replies.jsonl", "-v", "capabilities"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    names = [line.split(" ")[0] for line in result.stdout.splitlines() if " PASSED" in line]
    assert [n.rsplit("::", 1)[1] for n in names] == [
        "refund-small",
        "deny-late",
        "unsure-goes-to-review",
        "gate",
    ]
    # The suite runs inside its first item: it says so while it runs, a line per case run.
    progress = [line for line in result.stdout.splitlines() if line.startswith("mir eval [")]
    assert len(progress) == 3, result.stdout
    assert all(re.search(r"ETA \d+:\d\d$", line) for line in progress), progress


def test_a_failing_gate_fails_pytest_with_the_assertion_messages(suite_app: Path):
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text(SUITE.replace("description:", "min_pass_rate: 1.0\ndescription:"))
    lines = [GOOD[0], reply("refund", 0.95, 40), GOOD[2]]
    (suite_app / "replies.jsonl").write_text("".join(line + "\n" for line in lines))
    result = pytest_in(suite_app, "--mir-evals", "--mir-evals-responses", "replies.jsonl")
    assert result.returncode == 1, result.stdout
    assert "2 passed, 2 failed" in result.stdout or "2 failed, 2 passed" in result.stdout
    assert "deny-late" in result.stdout and "gate failed" in result.stdout
    # the failed assertion, not a traceback
    assert "equals action" in result.stdout and "expected 'deny'" in result.stdout


def test_a_bad_suite_is_one_clear_failure(suite_app: Path):
    (suite_app / "replies.jsonl").write_text("")
    result = pytest_in(suite_app, "--mir-evals", "--mir-evals-responses", "replies.jsonl")
    assert result.returncode == 1
    assert "mir eval: --responses has 0 line(s)" in result.stdout
