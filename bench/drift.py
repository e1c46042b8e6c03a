"""`mir drift` speed: all metrics over 1,000,000 stored decisions of one agent, and
`mir drift check` over 20 agents x 50,000 decisions.

Decisions are bulk-generated in SQL straight into ``traces.duckdb`` (the same ``events``
rows `mir run agent` produces: snapshot, infer, validate, execute x2, final; 6 events a
decision; a month ending now, a shift in the last 3 days), because writing 6M events
through ``TraceStore.append`` would take minutes and measures the writer, not drift.

    python bench/drift.py [--decisions 1000000] [--agents 20] [--per-agent 50000]
                          [--evidently] [--legacy]

The payloads are shaped and sized like the runtime's (a ~1 KB snapshot with the
ticket, its context and hashes; a ~0.4 KB final with the whole record, its source and
contract hash). ``--legacy`` writes finals without the source and contract hash, as a
store from before they were added holds: drift then reads every snapshot in the windows.

Reports the first run's time (it parses every stored final event once, into
``drift_rows``), then the best of 3 in-process runs (``mir.drift.measure`` / ``check``)
and the CLI's wall time.
``--evidently`` also times Evidently's data-drift preset on the same windows exported
to a DataFrame (``pip install evidently pandas``; optional, never in ``make test``).
Exits 1 when a target is missed (1 s for 1M decisions, 2 s for 20 x 50k).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from mir.drift import WindowOptions, check, measure
from mir.traces import TraceStore

EVENTS = 6
DAYS = 30
CONTRACT = "c166a33bec7d52d5566d428a427839018a165435503ab793f742caa98c380294"
STEPS = "['snapshot', 'infer', 'validate', 'execute', 'execute', 'final']"


def _generate(
    con: duckdb.DuckDBPyConnection,
    decisions: int,
    agents: int,
    end: datetime,
    legacy: bool,
    days: float = DAYS,
    segment: str = "bench",
) -> None:
    """``decisions`` flows spread over ``agents`` agents and ``days``, time-ordered, with
    payloads shaped and sized like the runtime's (a ~1 KB snapshot, a ~0.4 KB final).
    ``legacy``: finals without the source and contract hash beside the record (what a
    store written before they were holds), which `mir drift` reads from the snapshots."""
    start = end - timedelta(days=days)
    step_us = int(days * 86_400_000_000 / decisions)
    shift_from = decisions - decisions // 10  # the last 3 days drift
    con.execute(
        f"""
        INSERT INTO events
        SELECT '{segment}-' || (k // 1000000)::VARCHAR AS segment, k AS n, 1 AS v, '' AS hash,
          '{segment}' || k::VARCHAR AS event_id, '{segment}' || i::VARCHAR AS flow_id, s AS seq,
          {STEPS}[s + 1] AS step, 'bench.agent' || (i % {agents})::VARCHAR AS agent,
          $start::TIMESTAMPTZ + to_microseconds(i * {step_us} + s * 1000) AS "at",
          CASE WHEN s = 5 THEN (CASE WHEN fb THEN 'fallback' ELSE 'executed' END) END AS status,
          CASE WHEN s IN (2, 5) AND h % 100 < 3 THEN ['schema_invalid'] ELSE []::VARCHAR[] END,
          CASE WHEN s IN (1, 5) THEN (CASE WHEN s = 5 AND fb THEN 'rules' ELSE 'llama' END) END,
          CASE WHEN s IN (1, 5) THEN (CASE WHEN s = 5 AND fb THEN 'fallback.default'
            WHEN drifted THEN 'model-b' ELSE 'model-a' END) END,
          CASE WHEN s = 1 THEN 'p1' END, CASE WHEN s = 1 THEN '1' END,
          CASE WHEN s = 1 THEN 260 ELSE 0 END, CASE WHEN s = 1 THEN 40 ELSE 0 END, 0.0,
          CASE WHEN s = 1 THEN 600 + (h % 700) ELSE 1 END AS latency_ms,
          CASE s
            WHEN 0 THEN json_object('input', json_object('ticket_id', 'T-' || i::VARCHAR,
              'customer_id', 'C-' || (h % 5000)::VARCHAR, 'order_id', order_id,
              'category', category, 'requested_amount', amount, 'message',
              'The parcel arrived damaged, the box was crushed and the item inside is '
              || 'broken. Order ' || order_id || '. Please refund me.'),
              'context', json_object('order', json_object('id', order_id, 'total', amount,
              'refundable', amount, 'status', 'delivered', 'belongs_to_customer', true),
              'customer', json_object('tier', 'standard', 'refunds_last_90d', h % 3,
              'notes', ['called twice about delivery times']), 'refund_allowance', amount),
              'context_source', 'loader', 'state_hash', md5(i::VARCHAR) || md5(k::VARCHAR),
              'snapshot_hash', md5(k::VARCHAR) || md5(i::VARCHAR),
              'contract', 'capabilities/refunds/agents/triage.yaml',
              'contract_hash', '{{CONTRACT}}', 'contract_version', '1', 'ttl_seconds', 3600,
              'role', 'agent', 'created_at', strftime($start::TIMESTAMPTZ
              + to_microseconds(i * {step_us}), '%Y-%m-%dT%H:%M:%S.%f+00:00'))::VARCHAR
            WHEN 5 THEN json_object('record', json_object('flow_id', '{segment}' || i::VARCHAR,
              'agent', 'bench.agent' || (i % {agents})::VARCHAR, 'status', 'executed',
              'decision', json_object('category', category, 'action', action,
              'order_id', order_id, 'amount', amount, 'confidence', confidence,
              'reason', 'arrived broken'), 'action', action, 'executed', true,
              'reasons', []::VARCHAR[], 'provider', 'llama', 'model',
              CASE WHEN drifted THEN 'model-b' ELSE 'model-a' END,
              'latency_ms', 625 + (h % 700), 'tokens', 300){{FINAL_EXTRA}})::VARCHAR
            ELSE '{{}}' END AS data
        FROM (
          SELECT k, k // {EVENTS} AS i, k % {EVENTS} AS s, hash(k // {EVENTS}) AS h,
            k // {EVENTS} >= {shift_from} AS drifted,
            hash(k // {EVENTS}, 'fb') % 100 < 2 AS fb,
            CASE WHEN hash(k // {EVENTS}, 'a') % 100 < (CASE WHEN k // {EVENTS} >= {shift_from}
              THEN 70 ELSE 50 END) THEN 'refund'
              WHEN hash(k // {EVENTS}, 'a') % 100 < 85 THEN 'reject' ELSE 'escalate' END
              AS action,
            round((hash(k // {EVENTS}, 'm') % 18000) / 100.0, 2) AS amount,
            round(0.5 + (hash(k // {EVENTS}, 'c') % 500) / 1000.0, 3) AS confidence,
            'A-' || (hash(k // {EVENTS}) % 10000)::VARCHAR AS order_id,
            ['damaged', 'not_delivered', 'wrong_item', 'changed_mind'][
              ((hash(k // {EVENTS}) // 7) % 4 + 1)::BIGINT] AS category
          FROM range({decisions * EVENTS}) r(k)
        )
        """.replace(
            "{FINAL_EXTRA}",
            ""
            if legacy
            else ", 'source', 'production', 'contract_hash', '{CONTRACT}', 'prompt_hashes', ['p1']",
        ).replace("{CONTRACT}", CONTRACT),
        {"start": start},
    )


def build(folder: Path, decisions: int, agents: int, end: datetime, legacy: bool = False) -> float:
    (folder / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.mir]\n')
    traces = folder / ".mir" / "traces"
    TraceStore(traces).compact()  # an empty, migrated traces.duckdb
    started = time.perf_counter()
    con = duckdb.connect(str(traces / "traces.duckdb"))
    _generate(con, decisions, agents, end, legacy)
    con.close()
    return time.perf_counter() - started


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def cli_wall(folder: Path, *args: str) -> float:
    mir = Path(sys.executable).parent / "mir"
    started = time.perf_counter()
    subprocess.run([str(mir), *args], cwd=folder, capture_output=True, check=False)
    return time.perf_counter() - started


def evidently_time(folder: Path, options: WindowOptions) -> float | None:
    # `pip install --target DIR evidently pandas` keeps it out of mir's environment:
    # appended last, so the packages mir already imported stay the ones it uses.
    extra = os.environ.get("MIR_BENCH_EXTRA_PATH")
    if extra:
        sys.path.append(extra)
    try:
        import pandas as pd
        from evidently import Report
        from evidently.presets import DataDriftPreset
    except ImportError:
        print("evidently: not installed (pip install evidently pandas)")
        return None
    from mir.drift.monitor import _selection
    from mir.drift.queries import DriftQueries

    sel, since, _, _ = _selection(options, options.now or datetime.now(UTC), None)
    with TraceStore(folder / ".mir" / "traces").analysis() as (con, events, _):
        queries = DriftQueries(con, events)
        queries.select(["bench.agent0"], sel, since)
        queries.use("bench.agent0")
        fields = ", ".join(
            f"{queries.field(name)} AS {name}"
            for name in ("action", "category", "amount", "confidence")
        )
        frame = con.execute(
            f"SELECT side, {fields}, latency_ms, tokens, fallback::INT AS fallback, "
            "schema_violation::INT AS schema_violation FROM drift_flows"
        ).df()
    reference = frame[frame.side == "reference"].drop(columns="side")
    current = frame[frame.side == "current"].drop(columns="side")
    started = time.perf_counter()
    Report([DataDriftPreset()]).run(current, reference)
    del pd  # imported for Evidently's input type only
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--per-agent", type=int, default=50_000)
    parser.add_argument("--evidently", action="store_true")
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="finals without source / contract hash (a store written before they were)",
    )
    args = parser.parse_args()
    end = datetime.now(UTC).replace(microsecond=0)
    options = WindowOptions(now=end)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one"
        one.mkdir()
        built = build(one, args.decisions, 1, end, args.legacy)
        print(
            f"generated {args.decisions:,} decisions ({args.decisions * EVENTS:,} events) "
            f"in {built:.1f} s"
        )
        first, _ = timed(lambda: measure(one, options=options), repeat=1)
        print(f"  first run (parses every stored final event once, then keeps it): {first:.2f} s")
        seconds, report = timed(lambda: measure(one, options=options))
        [agent] = report.agents  # type: ignore[union-attr]
        print(
            f"mir drift, 1 agent, {args.decisions:,} decisions (current {agent.current.decisions:,}"
            f" vs reference {agent.reference.decisions:,}, {len(agent.metrics)} metrics): "
            f"{seconds:.2f} s in process, verdict {agent.verdict}"
        )
        wall = cli_wall(one, "drift", "--format", "json")
        print(f"  `mir drift` wall (CLI start included): {wall:.2f} s")
        day = args.decisions // DAYS  # a day's decisions, compacted since the last run
        con = duckdb.connect(str(one / ".mir" / "traces" / "traces.duckdb"))
        _generate(con, day, 1, end, args.legacy, days=1, segment="day")
        con.close()
        after, _ = timed(lambda: measure(one, options=options), repeat=1)
        print(f"  the next run after a day's {day:,} more decisions were stored: {after:.2f} s")
        failed |= seconds > 1.0
        if args.evidently:
            evidently = evidently_time(one, options)
            if evidently is not None:
                print(
                    f"  Evidently DataDriftPreset on the same windows: {evidently:.2f} s "
                    f"(mir / Evidently = {seconds / evidently:.2f})"
                )
        many = Path(tmp) / "many"
        many.mkdir()
        total = args.agents * args.per_agent
        build(many, total, args.agents, end, args.legacy)
        first, _ = timed(lambda: check(many, options=options), repeat=1)
        print(f"  first check (parses every stored final event once): {first:.2f} s")
        seconds, report = timed(lambda: check(many, options=options))
        print(
            f"mir drift check, {args.agents} agents x {args.per_agent:,} decisions: "
            f"{seconds:.2f} s in process ({len(report.agents)} agents checked)"
        )  # type: ignore[union-attr]
        wall = cli_wall(many, "drift", "check", "--format", "json")
        print(f"  `mir drift check` wall (CLI start included): {wall:.2f} s")
        failed |= seconds > 2.0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
