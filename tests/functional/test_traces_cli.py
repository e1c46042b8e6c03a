"""``mir traces`` end to end: the real executable over traces seeded with the Python API."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from mir.traces import TraceEvent, TraceStore

NOW = datetime.now(UTC)


def seeded_flow(flow_id: str, agent: str, status: str, at: datetime) -> list[TraceEvent]:
    return [
        TraceEvent(event_id=f"{flow_id}-0", flow_id=flow_id, seq=0, step="snapshot", agent=agent,
                   at=at, data={"ticket": 42}),
        TraceEvent(event_id=f"{flow_id}-1", flow_id=flow_id, seq=1, step="infer", agent=agent,
                   at=at + timedelta(milliseconds=300), provider="llama", model="smollm2-135m",
                   prompt_hash="9f2c0e4d1a7b55aa", prompt_version="v3", prompt_tokens=120,
                   completion_tokens=31, cost_usd=0.0012, latency_ms=310.25,
                   data={"decision": {"action": "refund", "confidence": 0.82}}),
        TraceEvent(event_id=f"{flow_id}-2", flow_id=flow_id, seq=2, step="validate", agent=agent,
                   at=at + timedelta(milliseconds=305), reasons=("schema_ok", "limit_ok"),
                   latency_ms=1.5),
        TraceEvent(event_id=f"{flow_id}-3", flow_id=flow_id, seq=3, step="final", agent=agent,
                   at=at + timedelta(milliseconds=320), status=status, latency_ms=4.0),
    ]  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\n\n[tool.mir]\n')
    store = TraceStore(tmp_path / ".mir" / "traces", environ={})
    store.append(seeded_flow("a1b2c3d4", "triage", "executed", NOW - timedelta(days=3)))
    store.append(seeded_flow("a1ffee00", "triage", "pending_review", NOW - timedelta(minutes=5)))
    store.append(seeded_flow("b7c8d9e0", "billing", "rejected", NOW - timedelta(minutes=1)))
    store.close()
    return tmp_path


def flows_json(run_mir, project: Path, *args: str) -> list[str]:
    result = run_mir("traces", "list", "--json", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return [flow["flow_id"] for flow in json.loads(result.stdout)]


def test_list_shows_every_flow_newest_first(run_mir, project):
    result = run_mir("traces", "list", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["b7c8d9e0", "a1ffee00", "a1b2c3d4"]
    assert "pending_review" in result.stdout and "refund" in result.stdout


def test_list_filters(run_mir, project):
    assert flows_json(run_mir, project, "--agent", "triage") == ["a1ffee00", "a1b2c3d4"]
    assert flows_json(run_mir, project, "--status", "rejected") == ["b7c8d9e0"]
    assert flows_json(run_mir, project, "--since", "1h") == ["b7c8d9e0", "a1ffee00"]
    assert flows_json(run_mir, project, "--limit", "1") == ["b7c8d9e0"]


def test_list_json_carries_the_summary(run_mir, project):
    result = run_mir("traces", "list", "--json", "--agent", "billing", cwd=project)
    [flow] = json.loads(result.stdout)
    assert flow["status"] == "rejected"
    assert (flow["steps"], flow["tokens"], flow["model"]) == (4, 151, "smollm2-135m")
    assert flow["cost_usd"] == pytest.approx(0.0012)
    assert flow["latency_ms"] == pytest.approx(315.75)


def test_show_prints_every_step(run_mir, project, snapshot):
    result = run_mir("traces", "show", "b7c8", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot


def test_show_json_lists_the_events(run_mir, project):
    result = run_mir("traces", "show", "a1b2c3d4", "--json", cwd=project)
    events = json.loads(result.stdout)
    assert [e["step"] for e in events] == ["snapshot", "infer", "validate", "final"]
    assert events[1]["data"] == {"decision": {"action": "refund", "confidence": 0.82}}


@pytest.mark.parametrize(
    ("flow_id", "message"),
    [("zzz", "error: no flow 'zzz'"), ("a1", "error: flow id prefix 'a1' is ambiguous")],
)
def test_show_of_an_unknown_or_ambiguous_flow_is_a_usage_error(run_mir, project, flow_id, message):
    result = run_mir("traces", "show", flow_id, cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_compact_folds_segments_and_reading_still_works(run_mir, project):
    result = run_mir("traces", "compact", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("compacted 1 segment(s), 12 event line(s)")
    assert not list((project / ".mir" / "traces" / "segments").glob("*.jsonl"))
    assert len(flows_json(run_mir, project)) == 3


def test_export_json_lines(run_mir, project):
    result = run_mir("traces", "export", "--format", "json", cwd=project)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(events) == 12
    assert len({e["event_id"] for e in events}) == 12


def test_export_parquet(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    out = project / "traces.parquet"
    result = run_mir("traces", "export", "-f", "parquet", "-o", str(out), cwd=project)
    assert result.returncode == 0, result.stderr
    rows = duckdb.sql(f"SELECT flow_id, step, cost_usd FROM '{out}' WHERE step = 'infer'")
    assert sorted(r[0] for r in rows.fetchall()) == ["a1b2c3d4", "a1ffee00", "b7c8d9e0"]


def test_export_parquet_needs_a_file(run_mir, project):
    result = run_mir("traces", "export", "-f", "parquet", cwd=project)
    assert result.returncode == 2
    assert "--output" in result.stderr


def test_export_otlp_uses_the_genai_conventions(run_mir, project):
    out = project / "spans.json"
    result = run_mir("traces", "export", "-f", "otlp", "-o", str(out), cwd=project)
    assert result.returncode == 0, result.stderr
    spans = json.loads(out.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == 3 + 12  # one root span per flow, one span per event
    [chat] = [
        s for s in spans if s["name"] == "chat smollm2-135m" and s["traceId"] == spans[0]["traceId"]
    ]
    attributes = {a["key"]: a["value"] for a in chat["attributes"]}
    assert attributes["gen_ai.operation.name"] == {"stringValue": "chat"}
    assert attributes["gen_ai.request.model"] == {"stringValue": "smollm2-135m"}
    assert attributes["gen_ai.usage.input_tokens"] == {"intValue": "120"}
    assert int(chat["endTimeUnixNano"]) - int(chat["startTimeUnixNano"]) == 310_250_000


def test_verify_passes_on_untouched_traces(run_mir, project):
    result = run_mir("traces", "verify", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: 12 line(s) in 1 segment(s) verified")


def test_verify_detects_an_edited_segment_line(run_mir, project):
    [segment] = (project / ".mir" / "traces" / "segments").glob("*.jsonl")
    segment.write_text(segment.read_text().replace('"cost_usd":0.0012', '"cost_usd":0.0', 1))
    result = run_mir("traces", "verify", cwd=project)
    assert result.returncode == 1
    assert "edited after writing" in result.stdout
    assert "TAMPERED: 1 break(s)" in result.stdout


def test_verify_detects_an_edit_inside_the_database(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    con = duckdb.connect(str(project / ".mir" / "traces" / "traces.duckdb"))
    con.execute("UPDATE events SET status = 'executed' WHERE flow_id = 'b7c8d9e0' AND seq = 3")
    con.execute("DELETE FROM events WHERE flow_id = 'a1ffee00' AND seq = 0")
    con.close()
    result = run_mir("traces", "verify", cwd=project)
    assert result.returncode == 1
    assert "edited after writing" in result.stdout
    assert "missing" in result.stdout


def test_a_corrupt_database_is_one_line_and_exit_2(run_mir, project):
    (project / ".mir" / "traces" / "traces.duckdb").write_bytes(b"\x00garbage" * 4096)
    result = run_mir("traces", "list", cwd=project)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "traces.duckdb" in line and "move it aside" in line
    assert "Traceback" not in result.stderr


def test_bad_since_is_a_usage_error(run_mir, project):
    result = run_mir("traces", "list", "--since", "lately", cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --since")


def test_the_trace_folder_is_configurable(run_mir, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.mir.traces]\npath = "var/traces"\n')
    store = TraceStore(tmp_path / "var" / "traces", environ={})
    store.append(seeded_flow("c0ffee11", "triage", "executed", NOW))
    store.close()
    assert flows_json(run_mir, tmp_path) == ["c0ffee11"]


def test_a_database_held_by_another_program_is_one_line_and_exit_2(run_mir, project):
    import subprocess
    import sys

    run_mir("traces", "compact", cwd=project)
    db = project / ".mir" / "traces" / "traces.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(db)!r}); "
         "print('holding', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        result = run_mir("traces", "list", cwd=project)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "held open by another program" in line and "traces.duckdb" in line


@pytest.fixture
def named(tmp_path: Path) -> Path:
    """Flows of agents named as the runtime names them: capability.agent."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\n\n[tool.mir]\n')
    store = TraceStore(tmp_path / ".mir" / "traces", environ={})
    store.append(seeded_flow("c0ffee01", "support_desk.triage", "executed", NOW))
    store.append(seeded_flow("c0ffee02", "billing.refunds", "executed", NOW))
    store.append(seeded_flow("c0ffee03", "billing.triage_v2", "executed", NOW))
    store.close()
    return tmp_path


