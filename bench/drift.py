"""`mir drift` speed: all metrics over 1,000,000 stored decisions of one agent, and
`mir drift check` over 20 agents x 50,000 decisions.

Decisions are bulk-generated in SQL straight into ``traces.duckdb`` (the same ``events``
rows `mir run agent` produces: snapshot, infer, validate, execute x2, final; 6 events a
decision; a month ending now, a shift in the last 3 days), because writing 6M events
through ``TraceStore.append`` would take minutes and measures the writer, not drift.

    python bench/drift.py [--decisions 1000000] [--agents 20] [--per-agent 50000]
                          [--evidently]

Reports in-process time (``mir.drift.measure`` / ``check``) and the CLI's wall time.
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
STEPS = "['snapshot', 'infer', 'validate', 'execute', 'execute', 'final']"


def _generate(con: duckdb.DuckDBPyConnection, decisions: int, agents: int, end: datetime) -> None:
    """``decisions`` flows spread over ``agents`` agents and 30 days, time-ordered."""
    start = end - timedelta(days=DAYS)
    step_us = int(DAYS * 86_400_000_000 / decisions)
    shift_from = decisions - decisions // 10  # the last 3 days drift
    con.execute(
        f"""
        INSERT INTO events
        SELECT 'bench-' || (k // 1000000)::VARCHAR AS segment, k AS n, 1 AS v, '' AS hash,
          k::VARCHAR AS event_id, 'f' || i::VARCHAR AS flow_id, s AS seq,
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
            WHEN 0 THEN '{{"contract_hash": "c1", "source": "production"}}'
            WHEN 5 THEN json_object('record', json_object('status', 'executed',
              'latency_ms', 625 + (h % 700), 'tokens', 300, 'decision',
              json_object('action', action, 'category', ['damaged', 'not_delivered',
              'wrong_item', 'changed_mind'][((h // 7) % 4 + 1)::BIGINT], 'amount', amount,
              'confidence', confidence, 'order_id', 'A-' || (h % 10000)::VARCHAR)))::VARCHAR
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
            round(0.5 + (hash(k // {EVENTS}, 'c') % 500) / 1000.0, 3) AS confidence
          FROM range({decisions * EVENTS}) r(k)
        )
        """,
        {"start": start},
    )


def build(folder: Path, decisions: int, agents: int, end: datetime) -> float:
    (folder / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.mir]\n')
    traces = folder / ".mir" / "traces"
    TraceStore(traces).compact()  # an empty, migrated traces.duckdb
    started = time.perf_counter()
    con = duckdb.connect(str(traces / "traces.duckdb"))
    _generate(con, decisions, agents, end)
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
        frame = con.execute(
            "SELECT side, r.decision.action AS action, r.decision.category AS category, "
            "r.decision.amount AS amount, r.decision.confidence AS confidence, latency_ms, "
            "tokens, fallback::INT AS fallback, schema_violation::INT AS schema_violation "
            "FROM drift_flows"
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
    args = parser.parse_args()
    end = datetime.now(UTC).replace(microsecond=0)
    options = WindowOptions(now=end)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one"
        one.mkdir()
        built = build(one, args.decisions, 1, end)
        print(
            f"generated {args.decisions:,} decisions ({args.decisions * EVENTS:,} events) "
            f"in {built:.1f} s"
        )
        seconds, report = timed(lambda: measure(one, options=options))
        [agent] = report.agents  # type: ignore[union-attr]
        print(
            f"mir drift, 1 agent, {args.decisions:,} decisions (current {agent.current.decisions:,}"
            f" vs reference {agent.reference.decisions:,}, {len(agent.metrics)} metrics): "
            f"{seconds:.2f} s in process, verdict {agent.verdict}"
        )
        wall = cli_wall(one, "drift", "--format", "json")
        print(f"  `mir drift` wall (CLI start included): {wall:.2f} s")
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
        build(many, total, args.agents, end)
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
