"""The default thresholds hold on stable data: a stable month of decisions, split 200
times into a random current window (~400 decisions) and reference (~1,500), raises
suspend in <= 1 % and warn in <= 5 % of the splits (whole agent: any metric)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mir.contracts import load_contract
from mir.drift.monitor import agent_metrics
from mir.drift.queries import DriftQueries, Selection
from mir.project import find_project
from mir.traces import TraceStore
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = "capabilities/refunds/agents/triage.yaml"
RESAMPLES = 200


def test_default_thresholds_rarely_fire_on_stable_data(tmp_path):
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    end = datetime(2026, 11, 1, tzinfo=UTC)
    month = drift_month.load()
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=end, days=30, per_day=160, shift_day=None, seed=5)
    contract = load_contract(root / CONTRACT)
    verdicts = []
    with TraceStore.for_project(find_project(root)) as traces, traces.analysis() as (con, ev, _):
        queries = DriftQueries(con, ev)
        everything = Selection(end - timedelta(days=60), end, end, end)
        queries.select(["refunds.triage"], everything, None)
        queries.use("refunds.triage")
        queries._time_side = None  # the splits below are not by time: sides come from the table
        con.execute("CREATE TEMP TABLE pool AS SELECT * EXCLUDE (side) FROM drift_flows")
        con.execute("DROP VIEW drift_flows")
        for i in range(RESAMPLES):
            # a deterministic random split: hash of (flow, resample)
            con.execute(
                "CREATE OR REPLACE TEMP TABLE drift_flows AS SELECT * FROM (SELECT *, CASE "
                "WHEN hash(flow_id || $i) % 1000 < 83 THEN 'current' "
                "WHEN hash(flow_id || $i) % 1000 < 396 THEN 'reference' END AS side "
                "FROM pool) WHERE side IS NOT NULL",
                {"i": str(i)},
            )
            n = queries.bounds()
            metrics, _ = agent_metrics(queries, contract, (n["reference"].n, n["current"].n))
            verdicts.append({m.metric: m.verdict for m in metrics})
    suspend = sum("suspend" in v.values() for v in verdicts) / RESAMPLES
    warn = sum("warn" in v.values() or "suspend" in v.values() for v in verdicts) / RESAMPLES
    noisy = sorted({k for v in verdicts for k, x in v.items() if x in ("warn", "suspend")})
    print(f"stable data, {RESAMPLES} splits: suspend {suspend:.1%}, warn {warn:.1%} ({noisy})")
    assert suspend <= 0.01, noisy
    assert warn <= 0.05, noisy
