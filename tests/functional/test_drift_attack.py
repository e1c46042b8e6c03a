"""`mir drift` attacked where the first pass (tests/integration/test_drift_hostile.py) did
not reach: `mir drift check` killed with SIGKILL while it suspends several agents, and a
query's own DuckDB error mistaken for a damaged trace database."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from mir.drift import tables
from mir.project import find_project
from mir.traces import TraceEvent, TraceStore
from mir.traces.domain import TraceStoreError
from tests.conftest import MIR_EXE
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
AGENTS_DIR = Path("capabilities/refunds/agents")
NAMES = [f"triage{i}" for i in range(1, 7)]
WEEK4 = ("--window", "7d", "--reference", "21d")
month = drift_month.load()


class _Renamed:
    """Appends every batch once per agent name: six agents with the same drifting month."""

    def __init__(self, traces: TraceStore, names: list[str]) -> None:
        self.traces, self.names = traces, names

    def append(self, batch: list) -> None:
        for i, name in enumerate(self.names):
            # a flow and an event of each agent are its own (ids of the same length)
            self.traces.append(
                [
                    e.model_copy(
                        update={
                            "agent": f"refunds.{name}",
                            "event_id": f"{i}{e.event_id[1:]}",
                            "flow_id": f"{i}{e.flow_id[1:]}",
                        }
                    )
                    for e in batch
                ]
            )


@pytest.fixture(scope="module")
def six_drifting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A desk whose six agents all drifted past a suspend level (built once)."""
    root = tmp_path_factory.mktemp("six") / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    # The month's synthetic flows that waited for review execute without a review event:
    # drop the refund's approvals rule, or `mir traces verify` rightly calls them short.
    contract = (root / AGENTS_DIR / "triage.yaml").read_text()
    contract = contract.replace(
        "    approvals: {roles: [support_lead], count: 1, signed: true}\n", ""
    )
    (root / AGENTS_DIR / "triage.yaml").write_text(contract)
    for name in NAMES:
        text = contract.replace("agent: triage\n", f"agent: {name}\n", 1)
        (root / AGENTS_DIR / f"{name}.yaml").write_text(text)
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(_Renamed(traces, NAMES), end=datetime.now(UTC), per_day=30)
    return root


def _states(root: Path) -> dict:
    return json.loads((root / ".mir" / "agents.json").read_text())


def _suspension_events(root: Path) -> dict[str, int]:
    with TraceStore.for_project(find_project(root)) as traces, traces.analysis() as (con, ev, _):
        routes = ev("step = 'route'")
        rows = con.execute(
            f"SELECT agent, count(*) FROM ({routes}) "
            "WHERE json_extract_string(data, '$.event') = 'agent_suspended' GROUP BY agent"
        ).fetchall()
    return dict(rows)


def _runs(root: Path) -> list[tuple[str, int, int]]:
    """(run_id, agents, rows) of every stored drift run (write, with drift's tables: the
    table may be new)."""
    store = TraceStore.for_project(find_project(root))
    with store as traces, traces.analysis(write=True, tables=tables.TABLES) as (con, _, __):
        return con.execute(
            "SELECT run_id, count(DISTINCT agent), count(*) FROM drift_metrics GROUP BY run_id"
        ).fetchall()


