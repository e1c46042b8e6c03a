"""Drift's parsed rows (``drift_rows``, mir/drift/rows.py): every stored final event parsed
once and kept. Attacked here: a report from kept rows must equal one parsed now, for any
decisions (hostile ones too), in either final-event format, with eval and shadow flows,
live and compacted events mixed; a compaction after the last run; a kill in the middle
of parsing; rows deleted, added or counts edited by hand; the tables dropped."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.drift import WindowOptions, measure
from mir.drift import rows as drift_rows
from mir.project import find_project
from mir.traces import TraceEvent, TraceStore
from tests.support import drift_month
from tests.support.drift_flows import db, decision_flow, desk

END = datetime(2026, 11, 1, tzinfo=UTC)
OPTIONS = WindowOptions(window="7d", reference="21d", now=END)
month = drift_month.load()
ROOT = Path(__file__).parents[2]


def append(root: Path, events: list[TraceEvent], *, compact: bool) -> None:
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(events)
    if compact:
        TraceStore.for_project(find_project(root)).compact()


def write_month(root: Path, **kwargs: Any) -> None:
    """A month generator's decisions, compacted into the database."""
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, **kwargs)
    TraceStore.for_project(find_project(root)).compact()


def figures(report: Any) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Everything a report says, minus its run id and time."""
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    for agent in report.agents:
        out[(agent.agent, "(windows)")] = (
            agent.reference.decisions,
            agent.current.decisions,
            tuple(agent.likely_causes),
        )
        for m in agent.metrics:
            out[(agent.agent, m.metric)] = (
                m.kind,
                m.verdict,
                m.reference_n,
                m.current_n,
                None if m.value is None else pytest.approx(m.value, rel=1e-9, abs=1e-12),
                None if m.p_value is None else pytest.approx(m.p_value, rel=1e-9, abs=1e-12),
            )
    return out


def kept(root: Path) -> tuple[int, int, bool]:
    """(kept rows, final events stored, complete) read straight from the database."""
    con = duckdb.connect(str(db(root)), read_only=True)
    try:
        [(rows, finals)] = con.execute(
            "SELECT (SELECT count(*) FROM drift_rows), "
            "(SELECT count(*) FROM events WHERE step = 'final')"
        ).fetchall()
        return rows, finals, drift_rows.complete(con)
    finally:
        con.close()


def three_ways(root: Path) -> None:
    """Parsed now (a read-only run before any writing one), parsing and keeping (a
    writing run), and from the kept rows (a read-only run after): the same report."""
    now = figures(measure(root, options=OPTIONS, store=False))
    writing = figures(measure(root, options=OPTIONS))
    from_kept = figures(measure(root, options=OPTIONS, store=False))
    assert writing == now
    assert from_kept == now


# -- any decisions, any format ---------------------------------------------------------

HOSTILE: list[Any] = [
    {"confidence": "high", "amount": "lots", "action": 5},
    {"confidence": float("nan"), "amount": float("inf")},
    {"confidence": {"a": [1]}, "action": ["refund"], "category": {"x": 1}},
    {"category": "\x00\u202eevil", "action": "re\nfund"},
    {},
    None,
    "just a string",
    [1, 2],
]

decisions = st.one_of(
    st.fixed_dictionaries(
        {
            "action": st.sampled_from(["refund", "reject", "escalate"]),
            "category": st.sampled_from(["damaged", "late", "wrong_item"]),
            "amount": st.floats(0, 200, allow_nan=False),
            "confidence": st.floats(0, 1, allow_nan=False),
        }
    ),
    st.sampled_from(HOSTILE),
)
flows = st.lists(
    st.tuples(
        decisions,
        st.floats(0.01, 27.9),  # days before END
        st.sampled_from(["current", "legacy"]),  # where the source is written
        st.sampled_from([None, None, None, "eval", "shadow"]),
        st.booleans(),  # compacted (True) or left in a live segment
        st.sampled_from(["executed", "fallback", "rejected", "stale"]),
    ),
    min_size=1,
    max_size=40,
)


def flow(index: int, spec: tuple[Any, ...]) -> list[TraceEvent]:
    decision, days, form, source, _, status = spec
    return decision_flow(
        f"prop{index:028d}",
        month.AGENT,
        END - timedelta(days=days),
        {"decision": decision, "latency_ms": 100.0 + index, "tokens": 10 * index},
        source=source,
        legacy=form == "legacy",
        contract=f"c{index % 2}",
        prompts=[f"p{index % 3}"],
        status=status,
        reasons=["low_confidence"] if index % 3 == 0 else [],
        provider="rules" if status == "fallback" else "llama",
        model=f"m{index % 3}",
        cost_usd=0.001 * index,
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows)
def test_kept_rows_report_exactly_what_parsing_now_reports(specs):
    with tempfile.TemporaryDirectory() as tmp:
        root = desk(Path(tmp))
        # a stable month first, so the windows have enough data to measure
        write_month(root, end=END, days=28, per_day=12, shift_day=None, seed=5)
        compacted = [e for i, s in enumerate(specs) if s[4] for e in flow(i, s)]
        live = [e for i, s in enumerate(specs) if not s[4] for e in flow(i, s)]
        if compacted:
            append(root, compacted, compact=True)
        if live:
            append(root, live, compact=False)
        three_ways(root)
        rows, finals, complete = kept(root)
        assert complete and rows == finals


# -- the store moving on ------------------------------------------------------------


def test_a_compaction_after_the_last_run_is_parsed_by_the_next(tmp_path):
    root = desk(tmp_path)
    write_month(root, end=END - timedelta(days=7), days=21, per_day=30, seed=2)
    measure(root, options=OPTIONS)
    first_rows, first_finals, complete = kept(root)
    assert complete and first_rows == first_finals > 0
    write_month(root, end=END, days=7, per_day=30, shift_day=0, seed=3)
    rows, finals, complete = kept(root)
    assert (rows, complete) == (first_rows, False) and finals > first_finals
    # a reader before any writing run parses what is not kept: nothing is missed
    three_ways(root)
    rows, finals, complete = kept(root)
    assert complete and rows == finals


def test_rows_edited_by_hand_are_parsed_again_and_dropped_tables_stay_correct(tmp_path):
    root = desk(tmp_path)
    write_month(root, end=END, days=28, per_day=30, seed=4)
    truth = figures(measure(root, options=OPTIONS))
    edits = [
        "DELETE FROM drift_rows WHERE rowid IN (SELECT rowid FROM drift_rows LIMIT 7)",
        "INSERT INTO drift_rows SELECT * FROM drift_rows LIMIT 5",  # doubled flows
        "INSERT INTO drift_rows SELECT 'nowhere', n, agent, flow_id, \"at\", status, reasons, "
        "provider, model, cost_usd, src, contract_hash, prompt_hashes, latency_ms, tokens, "
        "decision "
        "FROM drift_rows LIMIT 3",
        "UPDATE drift_ingested SET events = events + 1",
        "DELETE FROM drift_ingested",
    ]
    for edit in edits:
        con = duckdb.connect(str(db(root)))
        con.execute(edit)
        con.close()
        assert not kept(root)[2], edit
        assert figures(measure(root, options=OPTIONS, store=False)) == truth, edit
        assert figures(measure(root, options=OPTIONS)) == truth, edit
        rows, finals, complete = kept(root)
        assert complete and rows == finals, edit
    con = duckdb.connect(str(db(root)))
    con.execute("DROP TABLE drift_rows")
    con.execute("DROP TABLE drift_ingested")
    con.close()
    assert figures(measure(root, options=OPTIONS)) == truth


def test_a_store_from_before_the_rows_is_migrated_and_parsed(tmp_path):
    root = desk(tmp_path)
    write_month(root, end=END, days=28, per_day=30, seed=6)
    con = duckdb.connect(str(db(root)))
    con.execute("DROP TABLE IF EXISTS drift_rows")  # drift never ran: its tables
    con.execute("DROP TABLE IF EXISTS drift_ingested")  # are not made yet
    con.execute("DELETE FROM _mir_migrations WHERE name = '0006_create_drift_rows'")
    con.close()
    before = figures(measure(root, options=OPTIONS, store=False))  # read-only: no tables
    assert figures(measure(root, options=OPTIONS)) == before  # migrates, then parses
    rows, finals, complete = kept(root)
    assert complete and rows == finals


# -- a kill in the middle of parsing ----------------------------------------------------

_INGEST = """
import sys, duckdb
from mir.drift import rows
con = duckdb.connect(sys.argv[1])
print("ready", flush=True)
rows.ingest(con)
con.close()
print("done", flush=True)
"""


def _big_store(path: Path, decisions: int) -> None:
    """``decisions`` flows (snapshot + final) straight into a migrated database."""
    from mir.drift import tables
    from mir.traces.database import migrate

    con = duckdb.connect(str(path))
    migrate(con)
    tables.migrate(con)
    con.execute(
        f"""
        INSERT INTO events (segment, n, v, hash, event_id, flow_id, seq, step, agent, "at",
          status, reasons, provider, model, cost_usd, latency_ms, data)
        SELECT 'seg-' || (k // 40000)::VARCHAR, k % 40000, 1, '', k::VARCHAR,
          'f' || (k // 2)::VARCHAR, k % 2, CASE WHEN k % 2 = 0 THEN 'snapshot' ELSE 'final' END,
          'a.b', TIMESTAMPTZ '2026-10-01' + to_microseconds(k * 1000), 'executed', [],
          'llama', 'm', 0.0, 1.0,
          CASE WHEN k % 2 = 0 THEN '{{"contract_hash": "c"}}' ELSE json_object('record',
            json_object('decision', json_object('action', 'refund', 'amount', k % 100,
            'confidence', 0.5), 'latency_ms', 100, 'tokens', 3), 'source', 'production',
            'contract_hash', 'c')::VARCHAR END
        FROM range({decisions * 2}) r(k)
        """
    )
    con.close()


def test_a_kill_while_parsing_leaves_all_or_nothing_and_the_next_run_finishes(tmp_path):
    store = tmp_path / "traces.duckdb"
    _big_store(store, 150_000)
    # ROOT first, then what the caller set (make test-duckdb2 puts DuckDB 2 there)
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _INGEST, str(store)], stdout=subprocess.PIPE, env=env, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    # how long a whole parse takes here, then kills spread over that time
    proc, started = start(), time.perf_counter()
    assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
    took = time.perf_counter() - started
    proc.wait(timeout=60)
    con = duckdb.connect(str(store))
    assert drift_rows.complete(con)
    con.execute("DELETE FROM drift_rows")
    con.execute("DELETE FROM drift_ingested")
    con.close()
    rng = random.Random(11)
    outcomes = set()
    for attempt in range(5):
        proc = start()
        time.sleep(took * (0.1 + 0.2 * attempt) * rng.uniform(0.8, 1.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        con = duckdb.connect(str(store))
        [(rows, finals, ingested)] = con.execute(
            "SELECT (SELECT count(*) FROM drift_rows), "
            "(SELECT count(*) FROM events WHERE step = 'final'), "
            "(SELECT count(*) FROM drift_ingested)"
        ).fetchall()
        complete = drift_rows.complete(con)
        outcomes.add(complete)
        # never half a parse: no rows, or every final event with its segment recorded
        assert (rows, ingested, complete) in ((0, 0, False), (finals, 8, True))
        if complete:
            con.execute("DELETE FROM drift_rows")
            con.execute("DELETE FROM drift_ingested")
        con.close()
    con = duckdb.connect(str(store))
    drift_rows.ingest(con)
    assert drift_rows.complete(con)
    con.close()
    assert False in outcomes  # at least one kill landed inside the parse


# -- what the runtime writes ----------------------------------------------------------


def test_the_runtime_writes_the_source_and_contract_beside_the_record(tmp_path):
    """A final event says where its flow came from, the contract it was decided under
    (its snapshot's, even when approved after the contract was edited) and its prompts."""
    import json

    from mir.reviewers import load_signing_key
    from mir.runtime import approve, load_agent
    from tests.functional.reviewer_keys import sign_as

    root = desk(tmp_path)
    ticket = json.loads((root / "inputs/blender_broken.json").read_text())
    with load_agent(
        "refunds.triage",
        project=root,
        provider="scripted",
        responses=root / "responses/blender_broken.jsonl",
    ) as agent:
        pending = agent.decide(ticket)
    assert pending.status == "pending_review"
    contract = root / "capabilities/refunds/agents/triage.yaml"
    contract.write_text(contract.read_text().replace('version: "1"', 'version: "2"'))
    key = load_signing_key(sign_as(root, tmp_path / "keys", None, "tests"))  # a support lead
    record = approve(pending.flow_id, project=root, by="tests", signing_key=key)
    with TraceStore.for_project(find_project(root)) as traces:
        events = traces.flow(record.flow_id)
    snapshot, final = events[0], events[-1]
    [review] = [e for e in events if e.step == "review"]
    assert review.data["contract_changed"] is True  # the contract did move
    keys = {"record", "source", "contract_hash", "prompt_hashes"}
    assert final.step == "final" and set(final.data) == keys
    infers = [e.prompt_hash for e in events if e.step == "infer"]
    assert infers and final.data["prompt_hashes"] == list(dict.fromkeys(infers))
    assert final.data["source"] == "replay"  # recorded answers, approved: still a replay
    assert final.data["contract_hash"] == snapshot.data["contract_hash"]
    assert final.data["record"]["flow_id"] == record.flow_id
