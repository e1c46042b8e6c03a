"""The breaker writes the agent state first (the brake), then its `agent_suspended` trace
event. A check killed between the two leaves the agent suspended with no event: the next
check records the event once, and checks racing to do so record it once between them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from mir.drift import WindowOptions, check
from mir.project import find_project
from mir.runtime import resume_agent, suspend_agent
from mir.traces import TraceStore
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
ROOT = Path(__file__).parents[2]
AGENT = "refunds.triage"
OPTIONS = WindowOptions(window="7d", reference="21d", now=datetime(2026, 11, 1, tzinfo=UTC))


def desk(folder: Path) -> Path:
    root = folder / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return root


def killed_between(root: Path, reason: str) -> None:
    """The state a check killed after its brake and before its event leaves."""
    suspend_agent(AGENT, project=root, reason=reason, by="mir drift")


def suspension_events(root: Path) -> list[tuple[str | None, bool]]:
    with (
        TraceStore.for_project(find_project(root)) as traces,
        traces.analysis() as (con, events, _),
    ):
        routes = events("step = 'route'")
        rows = con.execute(
            "SELECT json_extract_string(data, '$.reason'), "
            "coalesce(json_extract(data, '$.recovered')::BOOLEAN, false) "
            f"FROM ({routes}) "
            "WHERE json_extract_string(data, '$.event') = 'agent_suspended' ORDER BY \"at\""
        ).fetchall()
    return [(reason, recovered) for reason, recovered in rows]


def test_the_next_check_records_the_missing_event_once(tmp_path):
    root = desk(tmp_path)
    killed_between(root, "drift: confidence.ks = 0.41 >= 0.3")
    report = check(root, options=OPTIONS)
    assert any("left unrecorded" in note for note in report.notes)
    assert suspension_events(root) == [("drift: confidence.ks = 0.41 >= 0.3", True)]
    again = check(root, options=OPTIONS)
    assert not any("left unrecorded" in note for note in again.notes)
    assert len(suspension_events(root)) == 1


# Each check is slow to write its event (as a descheduled process is): the window in
# which another check could read "missing" too is 0.4 s wide, not a few ms.
_CHECK = """
import sys, time
from datetime import UTC, datetime
from mir.drift import WindowOptions, check, suspensions
write = suspensions._trace_suspension
def slow(*args, **kwargs):
    time.sleep(0.4)
    write(*args, **kwargs)
suspensions._trace_suspension = slow
options = WindowOptions(window="7d", reference="21d", now=datetime(2026, 11, 1, tzinfo=UTC))
report = check(sys.argv[1], options=options)
print(sum("left unrecorded" in note for note in report.notes))
"""


def test_checks_racing_to_record_it_write_it_once(tmp_path):
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:  # it had decisions
        drift_month.load().write_month(traces, end=OPTIONS.now, days=2, per_day=20)
    # ROOT first, then what the caller set (make test-duckdb2 puts DuckDB 2 there)
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    for round_ in range(3):
        reason = f"drift: action.js = 0.{round_ + 2} >= 0.2"
        killed_between(root, reason)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _CHECK, str(root)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
            )
            for _ in range(3)
        ]
        said = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode in (0, 1), err
            said.append(int(out.strip().splitlines()[-1]))
        assert sum(said) == 1, said  # one of them recorded it, and says so
        mine = [e for e in suspension_events(root) if e[0] == reason]
        assert mine == [(reason, True)], mine
        resume_agent(AGENT, project=root)