def _check(root: Path, *, kill_after: float | None = None) -> int | None:
    env = {**os.environ, "NO_COLOR": "1"}
    process = subprocess.Popen(
        [str(MIR_EXE), "drift", "check", *WEEK4],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if kill_after is None:
        return process.wait(timeout=120)
    time.sleep(kill_after)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return None


def test_a_full_check_suspends_all_six_once(six_drifting: Path, tmp_path: Path):
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    assert _check(root) == 1
    states = _states(root)
    assert sorted(states) == [f"refunds.{n}" for n in NAMES]
    assert _suspension_events(root) == {f"refunds.{n}": 1 for n in NAMES}


# Spread over a check's life (start-up, measuring, writing the rows, suspending).
DELAYS = (0.4, 0.9, 1.4, 1.7, 2.0, 2.2, 2.4, 2.6, 2.8, 3.1, 3.5, 4.0)


@pytest.mark.parametrize("delay", DELAYS)
def test_sigkill_mid_check_then_a_rerun_finishes_the_job(six_drifting, tmp_path, delay):
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    _check(root, kill_after=delay)
    state_file = root / ".mir" / "agents.json"
    if state_file.exists():
        for name, entry in json.loads(state_file.read_text()).items():
            assert entry["state"] == "suspended" and entry["reason"].startswith("drift: "), name
    verify = subprocess.run(
        [str(MIR_EXE), "traces", "verify"], cwd=root, capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    for _, agents, rows in _runs(root):  # a run is stored whole or not at all
        assert agents == 6 and rows % 6 == 0
    assert _check(root) == 1
    states = _states(root)
    assert sorted(states) == [f"refunds.{n}" for n in NAMES]
    assert all(e["state"] == "suspended" for e in states.values())
    # every suspension is in the trace store once: not lost, not doubled
    assert _suspension_events(root) == {f"refunds.{n}": 1 for n in NAMES}
    history = subprocess.run(
        [str(MIR_EXE), "drift", "history", "refunds.triage1"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert history.returncode == 0, history.stderr


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("SELECT error('boom')", duckdb.InvalidInputException),
        ("""SELECT json_extract('{"a": 1}', '$.a[')""", duckdb.BinderException),
    ],
)
def test_a_querys_own_error_is_not_a_corrupt_database(six_drifting, tmp_path, write, sql, error):
    # Before: any DuckDB error inside analysis() was "not a readable trace database
    # (move it aside ...)": advice to move a healthy store aside for a bad query.
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    with TraceStore.for_project(find_project(root)) as traces:
        with pytest.raises(error), traces.analysis(write=write) as (con, _, __):
            con.execute(sql).fetchall()
        traces.compact()
    db = root / ".mir" / "traces" / "traces.duckdb"
    os.truncate(db, 20_000)  # a really unreadable file still says so
    store = TraceStore.for_project(find_project(root))
    with pytest.raises(TraceStoreError, match="not a readable trace database"):  # noqa: SIM117
        with store as traces, traces.analysis() as (con, events, _):
            con.execute(f"SELECT count(*) FROM ({events()})").fetchall()


# A real `mir drift check` process that dies (SIGKILL, no cleanup) right after the state
# file says the Nth agent is suspended and before its trace event is appended: the
# narrowest window of the breaker, hit on purpose instead of by luck.
KILL_AFTER_NTH_SUSPENSION = """
import os, signal, sys
import mir.drift.suspensions as suspensions
calls = []
nth = int(sys.argv[1])
real = suspensions.suspend_agent
def suspend_then_die(*args, **kwargs):
    status = real(*args, **kwargs)
    calls.append(args[0])
    if len(calls) == nth:
        os.kill(os.getpid(), signal.SIGKILL)
    return status
suspensions.suspend_agent = suspend_then_die
from mir.cli.app import main
sys.argv = ["mir", "drift", "check", "--window", "7d", "--reference", "21d"]
main()
"""


@pytest.mark.parametrize("nth", [1, 4, 6])
def test_killed_between_suspending_and_recording_a_rerun_records_it_once(
    six_drifting, tmp_path, nth
):
    # Before: the agent stayed SUSPENDED with no `agent_suspended` trace event, and a
    # re-run skipped it (already suspended): the breaker's act was never recorded.
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    died = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_NTH_SUSPENSION, str(nth)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert len(_states(root)) == nth
    assert sum(_suspension_events(root).values()) == nth - 1
    assert _check(root) == 1
    assert _suspension_events(root) == {f"refunds.{n}": 1 for n in NAMES}
    reasons = {e["reason"] for e in _states(root).values()}
    assert all(r.startswith("drift: ") for r in reasons)
    assert _check(root) == 1  # and a third run adds nothing
    assert _suspension_events(root) == {f"refunds.{n}": 1 for n in NAMES}


def _mir(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run(
        [str(MIR_EXE), *args], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in line


def test_three_racing_checks_suspend_each_agent_once(six_drifting, tmp_path):
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    env = {**os.environ, "NO_COLOR": "1"}
    racers = [
        subprocess.Popen(
            [str(MIR_EXE), "drift", "check", *WEEK4],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for racer in racers:
        _, err = racer.communicate(timeout=120)
        assert racer.returncode == 1 and "Traceback" not in err, err
    assert _suspension_events(root) == {f"refunds.{n}": 1 for n in NAMES}
    for _, agents, rows in _runs(root):
        assert agents == 6 and rows % 6 == 0


def test_a_locked_or_truncated_database_is_one_line_and_suspends_nothing(six_drifting, tmp_path):
    # under a folder whose name says "lock": before, any DuckDB error naming the file
    # was "held open by another program", a truncated store included
    root = tmp_path / "unblocked" / "desk"
    shutil.copytree(six_drifting, root)
    assert _mir(root, "traces", "compact").returncode == 0
    db = root / ".mir" / "traces" / "traces.duckdb"
    holder = duckdb.connect(str(db))  # another program holds the write lock
    try:
        _one_line_exit_2(_mir(root, "drift", "check", *WEEK4), "held open by another program")
    finally:
        holder.close()
    os.truncate(db, db.stat().st_size // 2)
    _one_line_exit_2(_mir(root, "drift", "check", *WEEK4), "not a readable trace database")
    assert not (root / ".mir" / "agents.json").exists()
    assert db.stat().st_size > 0  # left for whoever investigates


def test_a_reference_that_is_not_saved_is_one_line(six_drifting, tmp_path):
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    assert (
        _mir(root, "drift", "snapshot", "refunds.triage1", "base", "--window", "7d").returncode == 0
    )
    done = _mir(root, "drift", "check", "refunds.triage1", "--reference", "gone")
    _one_line_exit_2(done, "no frozen reference 'gone'", "saved: base")
    assert not (root / ".mir" / "agents.json").exists()


KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"


def test_a_secret_in_a_decision_field_never_reaches_drift_output(six_drifting, tmp_path):
    root = tmp_path / "desk"
    shutil.copytree(six_drifting, root)
    now = datetime.now(UTC)
    events = []
    for i in range(80):
        at = now - (timedelta(hours=1 + i * 0.05) if i < 40 else timedelta(days=3 + i * 0.1))
        decision = {
            "action": "refund",
            "confidence": 0.9,
            "category": KEY if i < 40 else "damaged",
            KEY: "a secret as a key",
            "note": f"key {KEY}",
        }
        flow = f"secret{i:026d}"
        events += [
            TraceEvent(flow_id=flow, seq=0, step="snapshot", agent="refunds.triage1", at=at),
            TraceEvent(
                flow_id=flow,
                seq=1,
                step="final",
                agent="refunds.triage1",
                at=at,
                status="executed",
                data={"record": {"decision": decision}},
            ),
        ]
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(events)
    windows = ("--window", "24h", "--reference", "7d")
    as_json = _mir(
        root, "drift", "refunds.triage1", *windows, "--format", "json", "--html", "d.html"
    )
    table = _mir(root, "drift", "refunds.triage1", *windows, "--all")
    assert "[REDACTED]" in as_json.stdout  # the category is measured, its value is not shown
    for text in (as_json.stdout, table.stdout, (root / "d.html").read_text()):
        assert "AbCdEfGh" not in text
    with TraceStore.for_project(find_project(root)) as traces, traces.analysis() as (con, _, __):
        stored = con.execute("SELECT string_agg(metric, ' ') FROM drift_metrics").fetchone()
    assert stored and "AbCdEfGh" not in str(stored[0])
