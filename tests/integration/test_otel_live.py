"""Live OTLP export: a flow's spans reach an OTLP/HTTP receiver (protobuf decoded) as the
flow happens, under the caller's W3C trace, with the GenAI attributes and the same ids
``mir traces export --format otlp`` writes; an endpoint that refuses, fails or is slow
costs counted drops and never a decision."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces import TraceStore
from mir.traces.exporters import otlp_request
from mir.traces.live import live_exports
from tests.support.otlp_receiver import otlp_receiver, refused_url

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SURE = {"action": "approve", "confidence": 0.95, "note": "fine"}
UNSURE = {"action": "approve", "confidence": 0.3, "note": "maybe"}


@pytest.fixture(autouse=True)
def _no_export_left_running():
    yield
    for live in live_exports():
        live.close(timeout_s=0.5)


def project(tmp_path: Path, endpoint: str, answers: list[dict], timeout_s: float = 2.0) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "quick.jsonl").write_text("".join(json.dumps(json.dumps(a)) + "\n" for a in answers))
    with (root / "pyproject.toml").open("a") as f:
        f.write(f'\n[tool.mir.otel]\nendpoint = "{endpoint}"\ntimeout_s = {timeout_s}\n')
    return root


def close_exports() -> dict:
    (live,) = live_exports()
    return live.close()


def stored(root: Path, flow_id: str):
    with TraceStore(root / ".mir" / "traces") as store:
        return store.flow(flow_id)


def test_a_flow_s_spans_arrive_live_under_the_caller_s_trace(tmp_path: Path):
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [SURE])
        with load_agent("refunds.quick", project=root) as agent:
            record = agent.decide({"id": "A-1"}, traceparent=CALLER)
            events = stored(root, record.flow_id)
            spans = rx.wait_for(len(events) + 1)  # live: before the process closes
        assert record.status == "executed"
        stats = close_exports()
    assert stats["sent"] == len(events) + 1 and stats["dropped"] == 0
    by_name = {s["name"]: s for s in spans}
    flow_root = by_name["invoke_agent refunds.quick"]
    assert flow_root["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert flow_root["parent_id"] == "00f067aa0ba902b7"  # a child of the caller's span
    assert flow_root["attributes"]["mir.flow_id"] == record.flow_id
    assert flow_root["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert flow_root["resource"]["service.name"] == "mir"
    chat = next(s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat")
    assert chat["attributes"]["gen_ai.provider.name"] == "scripted"
    assert chat["attributes"]["gen_ai.agent.name"] == "refunds.quick"
    assert chat["kind"] == 3  # SPAN_KIND_CLIENT
    for span in spans:
        assert span["trace_id"] == flow_root["trace_id"]
        assert span["attributes"]["mir.flow_id"] == record.flow_id
        if span is not flow_root:
            assert span["parent_id"] == flow_root["span_id"]
    # the same ids as the file export: a backend given both dedupes
    written = otlp_request(events)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert {s["spanId"] for s in written} == {s["span_id"] for s in spans}
    assert {s["traceId"] for s in written} == {flow_root["trace_id"]}


def test_without_a_caller_the_trace_is_the_flow_s_own_and_show_prints_it(tmp_path: Path):
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [SURE])
        with load_agent("refunds.quick", project=root) as agent:
            record = agent.decide({"id": "A-2"})
        close_exports()
    trace_ids = {s["trace_id"] for s in rx.spans}
    assert len(trace_ids) == 1 and "4bf92f35" not in next(iter(trace_ids))
    (root_span,) = [s for s in rx.spans if s["parent_id"] is None]
    assert root_span["attributes"]["mir.flow_id"] == record.flow_id
    shown = subprocess.run(
        [sys.executable, "-m", "mir", "traces", "show", record.flow_id, "--project", str(root)],
        capture_output=True, text=True, env={**os.environ, "OTEL_SDK_DISABLED": "true"},
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert f"trace {next(iter(trace_ids))} (its own trace)" in shown.stdout


def test_the_current_opentelemetry_span_is_the_parent(tmp_path: Path):
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("an app")
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [SURE])
        with load_agent("refunds.quick", project=root) as agent:
            with tracer.start_as_current_span("POST /refunds") as request:
                record = agent.decide({"id": "A-3"})
            caller = request.get_span_context()
        close_exports()
    (flow_root,) = [s for s in rx.spans if s["name"] == "invoke_agent refunds.quick"]
    assert flow_root["trace_id"] == f"{caller.trace_id:032x}"
    assert flow_root["parent_id"] == f"{caller.span_id:016x}"
    assert flow_root["attributes"]["mir.flow_id"] == record.flow_id


def test_an_invalid_traceparent_is_ignored_by_the_library_and_refused_by_the_cli(
    tmp_path: Path,
):
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [SURE, SURE])
        with load_agent("refunds.quick", project=root) as agent:
            record = agent.decide({"id": "A-4"}, traceparent="00-ZZ-nope-01")
        close_exports()
    assert record.status == "executed"
    assert all(s["parent_id"] != "nope" for s in rx.spans)
    cli = subprocess.run(
        [sys.executable, "-m", "mir", "run", "agent", "refunds.quick", "--input", '{"id": "B"}',
         "--traceparent", "00-ZZ-nope-01", "--project", str(root)],
        capture_output=True, text=True, env={**os.environ, "OTEL_SDK_DISABLED": "true"},
    )  # fmt: skip
    assert cli.returncode == 2
    assert "--traceparent" in cli.stderr and "Traceback" not in cli.stderr


@pytest.mark.parametrize("endpoint", ["refused", "503", "slow"])
def test_an_endpoint_down_costs_counted_drops_never_a_decision(tmp_path: Path, endpoint: str):
    status, delay = {"refused": (200, 0), "503": (503, 0), "slow": (200, 3.0)}[endpoint]
    with otlp_receiver(status=status, delay_s=delay) as rx:
        url = refused_url() if endpoint == "refused" else rx.url
        root = project(tmp_path, url, [SURE] * 100, timeout_s=0.5)
        with load_agent("refunds.quick", project=root) as agent:
            records = [agent.decide({"id": f"D-{i}"}) for i in range(100)]
        stats = close_exports()
    assert [r.status for r in records] == ["executed"] * 100
    expected = sum(len(stored(root, r.flow_id)) + 1 for r in records)
    assert stats["sent"] == 0
    assert stats["dropped"] == expected  # every span is accounted for
    if endpoint != "slow":  # a slow one may keep a post mir gave up on: still a drop
        assert rx.spans == []


def test_a_flow_approved_by_another_process_continues_the_caller_s_trace(tmp_path: Path):
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [UNSURE])
        with load_agent("refunds.quick", project=root) as agent:
            record = agent.decide({"id": "P-1"}, traceparent=CALLER, requested_by="asker")
        close_exports()
        assert record.status == "pending_review"
        before = len(rx.spans)
        approved = subprocess.run(
            [sys.executable, "-m", "mir", "approve", record.flow_id, "--by", "reviewer",
             "--project", str(root)],
            capture_output=True, text=True, env={**os.environ, "MIR_USER": "reviewer"},
        )  # fmt: skip
        assert approved.returncode == 0, approved.stderr
        later = rx.wait_for(len(stored(root, record.flow_id)) + 1)[before:]
    assert later, "the approving process sent no span"
    assert {s["trace_id"] for s in later} == {"4bf92f3577b34da6a3ce929d0e0e4736"}
    roots = [s for s in rx.spans if s["name"] == "invoke_agent refunds.quick"]
    assert len(roots) == 1  # the approving process adds spans, not a second root
    assert {s["parent_id"] for s in later} == {roots[0]["span_id"]}


def test_a_secret_never_reaches_the_endpoint(tmp_path: Path, monkeypatch):
    secret = "sk-live-7f3a9c2e1b4d6f8a0c2e4b6d8f0a1c3e"
    monkeypatch.setenv("PAYMENTS_API_KEY", secret)
    with otlp_receiver() as rx:
        root = project(tmp_path, rx.url, [{**SURE, "note": f"key {secret}"}])
        with load_agent("refunds.quick", project=root) as agent:
            agent.decide({"id": secret})
        close_exports()
    assert rx.spans
    assert secret not in json.dumps(rx.spans)
