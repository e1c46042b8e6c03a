"""Live OTLP into a real backend: Arize Phoenix, started on 127.0.0.1 by the test (from
its own virtual env, ``make phoenix``: its dependencies would clash with mir's), receives
a flow's spans as the flow happens; Phoenix's own client reads them back with the
caller's trace id, the parent span and the ``gen_ai.*`` attributes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces.live import live_exports
from tests.integration.test_otel_live import CALLER, SURE, project

PHOENIX = Path(__file__).parents[2] / ".venv" / "phoenix" / "bin"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (PHOENIX / "phoenix").exists(), reason="Phoenix's env is missing: run `make phoenix`"
    ),
]
READ_BACK = """
import json, sys
from phoenix.client import Client
spans = Client(base_url=sys.argv[1]).spans.get_spans(
    project_identifier="default", trace_ids=[sys.argv[2]], limit=1000
)
print(json.dumps(spans, default=str))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def phoenix(tmp_path: Path):
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (tmp_path / "phoenix.log").open("w")
    server = subprocess.Popen(
        [str(PHOENIX / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert server.poll() is None, (tmp_path / "phoenix.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("Phoenix did not start: " + (tmp_path / "phoenix.log").read_text()[-2000:])
        yield url
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def read_back(url: str, trace_id: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 30
    spans: list[dict] = []
    while time.monotonic() < deadline:
        out = subprocess.run(
            [str(PHOENIX / "python"), "-c", READ_BACK, url, trace_id],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        spans = json.loads(out.stdout)
        if len(spans) >= count:
            return spans
        time.sleep(0.5)
    return spans


def test_phoenix_receives_a_flow_s_spans_live_under_the_caller_s_trace(
    tmp_path: Path, phoenix: str
):
    root = project(tmp_path, phoenix, [SURE])
    with load_agent("refunds.quick", project=root) as agent:
        record = agent.decide({"id": "PHX-1"}, traceparent=CALLER)
        trace_id = CALLER.split("-")[1]
        # read back while this process still runs: the spans left as the flow happened
        spans = read_back(phoenix, trace_id, 9)
    (live,) = live_exports()
    stats = live.close()
    assert stats["dropped"] == 0
    assert len(spans) == stats["sent"] >= 3
    (flow_root,) = [s for s in spans if s["name"] == "invoke_agent refunds.quick"]
    assert flow_root["context"]["trace_id"] == trace_id
    assert flow_root["parent_id"] == CALLER.split("-")[2]
    assert flow_root["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert flow_root["attributes"]["mir.flow_id"] == record.flow_id
    assert flow_root["status_code"] == "OK"
    chat = next(s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat")
    assert chat["attributes"]["gen_ai.provider.name"] == "scripted"
    assert chat["attributes"]["gen_ai.agent.name"] == "refunds.quick"
    assert {s["parent_id"] for s in spans if s is not flow_root} == {
        flow_root["context"]["span_id"]
    }
