"""The breaker through the real executable: a resume starts a new window (the decisions
the agent was suspended for never suspend it again), and a slow alert endpoint never
holds the check (every agent is suspended first; each alert has a total deadline)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support import drift_month
from tests.support.drift_flows import desk

WEEK4 = ("--window", "7d", "--reference", "21d")
AGENTS_DIR = Path("capabilities/refunds/agents")
month = drift_month.load()


def _mir(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [str(MIR_EXE), *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout
    )


def _states(root: Path) -> dict:
    path = root / ".mir" / "agents.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture(scope="module")
def drifting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = desk(tmp_path_factory.mktemp("breaker"))
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=datetime.now(UTC), per_day=30)
    TraceStore.for_project(find_project(root)).compact()
    return root


def _after(root: Path, since: datetime, count: int) -> None:
    """``count`` week-4 (drifted) decisions, one millisecond apart from ``since``."""
    rng = random.Random(11)
    with TraceStore.for_project(find_project(root)) as traces:
        for i in range(count):
            at = since + timedelta(milliseconds=i)
            traces.append(month.flow_events(rng, at, month.WEEK4))


@pytest.mark.parametrize("window", [WEEK4, ("--last", "200")], ids=["time", "last-n"])
def test_a_resume_starts_a_new_window(drifting: Path, tmp_path: Path, window):
    """After `mir drift check` suspended an agent and an operator resumed it, the next
    check suspended it again on the same pre-resume decisions: a resume lasted one tick."""
    root = tmp_path / "desk"
    shutil.copytree(drifting, root)
    first = _mir(root, "drift", "check", *window)
    assert first.returncode == 1, first.stderr
    assert _states(root)["refunds.triage"]["state"] == "suspended"
    assert _mir(root, "agents", "resume", "triage").returncode == 0
    resumed_at = datetime.fromisoformat(_states(root)["refunds.triage"]["at"])
    # the next checks: the decisions since the resume are too few to judge
    for _ in range(2):
        again = _mir(root, "drift", "check", *window, "--format", "json")
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr
        assert _states(root)["refunds.triage"]["state"] == "active"
        [agent] = json.loads(again.stdout)["agents"]
        assert agent["current"]["decisions"] == 0
        assert "since resumed" in agent["current"]["label"]
        assert not [m for m in agent["metrics"] if m["verdict"] in ("warn", "suspend")]
    table = _mir(root, "drift", *window)
    assert "not enough data" in table.stdout and "since resumed" in table.stdout
    # enough new decisions that still drift: the breaker trips again, on them alone (the
    # resume moved an hour back, so that every one of them has ended by the check)
    states = _states(root)
    resumed_at -= timedelta(hours=1)
    states["refunds.triage"]["at"] = resumed_at.isoformat()
    (root / ".mir" / "agents.json").write_text(json.dumps(states))
    _after(root, resumed_at + timedelta(minutes=1), 250)
    tripped = _mir(root, "drift", "check", *window, "--format", "json")
    assert tripped.returncode == 1, tripped.stderr
    [agent] = json.loads(tripped.stdout)["agents"]
    assert 200 <= agent["current"]["decisions"] <= 260
    assert _states(root)["refunds.triage"]["state"] == "suspended"


# -- a slow alert endpoint ---------------------------------------------------------------


class _Trickle(BaseHTTPRequestHandler):
    """Reads the alert, then answers one byte every 2 s (each read within timeout_s)."""

    hits: list[float] = []  # noqa: RUF012 (shared by the server's threads)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        _Trickle.hits.append(time.monotonic())
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        self.wfile.flush()
        try:
            for _ in range(1000):
                time.sleep(2)
                self.wfile.write(b"x")
                self.wfile.flush()
        except OSError:
            return

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def trickle():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    _Trickle.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/drift"
    server.shutdown()
    server.server_close()


def _two_drifting(drifting: Path, root: Path) -> None:
    """``drifting``'s desk with a second agent, triage2, drifting the same way."""
    shutil.copytree(drifting, root, ignore=shutil.ignore_patterns("traces"))
    contract = (root / AGENTS_DIR / "triage.yaml").read_text()
    (root / AGENTS_DIR / "triage2.yaml").write_text(
        contract.replace("agent: triage\n", "agent: triage2\n", 1)
    )
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=datetime.now(UTC), per_day=30)
        month.write_month(
            _Renamed(traces, "refunds.triage2"), end=datetime.now(UTC), per_day=30, seed=8
        )


def test_a_resume_starts_a_new_window_for_that_agent_only(drifting: Path, tmp_path: Path):
    root = tmp_path / "desk"
    _two_drifting(drifting, root)
    assert _mir(root, "agents", "suspend", "triage", "--reason", "by hand").returncode == 0
    assert _mir(root, "agents", "resume", "triage").returncode == 0
    done = _mir(root, "drift", "check", *WEEK4, "--format", "json")
    assert done.returncode == 1, done.stderr
    states = _states(root)
    assert states["refunds.triage"]["state"] == "active"
    assert states["refunds.triage2"]["state"] == "suspended"
    labels = {a["agent"]: a["current"]["label"] for a in json.loads(done.stdout)["agents"]}
    assert "since resumed" in labels["refunds.triage"] and labels["refunds.triage2"] == "7d"


@pytest.mark.parametrize(
    "at", ["yesterday", "2026-12-01T10:00:00", None, ""], ids=["garbage", "naive", "null", "empty"]
)
def test_a_hand_edited_resume_time_is_never_fatal(drifting: Path, tmp_path: Path, at):
    root = tmp_path / "desk"
    shutil.copytree(drifting, root)
    (root / ".mir").mkdir(exist_ok=True)
    state = {"state": "active", "reason": None, "by": "someone", "at": at}
    (root / ".mir" / "agents.json").write_text(json.dumps({"refunds.triage": state}))
    done = _mir(root, "drift", "check", *WEEK4)
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1


def test_a_slow_alert_endpoint_never_holds_the_breaker(drifting: Path, tmp_path: Path, trickle):
    """A webhook answering one byte every 2 s held `mir drift check` forever, and the next
    agent past its suspend level was never suspended."""
    root = tmp_path / "desk"
    _two_drifting(drifting, root)
    names = ("triage", "triage2")
    with (root / "pyproject.toml").open("a") as f:
        f.write(f'\n[tool.mir.alerts]\nwebhook = "{trickle}"\ntimeout_s = 3\n')
    started = time.monotonic()
    done = _mir(root, "drift", "check", *WEEK4, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    states = _states(root)
    assert {states[f"refunds.{n}"]["state"] for n in names} == {"suspended"}
    assert len(_Trickle.hits) == 2  # both alerts were sent, each cut at its deadline
    assert took < 20, f"{took:.1f} s"
    assert (done.stdout + done.stderr).count("no full answer within 3 s") == 2


class _Renamed:
    """Appends every batch as another agent's (another seed: its own flow ids)."""

    def __init__(self, traces: TraceStore, agent: str) -> None:
        self.traces, self.agent = traces, agent

    def append(self, batch: list) -> None:
        self.traces.append([e.model_copy(update={"agent": self.agent}) for e in batch])
