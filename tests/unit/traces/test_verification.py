"""Re-hashing rows in SQL, head records, incremental state: the parts verify stands on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from mir.traces import TraceEvent, TraceStore
from mir.traces.chains import BODY_SQL, check_rows
from mir.traces.records import EVENT_FIELDS, canonical_body

from .conftest import decision_flow

ODD = [
    TraceEvent(
        flow_id='q"\\\x01\n\u00e9\u2028/', seq=7, step="infer", agent="a",
        at=datetime(2026, 1, 1, 0, 0, 0, 120, tzinfo=UTC), cost_usd=1e-05,
        latency_ms=1e16, reasons=("a", 'b"'), data={"x": [1, 2.5, None, {"y": "z"}]},
    ),
    TraceEvent(
        flow_id="plain", seq=0, step="final", agent="a", status="executed",
        at=datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), prompt_tokens=2**40,
    ),
]  # fmt: skip


@pytest.fixture
def compacted(tmp_path):
    with TraceStore(tmp_path / "traces", environ={}) as store:
        store.append(ODD)
        store.append(decision_flow("f1"))
    store.compact()
    return store


def test_sql_rebuilds_the_hashed_body_of_ordinary_rows(compacted):
    con = duckdb.connect(str(compacted.db_path), read_only=True)
    fields = ", ".join(f'"{c}"' for c in EVENT_FIELDS)
    rows = con.execute(f"SELECT {BODY_SQL}, {fields} FROM events WHERE flow_id = 'f1'").fetchall()
    for row in rows:
        event = TraceEvent.model_validate(
            {**dict(zip(EVENT_FIELDS, row[1:], strict=True)), "data": json.loads(row[-1])}
        )
        assert row[0] == canonical_body(event)


def test_rows_sql_formats_differently_are_rechecked_exactly_not_reported(compacted):
    con = duckdb.connect(str(compacted.db_path), read_only=True)
    [segment] = [r[0] for r in con.execute("SELECT name FROM segments").fetchall()]
    assert check_rows(con, [segment]) == []
    assert compacted.verify(full=True).ok


def test_an_edited_row_is_found_by_sql(compacted):
    con = duckdb.connect(str(compacted.db_path))
    con.execute("UPDATE events SET latency_ms = 1.0 WHERE flow_id = 'plain'")
    con.close()
    report = compacted.verify(full=True)
    assert [(b.line, "edited" in b.problem) for b in report.breaks] == [(1, True)]


def test_incremental_verify_resumes_a_growing_live_segment(tmp_path):
    store = TraceStore(tmp_path / "traces", environ={})
    store.append(decision_flow("f1"))
    assert store.verify().checked == 3
    store.append(decision_flow("f2"))
    report = store.verify()
    assert report.ok and (report.lines, report.checked, report.full) == (6, 3, False)
    store.close()


def test_a_head_record_is_rewritten_in_place_after_each_append(tmp_path):
    store = TraceStore(tmp_path / "traces", environ={})
    store.append(decision_flow("f1", at=datetime.now(UTC) - timedelta(days=1)))
    [name] = [p.name for p in store.segments_dir.iterdir()]
    count, _ = store.manifest.head(name)
    store.append(decision_flow("f2"))
    assert (count, store.manifest.head(name)[0]) == (3, 6)
    store.close()
    store.compact()
    assert store.manifest.heads() == {}  # folded into the manifest log at compaction
    [_, record] = store.manifest.read_log().compacted[name]
    assert (record["lines"], record["expected_lines"], record["loaded"]) == (6, 6, 6)


def test_a_store_written_before_manifests_is_adopted_not_reported(tmp_path):
    import shutil

    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}) as store:
        store.append(decision_flow("old-db"))
    store.compact()
    with TraceStore(folder, environ={}) as store:
        store.append(decision_flow("old-file"))
    # What an older mir left: no manifest, no head records, a database without 0004.
    shutil.rmtree(folder / "manifest")
    con = duckdb.connect(str(folder / "traces.duckdb"))
    con.execute("DROP TABLE adopted")
    con.execute("DELETE FROM _mir_migrations WHERE name = '0004_create_adopted'")
    con.close()
    reader = TraceStore(folder, environ={})
    report = reader.verify()
    assert report.ok, report.breaks
    assert report.lines == 6
    assert reader.flow("old-file", verify=True)[0].step == "snapshot"
    assert reader.flow("old-db", verify=True)


def test_deleting_the_manifest_later_is_not_laundered_by_adoption(tmp_path):
    import shutil

    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}) as store:
        store.append(decision_flow("f1"))
    store.compact()
    shutil.rmtree(folder / "manifest")
    report = TraceStore(folder, environ={}).verify()
    assert [b.problem for b in report.breaks] == [
        "the database holds a segment the manifest never recorded"
    ]


def test_a_compaction_killed_before_its_manifest_record_is_no_false_alarm(tmp_path, monkeypatch):
    import mir.traces.compaction as compaction_module

    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}) as store:
        store.append(decision_flow("f1"))

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the load committed; nothing after it ran

    monkeypatch.setattr(compaction_module, "finish_batch", killed)
    with pytest.raises(KeyboardInterrupt):
        store.compact()
    monkeypatch.undo()
    report = store.verify()
    assert report.ok and "compaction was interrupted" in report.notices[0]
    assert store.compact().segments == 1
    assert store.verify(full=True).ok
