"""Tamper evidence through the real CLI: approve refuses an edited decision, verify sees
deletions, cuts and reordering, and works incrementally."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from mir.traces import TraceStore
from mir.traces.records import genesis, link

from .reviewer_keys import sign_as
from .test_traces_cli import NOW, seeded_flow

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
BLENDER = ("--input", "@inputs/blender_broken.json", "--provider", "scripted")


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    sign_as(root, tmp_path / "keys", monkeypatch)  # refunds need a support lead's signature
    return root


def pending_flow(run_mir, desk: Path) -> str:
    result = run_mir(
        "run", "agent", "refunds.triage", *BLENDER,
        "--responses", "responses/blender_broken.jsonl", "--json", cwd=desk,
    )  # fmt: skip
    record = json.loads(result.stdout)
    assert record["status"] == "pending_review", result.stderr
    assert (record["decision"]["order_id"], record["decision"]["amount"]) == ("A-1002", 149.0)
    return record["flow_id"]


def segments(root: Path) -> list[Path]:
    return sorted((root / ".mir" / "traces" / "segments").glob("*.jsonl"))


def pay_199_on_a_1004(text: str) -> str:
    return text.replace('"order_id":"A-1002"', '"order_id":"A-1004"').replace(
        '"amount":149.0', '"amount":199.0'
    )


def assert_refused(run_mir, desk: Path, flow_id: str) -> None:
    result = run_mir("approve", flow_id, cwd=desk)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "does not verify" in line and "nothing was run" in line
    assert "Traceback" not in result.stderr
    listed = run_mir("traces", "list", "--json", cwd=desk)
    [flow] = [f for f in json.loads(listed.stdout) if f["flow_id"] == flow_id]
    assert flow["status"] == "pending_review"  # no execute, no final event appended
    for path in (desk / ".mir").rglob("*"):
        if path.is_file() and "traces" not in path.parts:
            assert b"A-1004" not in path.read_bytes(), path


def test_approve_refuses_a_pending_decision_edited_in_its_segment(run_mir, desk):
    flow_id = pending_flow(run_mir, desk)
    [segment] = segments(desk)
    segment.write_text(pay_199_on_a_1004(segment.read_text()))
    assert_refused(run_mir, desk, flow_id)
    rejected = run_mir("reject", flow_id, "--reason", "looks odd", cwd=desk)
    assert rejected.returncode == 2 and "does not verify" in rejected.stderr


def test_approve_refuses_an_edit_whose_chain_was_recomputed(run_mir, desk):
    # A careful editor re-hashes every line after the edit: the chain inside the file
    # holds, but the head recorded in the manifest while writing does not match.
    flow_id = pending_flow(run_mir, desk)
    [segment] = segments(desk)
    prev, out = genesis(segment.name), []
    for n, raw in enumerate(pay_199_on_a_1004(segment.read_text()).splitlines()):
        body = "{" + raw.split('",', 1)[1]
        prev = link(prev, body)
        out.append(f'{{"v":1,"n":{n},"hash":"{prev}",{body[1:]}')
    segment.write_text("\n".join(out) + "\n")
    assert_refused(run_mir, desk, flow_id)


def test_approve_refuses_a_pending_decision_edited_in_the_database(run_mir, desk):
    flow_id = pending_flow(run_mir, desk)
    assert run_mir("traces", "compact", cwd=desk).returncode == 0
    con = duckdb.connect(str(desk / ".mir" / "traces" / "traces.duckdb"))
    con.execute(
        "UPDATE events SET data = replace(replace(data, '\"A-1002\"', '\"A-1004\"'), "
        "'149.0', '199.0') WHERE flow_id = ?",
        [flow_id],
    )
    con.close()
    assert_refused(run_mir, desk, flow_id)


def test_an_untouched_compacted_flow_is_approved(run_mir, desk):
    flow_id = pending_flow(run_mir, desk)
    assert run_mir("traces", "compact", cwd=desk).returncode == 0
    result = run_mir("approve", flow_id, "--json", cwd=desk)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "executed"


# -- mir traces verify -------------------------------------------------------------


def three_segments(root: Path) -> Path:
    """Three closed segments of 5 flows (20 lines) each, nothing compacted."""
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\n\n[tool.mir]\n')
    for k in range(3):
        with TraceStore(root / ".mir" / "traces", environ={}) as store:
            for i in range(5):
                store.append(seeded_flow(f"f{k}-{i}", "triage", "executed", NOW))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return three_segments(tmp_path)


def verify(run_mir, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = run_mir("traces", "verify", *args, cwd=project)
    assert "Traceback" not in result.stderr
    return result


def test_verify_detects_a_deleted_database(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    assert verify(run_mir, project).returncode == 0
    (project / ".mir" / "traces" / "traces.duckdb").unlink()
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert "traces.duckdb is missing: 3 compacted segment(s), 60 line(s)" in result.stdout


def test_verify_detects_a_deleted_closed_segment(run_mir, project):
    segments(project)[1].unlink()
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert "segment file deleted (20 lines)" in result.stdout


LIVE_WRITER = """
import sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from mir.traces import TraceStore
from tests.functional.test_traces_cli import NOW, seeded_flow
store = TraceStore(Path(sys.argv[1]), environ={})
store.append(seeded_flow("live", "triage", "pending_review", NOW))
print("written", flush=True)
time.sleep(60)
"""


def test_verify_detects_a_deleted_live_segment(run_mir, project):
    before = set(segments(project))
    repo = str(Path(__file__).parents[2])
    writer = subprocess.Popen(
        [sys.executable, "-c", LIVE_WRITER, str(project / ".mir" / "traces"), repo],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
        [live] = set(segments(project)) - before
        assert verify(run_mir, project).returncode == 0
        live.unlink()
        result = verify(run_mir, project)
    finally:
        writer.kill()
        writer.wait()
    assert result.returncode == 1
    assert f"{live.name}:0: segment file deleted (4 lines)" in result.stdout


def test_verify_detects_dropped_last_lines(run_mir, project):
    segment = segments(project)[0]
    segment.write_text("".join(segment.read_text().splitlines(keepends=True)[:-3]))
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert f"{segment.name}:17: 3 last line(s) removed" in result.stdout


def test_verify_detects_last_lines_dropped_before_compaction(run_mir, project):
    segment = segments(project)[0]
    segment.write_text("".join(segment.read_text().splitlines(keepends=True)[:-3]))
    assert run_mir("traces", "compact", cwd=project).returncode == 0
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert "3 last line(s) removed before compaction" in result.stdout


def test_verify_detects_reordered_lines(run_mir, project):
    segment = segments(project)[2]
    lines = segment.read_text().splitlines(keepends=True)
    lines[4], lines[5] = lines[5], lines[4]
    segment.write_text("".join(lines))
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert f"{segment.name}:4: line out of place" in result.stdout


def test_verify_detects_an_added_segment(run_mir, project):
    forged = segments(project)[0].with_name("forged-1-000000000000.jsonl")
    shutil.copy(segments(project)[0], forged)
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert "forged-1-000000000000.jsonl:0: segment not in the manifest" in result.stdout


def test_verify_detects_rows_deleted_from_the_end_of_a_compacted_segment(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    con = duckdb.connect(str(project / ".mir" / "traces" / "traces.duckdb"))
    con.execute("DELETE FROM events WHERE n = 19")
    con.execute("UPDATE segments SET lines = 19, head = NULL")  # cover the tracks
    con.close()
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert result.stdout.count("removed from the database") == 3


def test_verify_detects_a_deleted_manifest(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    (project / ".mir" / "traces" / "manifest" / "log.jsonl").unlink()
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert result.stdout.count("the database holds a segment the manifest never recorded") == 3


# -- incremental -------------------------------------------------------------------


def test_verify_re_hashes_only_what_was_added_since_the_last_verify(run_mir, project):
    first = verify(run_mir, project)
    assert first.returncode == 0 and "verified, every line re-hashed" in first.stdout
    run_mir("traces", "compact", cwd=project)
    with TraceStore(project / ".mir" / "traces", environ={}) as store:
        store.append(seeded_flow("late", "triage", "executed", NOW))
    second = verify(run_mir, project)
    # compacted segments are re-hashed once as database rows; the new segment's 4 lines
    assert second.returncode == 0 and "64 line(s) in 4 segment(s)" in second.stdout
    assert "64 new line(s) re-hashed" in second.stdout
    third = verify(run_mir, project)
    assert "0 new line(s) re-hashed" in third.stdout
    full = verify(run_mir, project, "--full")
    assert "64 line(s) in 4 segment(s) verified, every line re-hashed" in full.stdout


def test_an_edit_that_keeps_counts_and_heads_needs_full(run_mir, project):
    assert verify(run_mir, project).returncode == 0
    segment = segments(project)[0]
    text = segment.read_text()
    segment.write_text(text.replace('"cost_usd":0.0012', '"cost_usd":0.0013', 1))
    assert verify(run_mir, project).returncode == 0  # already verified, same length
    full = verify(run_mir, project, "--full")
    assert full.returncode == 1 and "edited after writing" in full.stdout


def test_verify_detects_a_whole_segment_deleted_from_the_database(run_mir, project):
    run_mir("traces", "compact", cwd=project)
    assert verify(run_mir, project).returncode == 0
    con = duckdb.connect(str(project / ".mir" / "traces" / "traces.duckdb"))
    [name] = con.execute("SELECT name FROM segments ORDER BY name LIMIT 1").fetchone()
    con.execute("DELETE FROM events WHERE segment = ?", [name])
    con.execute("DELETE FROM segments WHERE name = ?", [name])
    con.close()
    result = verify(run_mir, project)
    assert result.returncode == 1
    assert f"{name}:0: compacted segment (20 lines) is gone from traces.duckdb" in result.stdout
