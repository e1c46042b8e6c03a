"""TraceStore over a real folder and DuckDB file in tmp_path (single process)."""

from __future__ import annotations

import json
from datetime import timedelta

import duckdb
import pytest

from mir.traces import TraceEvent, TraceStore
from mir.traces.database import MIGRATIONS, migrate

from .conftest import T0, decision_flow


@pytest.fixture
def store(tmp_path):
    with TraceStore(tmp_path / "traces", environ={}) as opened:
        yield opened


def test_a_flow_reads_back_in_seq_order_before_and_after_compaction(store):
    events = decision_flow("f1")
    store.append(list(reversed(events)))
    assert store.flow("f1") == events
    store.close()
    result = store.compact()
    assert (result.segments, result.events) == (1, 3)
    assert store.flow("f1") == events
    assert list(store.segments_dir.iterdir()) == []


def test_unknown_flow_is_an_empty_list(store):
    assert store.flow("nope") == []
    assert store.count_events() == 0
    assert store.list_flows() == []


def test_summary_aggregates_steps_tokens_cost_and_latest_status(store):
    store.append(decision_flow("f1", status="pending_review"))
    # Resuming a flow appends events: the latest status wins.
    store.append(
        [TraceEvent(flow_id="f1", seq=3, step="review", agent="triage", status="executed")]
    )
    [summary] = store.list_flows()
    assert summary.status == "executed"
    assert summary.steps == 4
    assert summary.tokens == 150
    assert summary.cost_usd == pytest.approx(0.0015)
    assert summary.latency_ms == pytest.approx(182.5)
    assert (summary.provider, summary.model, summary.action) == ("llama", "smollm2-135m", "refund")


def test_filters_by_agent_status_since_and_limit(store):
    store.append(decision_flow("old", agent="triage", at=T0 - timedelta(days=3)))
    store.append(decision_flow("new", agent="triage", status="rejected", at=T0))
    store.append(decision_flow("other", agent="billing", at=T0 + timedelta(minutes=1)))
    ids = lambda flows: [f.flow_id for f in flows]  # noqa: E731
    assert ids(store.list_flows()) == ["other", "new", "old"]
    assert ids(store.list_flows(agent="triage")) == ["new", "old"]
    assert ids(store.list_flows(status="rejected")) == ["new"]
    assert ids(store.list_flows(since=T0 - timedelta(hours=1))) == ["other", "new"]
    assert ids(store.list_flows(limit=1)) == ["other"]


