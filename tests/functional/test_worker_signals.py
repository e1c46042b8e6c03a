"""``mir worker`` stops on SIGINT / SIGTERM whenever it comes, its start included: real
subprocesses on a real Postgres. A signal that reached a worker process while it started
used to raise KeyboardInterrupt at a random point (a lock left held, a task that would
not cancel) and the process never exited: about one Ctrl-C in seven right after it said
``watching``."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest

from .test_workers import _host, _worker

pytestmark = [pytest.mark.fleet, pytest.mark.slow]


def _watching(proc: subprocess.Popen[str]) -> None:
    """Wait for the first line (the worker's checks passed, its processes start)."""
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert "watching" in line, (line, proc.poll())


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_stop_signal_while_the_workers_start_stops_them_cleanly(pg_url, tmp_path, jobs, sig):
    root = _host(tmp_path)
    rng = random.Random(f"{jobs}{sig}")
    for _ in range(6):
        proc = _worker(pg_url, root, "refunds.triage", "-j", jobs)
        try:
            _watching(proc)
            time.sleep(rng.choice([0, 0, 0.01, 0.05, 0.2]))
            os.killpg(proc.pid, sig)
            _out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert proc.returncode == 0, err
        assert "Traceback" not in err, err


def test_a_second_signal_stops_at_once_and_says_so(pg_url, tmp_path):
    root = _host(tmp_path)
    proc = _worker(pg_url, root, "refunds.triage")
    try:
        _watching(proc)
        time.sleep(1.0)  # its loop handler is in place
        os.killpg(proc.pid, signal.SIGINT)
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "Traceback" not in err, err
    if proc.returncode == 130:  # the second came before the graceful stop was over
        assert "stopped at once" in err
    else:
        assert proc.returncode == 0, err
