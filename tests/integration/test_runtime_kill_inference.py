"""A `mir run agent` process SIGKILLed while the model is thinking: the flow is not lost.

The model is a loopback HTTP server that accepts the request and never answers (a slow
remote model, reached through the real litellm route). The snapshot is written before
the call, so after the kill the store holds the flow: its input, its world, its hash.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
MIR = Path(sys.executable).parent / "mir"
INPUT = json.dumps({"order_id": "A1", "amount": 40, "message": "arrived broken"})

pytestmark = pytest.mark.slow


class SilentModel:
    """Accepts connections, reads the request, never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.asked = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            conn.settimeout(5)
            try:
                if conn.recv(65536):
                    self.asked.set()
            except OSError:
                pass

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def model() -> Iterator[SilentModel]:
    server = SilentModel()
    yield server
    server.close()


@pytest.fixture
def app(tmp_path: Path, model: SilentModel) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    contract = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text().replace(
        "api_base: http://127.0.0.1:9/v1",
        f"api_base: http://127.0.0.1:{model.port}/v1\n    timeout_s: 600",
    )
    contract.write_text(text)
    return root


def mir(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run(
        [str(MIR), *args], cwd=root, env=env, text=True, capture_output=True, timeout=120
    )


def test_a_flow_killed_during_inference_keeps_its_snapshot(app: Path, model: SilentModel):
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "sk-test-not-a-secret"}
    proc = subprocess.Popen(
        [str(MIR), "run", "agent", "refunds.triage", "-i", INPUT, "--provider", "litellm"],
        cwd=app,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while not model.asked.is_set():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the model was never called"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # mid-inference: no final event can be written
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    listed = mir(app, "traces", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (flow,) = json.loads(listed.stdout)
    events = json.loads(mir(app, "traces", "show", flow["flow_id"], "--json").stdout)
    assert [e["step"] for e in events] == ["snapshot"]
    snapshot = events[0]["data"]
    assert snapshot["input"]["order_id"] == "A1" and snapshot["context"] == {"order_total": 80}
    assert snapshot["context_source"] == "loader" and len(snapshot["state_hash"]) == 64
    # What `traces list` says of a flow that never finished (reported, not asserted on
    # a particular word: the traces capability owns the status vocabulary).
    print("traces list shows:", flow["status"], flow["steps"])
