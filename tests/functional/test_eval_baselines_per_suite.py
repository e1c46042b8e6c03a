"""Two suites of one agent keep one baseline each (``evals/baselines/<suite>.json``):
``--update-baseline`` of one never replaces the other's, and a baseline recorded for
another suite is refused (exit 2, one line), through the installed ``mir``. The fallback
rules decide (``--provider rules``: 20 EUR or less is refunded, the rest escalated)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

MAIN = """\
agent: triage
cases:
  - id: small
    input: {order_id: A1, amount: 10, message: x}
    expect: {action: refund}
  - id: big
    input: {order_id: A1, amount: 60, message: x}
    expect: {action: escalate}
"""
# shares the case id 'big' with MAIN, with another expectation: the old shared file
# made each suite accept the other's baseline, since they share a case
EDGE = """\
agent: triage
min_pass_rate: 0.5
cases:
  - id: big
    input: {order_id: A1, amount: 60, message: x}
    expect: {action: refund}
  - id: odd
    input: {order_id: A1, amount: 15, message: "?"}
    expect: {action: refund}
"""


@pytest.fixture
def two_suites(app: Path) -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(MAIN)
    (evals / "triage-edge.yaml").write_text(EDGE)
    return evals


def test_each_suite_updates_only_its_own_baseline(run_mir, app: Path, two_suites: Path):
    main, edge = two_suites / "triage.yaml", two_suites / "triage-edge.yaml"
    first = run_mir("eval", str(main), "--provider", "rules", "--update-baseline", cwd=app)
    assert first.returncode == 0, first.stdout + first.stderr
    second = run_mir("eval", str(edge), "--provider", "rules", "--update-baseline", cwd=app)
    assert second.returncode == 0, second.stdout + second.stderr  # 'big' fails in EDGE

    mine = json.loads((two_suites / "baselines" / "triage.json").read_text())
    theirs = json.loads((two_suites / "baselines" / "triage-edge.json").read_text())
    assert mine["suite"] == "capabilities/refunds/evals/triage.yaml"
    assert sorted(mine["cases"]) == ["big", "small"]
    assert mine["cases"]["big"][0]["passed"] is True
    assert theirs["suite"] == "capabilities/refunds/evals/triage-edge.yaml"
    assert sorted(theirs["cases"]) == ["big", "odd"]

    again = run_mir("eval", str(main), "--provider", "rules", "-f", "json", cwd=app)
    assert again.returncode == 0, again.stdout + again.stderr
    comparison = json.loads(again.stdout)["suites"][0]["comparison"]
    assert comparison["still_passing"] == 2 and comparison["new"] == []


def test_a_baseline_of_another_suite_is_refused_in_one_line(run_mir, app: Path, two_suites: Path):
    edge = two_suites / "triage-edge.yaml"
    made = run_mir("eval", str(edge), "--provider", "rules", "--update-baseline", cwd=app)
    assert made.returncode == 0, made.stdout + made.stderr
    baselines = two_suites / "baselines"
    shutil.copy(baselines / "triage-edge.json", baselines / "triage.json")
    for extra in ([], ["--update-baseline"]):
        result = run_mir(
            "eval", str(two_suites / "triage.yaml"), "--provider", "rules", *extra, cwd=app
        )
        assert result.returncode == 2, result.stdout + result.stderr
        [line] = result.stderr.strip().splitlines()
        assert "triage-edge.yaml" in line and str(baselines / "triage.json") in line
        assert "Traceback" not in result.stderr


def test_an_old_shared_baseline_stays_readable_by_its_own_suite(
    run_mir, app: Path, two_suites: Path
):
    # written before baselines were per suite: evals/baselines/<agent>.json, by EDGE
    edge = two_suites / "triage-edge.yaml"
    made = run_mir("eval", str(edge), "--provider", "rules", "--update-baseline", cwd=app)
    assert made.returncode == 0, made.stdout + made.stderr
    baselines = two_suites / "baselines"
    (baselines / "triage-edge.json").rename(baselines / "triage.json")
    (two_suites / "triage.yaml").unlink()
    result = run_mir("eval", str(edge), "--provider", "rules", "-f", "json", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    comparison = json.loads(result.stdout)["suites"][0]["comparison"]
    assert comparison is not None and comparison["still_failing"] == ["big"]


@pytest.mark.parametrize("target", [None, "triage.yml", "refunds.triage"])
def test_a_yaml_and_a_yml_suite_of_one_name_are_refused(run_mir, app: Path, target):
    # both mapped to baselines/triage.json: each --update-baseline replaced the other's
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(MAIN)
    (evals / "triage.yml").write_text(EDGE)
    args = [str(evals / target)] if target and target.endswith(".yml") else [target] * bool(target)
    result = run_mir("eval", *args, "--provider", "rules", "--update-baseline", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    folder = "capabilities/refunds/evals"
    assert f"{folder}/triage.yaml and {folder}/triage.yml" in line
    assert "baselines/triage.json" in line and "rename" in line
    assert not (evals / "baselines").exists()