def test_an_event_appended_twice_counts_once_in_segments_and_database(store):
    events = decision_flow("f1")
    store.append(events)
    store.append(events)
    assert store.count_events() == 3
    store.close()
    store.compact()
    store.append(events)  # again, now that the first copies live in the database
    assert store.count_events() == 3
    assert len(store.flow("f1")) == 3
    store.close()
    store.compact()
    con = duckdb.connect(str(store.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (9,)  # the chain keeps all
    assert con.execute("SELECT count(*) FROM shadowed").fetchone() == (6,)
    con.close()
    assert store.count_events() == 3
    assert [s.steps for s in store.list_flows()] == [3]


def test_a_torn_last_line_is_skipped_and_the_segment_quarantined(store):
    store.append(decision_flow("f1"))
    store.close()
    [segment] = store.segments_dir.iterdir()
    with segment.open("ab") as handle:
        handle.write(b'{"v":1,"n":3,"prev":"abc","hash":"de')  # a crash mid-write
    assert store.count_events() == 3
    result = store.compact()
    assert (result.events, result.skipped_lines) == (3, 1)
    assert result.quarantined == (segment.name,)
    assert (store.quarantine_dir / segment.name).exists()
    assert store.count_events() == 3


def test_secrets_never_reach_any_file(tmp_path):
    env = {"OPENAI_API_KEY": "sk-live-000111222333444555", "SHOP_PASSWORD_X": "pw-xyz-999"}
    folder = tmp_path / "traces"
    with TraceStore(
        folder, redact_values=["vault-value-42"], redact_env=["SHOP_PASSWORD_X"], environ=env
    ) as store:
        store.append(
            [
                TraceEvent(
                    flow_id="f",
                    seq=0,
                    step="infer",
                    agent="a",
                    reasons=("used pw-xyz-999",),
                    data={
                        "headers": {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.payload"},
                        "prompt": "key sk-live-000111222333444555 and vault-value-42",
                    },
                )
            ]
        )
    store.compact()
    secrets = [b"sk-live-000111222333444555", b"pw-xyz-999", b"vault-value-42", b"eyJhbGci"]
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.name == "traces.duckdb" for p in files)
    for path in files:
        content = path.read_bytes()
        assert not [s for s in secrets if s in content], path
    [event] = store.flow("f")
    assert event.data["prompt"] == "key [REDACTED] and [REDACTED]"


def test_migrations_are_recorded_in_order_and_idempotent(tmp_path):
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    assert migrate(con) == [step.name for step in MIGRATIONS]
    assert migrate(con) == []
    rows = con.execute(
        "SELECT name FROM _mir_migrations WHERE scope = 'traces' ORDER BY applied_at, name"
    ).fetchall()
    assert [r[0] for r in rows] == [step.name for step in MIGRATIONS]


def test_an_older_database_is_upgraded_before_it_is_read(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    con = duckdb.connect(str(folder / "traces.duckdb"))
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ)")
    first = MIGRATIONS[0]
    con.execute(first.apply)
    con.execute("INSERT INTO _migrations VALUES (?, now())", [first.name])
    con.close()
    store = TraceStore(folder, environ={})
    assert store.count_events() == 0
    con = duckdb.connect(str(folder / "traces.duckdb"), read_only=True)
    assert {r[0] for r in con.execute("SELECT name FROM _mir_migrations").fetchall()} == {
        step.name for step in MIGRATIONS
    }


def test_lines_of_an_older_format_missing_fields_still_load(store):
    store.segments_dir.mkdir(parents=True)
    line = {"v": 1, "n": 0, "hash": "h", "event_id": "e1", "flow_id": "f",
            "seq": 0, "step": "final", "agent": "a", "at": "2026-11-30T10:00:00+00:00",
            "status": "executed", "data": "{}"}  # fmt: skip
    (store.segments_dir / "old-1-abc.jsonl").write_text(json.dumps(line) + "\n")
    assert store.compact().events == 1
    [event] = store.flow("f")
    assert (event.status, event.prompt_tokens, event.reasons) == ("executed", 0, ())


def test_writers_rotate_segments_and_compact_on_their_own(tmp_path):
    with TraceStore(tmp_path / "t", environ={}, segment_events=3, compact_after=2) as store:
        for i in range(6):
            store.append(decision_flow(f"f{i}"))
    assert store.db_path.exists()  # a rotation found 2 closed segments and compacted
    assert store.count_events() == 18
    assert len(store.list_flows(limit=100)) == 6


def test_reading_a_store_that_was_never_written_creates_nothing(tmp_path):
    store = TraceStore(tmp_path / "absent", environ={})
    assert store.list_flows() == []
    assert store.count_events() == 0
    assert not (tmp_path / "absent").exists()


def test_a_live_segment_is_read_but_never_compacted_until_its_writer_closes(tmp_path):
    folder = tmp_path / "traces"
    writer = TraceStore(folder, environ={})
    reader = TraceStore(folder, environ={})
    writer.append(decision_flow("f1"))
    assert reader.compact().segments == 0  # the writer still holds its segment
    assert reader.count_events() == 3
    writer.append(decision_flow("f2"))  # same segment, chain continues
    writer.close()
    assert reader.compact().segments == 1
    assert reader.count_events() == 6
    report = reader.verify(full=True)
    assert report.ok and (report.segments, report.lines, report.checked) == (1, 6, 6)


def test_a_forked_child_writes_its_own_segment_and_both_chains_hold(tmp_path):
    import os

    from mir.traces import verify_traces

    store = TraceStore(tmp_path / "traces", environ={})
    store.append(decision_flow("parent-1"))
    pid = os.fork()
    if pid == 0:  # child: must not continue the parent's file or chain
        try:
            store.append(decision_flow("child"))
            store.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    store.append(decision_flow("parent-2"))
    store.close()
    assert len(list(store.segments_dir.glob("*.jsonl"))) == 2
    assert store.count_events() == 9
    assert verify_traces(store).ok


def test_an_unknown_status_filter_is_a_usage_error(store):
    from mir.errors import UsageError

    with pytest.raises(UsageError, match="unknown flow status 'done'"):
        store.list_flows(status="done")


def test_the_duplicates_migration_shadows_copies_already_in_an_older_database(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    con = duckdb.connect(str(folder / "traces.duckdb"))
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ)")
    for step in MIGRATIONS[:2]:
        con.execute(step.apply)
        con.execute("INSERT INTO _migrations VALUES (?, now())", [step.name])
    for segment in ("a.jsonl", "b.jsonl"):  # the same event stored by two segments
        con.execute(
            "INSERT INTO events (segment, n, v, hash, event_id, flow_id, seq, step, agent, "
            '"at", reasons, prompt_tokens, completion_tokens, cost_usd, latency_ms, data) '
            "VALUES (?, 0, 1, 'h', 'e1', 'f', 0, 'final', 'a', now(), [], 0, 0, 0, 0, '{}')",
            [segment],
        )
    con.close()
    store = TraceStore(folder, environ={})
    assert store.count_events() == 1
    con = duckdb.connect(str(folder / "traces.duckdb"), read_only=True)
    assert con.execute("SELECT segment, n FROM shadowed").fetchall() == [("b.jsonl", 0)]


def test_a_backlog_is_compacted_in_batches_that_release_the_lock(tmp_path):
    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}, segment_events=3, compact_after=10**6) as writer:
        for i in range(5):
            writer.append(decision_flow(f"f{i}"))
    store = TraceStore(folder, environ={}, batch_bytes=1, compact_after=10**6)
    result = store.compact()
    assert (result.segments, result.events) == (5, 15)
    con = duckdb.connect(str(store.db_path), read_only=True)
    batches = con.execute("SELECT count(DISTINCT compacted_at) FROM segments").fetchone()
    con.close()
    assert batches == (5,)  # one transaction per segment: the lock was let go in between


def test_the_migrated_schema_has_a_column_for_every_stored_field(tmp_path):
    from mir.traces.database import STORED_COLUMNS

    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    migrate(con)
    columns = [row[0] for row in con.execute("DESCRIBE events").fetchall()]
    assert columns == list(STORED_COLUMNS)


def test_a_reader_compacts_at_most_one_batch_before_answering(tmp_path):
    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}, segment_events=3, compact_after=10**6) as writer:
        for i in range(3):
            writer.append(decision_flow(f"f{i}"))
    reader = TraceStore(folder, environ={}, batch_bytes=1, compact_after=1)
    assert reader.count_events() == 9
    assert len(list(reader.segments_dir.glob("*.jsonl"))) == 2
