"""Small things `mir drift` got wrong for a newcomer, through the real executable: "OK"
over metrics that had too few decisions to judge, metric names cut and 64-character
hashes on a 120-column terminal, a watch tick without its time, inverted levels and
misspelt metric names accepted or unexplained, rates as fractions in the HTML."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support.drift_flows import decision_flow, desk

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
OLD, NEW = "a1" * 32, "b2" * 32  # contract hashes as the runtime writes them (sha256)
CONTRACT = "capabilities/refunds/agents/triage.yaml"


def _mir(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MIR_EXE), *args],
        cwd=root,
        env={**os.environ, "NO_COLOR": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _store(root: Path, per_side: int, *, change: bool = True) -> None:
    """``per_side`` decisions in the reference week and as many in the current day, the
    contract's hash changed between them (``change``); action, amount and confidence
    shifted."""
    now = datetime.now(UTC)
    events = []
    for i in range(2 * per_side):
        current = i >= per_side
        at = now - (timedelta(hours=20) if current else timedelta(days=3)) + timedelta(seconds=i)
        decision = {
            "action": "refund" if current or i % 2 else "reject",
            "amount": (60.0 if current else 10.0) + i % 13,
            "confidence": 0.99 if current else 0.5 + (i % 40) / 100,
        }
        events += decision_flow(
            f"cut{i:029d}",
            "refunds.triage",
            at,
            {"decision": decision, "latency_ms": 100.0, "tokens": 10},
            contract=NEW if current and change else OLD,
            prompts=["c3" * 32],
            status="executed",
            provider="llama",
            model="m",
        )
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(events)


@pytest.fixture
def small(tmp_path: Path) -> Path:
    root = desk(tmp_path)
    _store(root, 20, change=False)
    return root


@pytest.fixture
def large(tmp_path: Path) -> Path:
    root = desk(tmp_path)
    _store(root, 250)
    return root


def test_too_few_decisions_is_not_enough_data_not_ok(small: Path, tmp_path: Path):
    page = tmp_path / "drift.html"
    shown = _mir(small, "drift", "--window", "1d", "--reference", "7d", "--html", str(page))
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert "refunds.triage  NOT ENOUGH DATA  current 1d (20 decisions)" in head, head
    assert "none moved" not in shown.stdout and "not enough data" in shown.stdout
    html = page.read_text()
    assert "NOT ENOUGH DATA" in html and ">OK<" not in html and "#1e8449'>OK" not in html


def test_a_120_column_terminal_keeps_metric_names_whole_and_hashes_short(large: Path):
    args = ("drift", "--window", "1d", "--reference", "7d")
    as_json = json.loads(_mir(large, *args, "--format", "json").stdout)
    [agent] = as_json["agents"]
    moved = [m["metric"] for m in agent["metrics"] if m["verdict"] in ("warn", "suspend")]
    assert "change.contract" in moved and any(m.startswith("field.") for m in moved)
    table = _mir(large, *args, TTY_COMPATIBLE="1", COLUMNS="120")
    text = ANSI.sub("", table.stdout)
    assert max(len(line) for line in text.splitlines()) <= 120
    names = {cell.strip() for line in text.splitlines() for cell in line.split("│")[:1]}
    for metric in moved:
        assert metric in names, (metric, text)
    assert NEW not in text and NEW[:12] in text  # the new contract, by 12 characters
    assert not re.search(r"[0-9a-f]{20,}", text)


def test_each_watch_tick_starts_with_its_time(small: Path):
    watched = _mir(small, "drift", "watch", "--every", "1s", "--iterations", "2", "--window", "1d")
    assert watched.returncode == 0, watched.stderr
    ticks = re.findall(r"^-- check at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC$", watched.stdout, re.M)
    assert len(ticks) == 2 and ticks[0] <= ticks[1]


@pytest.mark.parametrize(
    ("drift", "message"),
    [
        (
            "drift:\n  thresholds:\n    action.js: {warn: 0.5, suspend: 0.2}\n",
            "warn 0.5 is above suspend 0.2: a metric would suspend the agent before it warns",
        ),
        (
            "drift:\n  thresholds:\n    confidence.kss: {warn: 0.1}\n",
            "unknown drift metric(s) 'confidence.kss'; did you mean 'confidence.ks'?",
        ),
        (
            "drift:\n  thresholds:\n    field.amount.wasserstien: {warn: 1}\n",
            "did you mean 'field.amount.wasserstein'?",
        ),
    ],
    ids=["inverted-levels", "misspelt-metric", "misspelt-statistic"],
)
def test_bad_levels_are_one_line_exit_2_with_a_suggestion(small: Path, drift: str, message: str):
    contract = small / CONTRACT
    text = contract.read_text()
    contract.write_text(text + drift)
    done = _mir(small, "drift")
    assert done.returncode == 2, done.stdout
    [line] = done.stderr.strip().splitlines()
    assert message in line and "triage.yaml:" in line, line


def test_the_html_shows_rates_as_the_cli_does(large: Path, tmp_path: Path):
    page = tmp_path / "drift.html"
    args = ("drift", "--window", "1d", "--reference", "7d", "--all")
    table = _mir(large, *args, "--html", str(page), COLUMNS="200")
    [row] = [line for line in table.stdout.splitlines() if "rate.review_requested" in line]
    cli = [cell.strip() for cell in row.split("│")]
    html = page.read_text()
    found = re.search(r"<tr><td>rate\.review_requested</td><td>([^<]*)</td><td>([^<]*)</td>", html)
    assert found is not None
    assert list(found.groups()) == cli[1:3] and cli[1].endswith("%")
