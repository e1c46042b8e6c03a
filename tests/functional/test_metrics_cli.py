"""``--metrics`` on the long-running commands, through the real executable: ``mir
worker -j 2`` (fleet mode, one real Postgres) counts every process's decisions,
``mir review serve --metrics`` and ``mir drift watch --metrics`` serve ``/metrics``;
their address errors are one line, exit 2; ``mir`` loads no prometheus_client until it
counts."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE
from tests.support.fixtures import free_port
from tests.support.inbox import AGENT, inbox_project, pend, refund

from .test_workers import ORDER, _host, _stop, _worker

DECIDED = {"agent": AGENT, "status": "executed", "action": "refund", "source": "replay"}


def sample(text: str, name: str, **labels: str) -> float:
    """One sample's value in a Prometheus exposition (0 when absent)."""
    for line in text.splitlines():
        key, _, number = line.rpartition(" ")
        metric = key.partition("{")[0]
        if metric == name and dict(re.findall(r'(\w+)="([^"]*)"', key)) == labels:
            return float(number)
    return 0.0


def scrape(url: str, process: subprocess.Popen, wait_s: float = 60) -> str:
    """``url``'s text once the process serves it (it may still be starting)."""
    until = time.monotonic() + wait_s
    while True:
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"exited {process.returncode}:\n{out}\n{err}")
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                assert answer.status == 200
                return answer.read().decode()
        except (urllib.error.URLError, ConnectionError) as exc:
            if time.monotonic() > until:
                raise AssertionError(f"{url} never answered: {exc}") from exc
            time.sleep(0.2)


def test_the_cli_loads_no_prometheus_client_until_it_counts() -> None:
    code = (
        "import sys\n"
        "from mir.cli.app import build_app\n"
        "build_app()\n"
        "import mir.metrics, mir.workers, mir.inbox\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_bad_addresses_and_ports_in_use_are_one_line_and_exit_2(run_mir, tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    bad = "error: --metrics 'nine' is not an address to serve on (give PORT or HOST:PORT, "
    for command in (["worker"], ["drift", "watch", "--iterations", "1"]):
        result = run_mir(*command, "--metrics", "nine", cwd=root, timeout=60)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr.startswith(bad) and result.stderr.count("\n") == 1, result.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_mir("drift", "watch", "--metrics", str(port), cwd=root, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: --metrics: cannot serve on 127.0.0.1:{port} ("), (
        result.stderr
    )
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_review_serve_mounts_metrics_without_a_login(tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    pend(root, refund(), refund(25), refund(30))
    port = free_port()
    command = [str(MIR_EXE), "review", "serve", "--port", str(port), "--metrics"]
    process = subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        text = scrape(f"http://127.0.0.1:{port}/metrics", process)
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
        assert page.url.endswith("/login")  # the inbox itself still asks for a login
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert sample(text, "mir_reviews_pending") == 3
    assert sample(text, "mir_reviews_oldest_pending_age_seconds") > 0
    assert sample(text, "mir_agent_suspended", agent=AGENT) == 0
    assert f"metrics: http://127.0.0.1:{port}/metrics" in out
    assert "Traceback" not in err


def test_drift_watch_serves_metrics_with_the_suspended_agents(run_mir, tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    assert run_mir("agents", "suspend", AGENT, "--reason", "by hand", cwd=root).returncode == 0
    port = free_port()
    command = [str(MIR_EXE), "drift", "watch", "--every", "1h", "--metrics", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        text = scrape(f"http://127.0.0.1:{port}/metrics", process)
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    assert sample(text, "mir_agent_suspended", agent=AGENT) == 1
    assert sample(text, "mir_agent_suspended", agent="refunds.quick") == 0
    assert f"metrics: http://127.0.0.1:{port}/metrics" in err
    assert "Traceback" not in err


@pytest.mark.fleet
@pytest.mark.slow
def test_a_worker_with_two_processes_counts_every_decision_of_both(
    pg_url, tmp_path: Path, monkeypatch
) -> None:
    from mir.runtime import load_agent

    root = _host(tmp_path)
    monkeypatch.setenv("MIR_STORE_URL", pg_url)  # for the agents submitting here
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    port = free_port()
    worker = _worker(pg_url, root, AGENT, "-j", "2", "--metrics", str(port), TMPDIR=str(scratch))
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        with (
            load_agent(AGENT, project=root, provider="rules", watch_models=False) as agent,
            load_agent("refunds.quick", project=root, provider="rules", watch_models=False) as idle,
        ):
            first_ids = [agent.submit(ORDER) for _ in range(4)]
            assert {agent.result(i, timeout=60).status for i in first_ids} == {"executed"}
            waiting = [idle.submit({"id": f"Q-{n}"}) for n in range(3)]  # no worker takes them
            first = scrape(url, worker)
            more = [agent.submit(ORDER) for _ in range(6)]
            assert {agent.result(i, timeout=60).status for i in more} == {"executed"}
            second = scrape(url, worker)
            assert all(idle.deps.submissions.queued(i) for i in waiting)
        assert list(scratch.iterdir()), "the processes count in a folder under $TMPDIR"
    finally:
        code, out, err = _stop(worker)
    assert code == 0, err
    assert f"metrics at {url}" in out
    assert sample(first, "mir_decisions_total", **DECIDED) == 4
    assert sample(second, "mir_decisions_total", **DECIDED) == 10
    assert sample(second, "mir_decision_latency_seconds_count", agent=AGENT, source="replay") == 10
    assert sample(second, "mir_queue_depth", agent="refunds.quick") == 3
    assert sample(second, "mir_queue_depth", agent=AGENT) == 0
    assert not list(scratch.iterdir()), "the multiprocess folder is removed when it stops"