def test_list_agent_accepts_the_short_name_when_unambiguous(run_mir, named):
    # the README's own example: `mir traces list --agent triage`
    assert flows_json(run_mir, named, "--agent", "triage") == ["c0ffee01"]
    assert flows_json(run_mir, named, "--agent", "billing.refunds") == ["c0ffee02"]


def test_list_agent_ambiguous_or_unknown_names_the_agents(run_mir, named):
    TraceStore(named / ".mir" / "traces", environ={}).append(
        seeded_flow("c0ffee04", "shop.triage", "executed", NOW)
    )
    ambiguous = run_mir("traces", "list", "--agent", "triage", cwd=named)
    assert ambiguous.returncode == 2
    assert "ambiguous: shop.triage, support_desk.triage" in ambiguous.stderr
    unknown = run_mir("traces", "list", "--agent", "nope", cwd=named)
    assert unknown.returncode == 2
    assert "billing.refunds, billing.triage_v2, shop.triage, support_desk.triage" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1


def test_piped_list_and_show_print_every_column_in_full(run_mir, named):
    long_model = "a-model-with-a-name-much-longer-than-any-column-" * 2
    store = TraceStore(named / ".mir" / "traces", environ={})
    flow = seeded_flow("d00d0000-1111-2222-3333-444455556666", "support_desk.triage",
                       "executed", NOW + timedelta(seconds=5))  # fmt: skip
    flow[1] = flow[1].model_copy(update={"model": long_model})
    store.append(flow)
    store.close()
    listing = run_mir("traces", "list", cwd=named, env={"COLUMNS": "80"})
    assert listing.returncode == 0, listing.stderr
    first = listing.stdout.splitlines()[1].split()
    assert first[:5] == [
        "d00d0000-1111-2222-3333-444455556666", "support_desk.triage", "production", "executed",
        "refund",
    ]  # fmt: skip
    assert long_model in listing.stdout and "…" not in listing.stdout
    shown = run_mir("traces", "show", "d00d", cwd=named, env={"COLUMNS": "80"})
    assert f"llama/{long_model}" in shown.stdout and "…" not in shown.stdout
