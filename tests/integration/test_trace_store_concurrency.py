"""Many real processes writing while another reads and compacts (real DuckDB files)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from mir.traces import TraceStore
from mir.traces.application import verify_traces

WRITERS = 8
FLOWS_PER_WRITER = 250
EVENTS_PER_FLOW = 3

WRITER = """
import sys, time
from pathlib import Path
from mir.traces import TraceEvent, TraceStore

folder, gate = Path(sys.argv[1]), Path(sys.argv[4])
worker, flows = int(sys.argv[2]), int(sys.argv[3])
# Small segments and a low threshold: writers rotate and compact while others write.
with TraceStore(folder, segment_events=60, compact_after=3, environ={}) as store:
    for i in range(flows):
        if i == flows // 2:
            # Handshake: the second half is written only once the reader has seen the
            # first half, so reads provably interleave with writes (bounded wait).
            deadline = time.monotonic() + 120
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
        flow = f"w{worker}-f{i}"
        store.append([
            TraceEvent(flow_id=flow, seq=0, step="snapshot", agent=f"agent{worker % 3}"),
            TraceEvent(flow_id=flow, seq=1, step="infer", agent=f"agent{worker % 3}",
                       model="m", prompt_tokens=10, completion_tokens=2, latency_ms=1.5),
            TraceEvent(flow_id=flow, seq=2, step="final", agent=f"agent{worker % 3}",
                       status="executed", data={"action": "refund"}),
        ])
"""


def start_writers(folder: Path, script: Path, gate: Path) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [sys.executable, str(script), str(folder), str(w), str(FLOWS_PER_WRITER), str(gate)],
            stderr=subprocess.PIPE,
        )
        for w in range(WRITERS)
    ]


@pytest.mark.slow
def test_eight_writers_and_a_concurrent_reader_lose_and_duplicate_nothing(tmp_path):
    folder = tmp_path / "traces"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    reader = TraceStore(folder, environ={}, compact_after=2)
    gate = tmp_path / "second-half"
    half = WRITERS * (FLOWS_PER_WRITER // 2) * EVENTS_PER_FLOW
    seen: list[int] = []
    failures: list[BaseException] = []
    done = threading.Event()

    def read_while_writing() -> None:
        try:
            while not done.is_set():
                seen.append(reader.count_events())
                if seen[-1] == half:
                    gate.touch()
                reader.list_flows(agent="agent1", limit=5)
                reader.compact(wait=0)
                # Writers open, rotate and get compacted meanwhile: never a false alarm.
                report = reader.verify()
                if not report.ok:
                    failures.append(AssertionError(report.breaks))
                    return
        except BaseException as exc:  # surfaced in the main thread below
            failures.append(exc)

    thread = threading.Thread(target=read_while_writing)
    thread.start()
    writers = start_writers(folder, script, gate)
    errors = [p.communicate()[1].decode() for p in writers]
    done.set()
    thread.join()

    assert [p.returncode for p in writers] == [0] * WRITERS, errors
    assert not failures, failures
    total = WRITERS * FLOWS_PER_WRITER * EVENTS_PER_FLOW
    assert half in seen, "the reader never saw the writers' first half"
    assert seen == sorted(seen), "a reader saw events disappear"
    assert max(seen) <= total, "a reader counted an event twice"

    assert reader.count_events() == total
    flows = reader.list_flows(limit=10_000)
    assert len(flows) == WRITERS * FLOWS_PER_WRITER
    assert {f.status for f in flows} == {"executed"}
    assert {f.steps for f in flows} == {EVENTS_PER_FLOW}

    final = reader.compact()
    assert not final.skipped_lines
    assert list(reader.segments_dir.glob("*.jsonl")) == []
    con = duckdb.connect(str(reader.db_path), read_only=True)
    rows, distinct = con.execute("SELECT count(*), count(DISTINCT event_id) FROM events").fetchone()
    con.close()
    assert rows == distinct == total
    assert verify_traces(reader).ok
    assert verify_traces(reader, full=True).ok


CRASHING_COMPACTOR = """
import os, sys
from pathlib import Path
import mir.traces.compaction as compaction_module
from mir.traces import TraceStore

def killed(*args, **kwargs):
    os._exit(9)  # the process dies after the load committed, before any file is deleted

compaction_module.remove_compacted = killed
TraceStore(Path(sys.argv[1]), environ={}).compact()
"""


@pytest.mark.slow
def test_a_compactor_killed_between_load_and_delete_double_counts_nothing(tmp_path):
    from tests.unit.traces.conftest import decision_flow

    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}, segment_events=6) as store:
        for i in range(10):
            store.append(decision_flow(f"f{i}"))
    files_before = sorted(p.name for p in store.segments_dir.glob("*.jsonl"))
    script = tmp_path / "crash.py"
    script.write_text(CRASHING_COMPACTOR)
    crashed = subprocess.run([sys.executable, str(script), str(folder)], check=False)
    assert crashed.returncode == 9
    assert sorted(p.name for p in store.segments_dir.glob("*.jsonl")) == files_before

    assert store.count_events() == 30  # loaded rows and leftover files overlap: read once
    assert verify_traces(store).ok  # the manifest already says they were compacted
    result = store.compact()
    assert (result.segments, result.events) == (len(files_before), 0)
    con = duckdb.connect(str(store.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (30,)
    con.close()
    assert store.count_events() == 30
    assert verify_traces(store).ok


HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(60)
"""


def test_a_database_held_by_another_program_gives_one_clear_error_and_loses_nothing(tmp_path):
    from mir.traces import TraceStoreError
    from tests.unit.traces.conftest import decision_flow

    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}) as store:
        store.append(decision_flow("before"))
    store.compact()
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    holder = subprocess.Popen(
        [sys.executable, str(script), str(store.db_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        writer = TraceStore(folder, environ={})
        writer.append(decision_flow("during"))  # writing never needs the database
        writer.close()
        started = time.monotonic()
        with pytest.raises(TraceStoreError, match="held open by another program") as info:
            store.list_flows()
        assert str(store.db_path) in str(info.value)
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    assert {f.flow_id for f in store.list_flows()} == {"before", "during"}
    assert store.count_events() == 6


def test_a_corrupt_database_is_reported_and_segments_are_untouched(tmp_path):
    from mir.traces import TraceStoreError
    from tests.unit.traces.conftest import decision_flow

    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "traces.duckdb").write_bytes(b"not a database" * 512)
    with TraceStore(folder, environ={}, segment_events=3, compact_after=1) as store:
        for i in range(3):  # rotations try (and fail) to compact: appends still succeed
            store.append(decision_flow(f"f{i}"))
    before = {p.name: p.read_bytes() for p in store.segments_dir.iterdir()}
    assert len(before) == 3
    for action in (store.list_flows, store.compact, store.count_events):
        with pytest.raises(TraceStoreError, match="not a readable trace database") as info:
            action()
        assert "move it aside" in str(info.value)
    assert {p.name: p.read_bytes() for p in store.segments_dir.iterdir()} == before

    (folder / "traces.duckdb").rename(tmp_path / "broken.duckdb")
    assert store.count_events() == 9  # the read compacted first (compact_after=1)
    assert list(store.segments_dir.iterdir()) == []
    con = duckdb.connect(str(store.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (9,)
    con.close()
