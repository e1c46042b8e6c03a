"""Trace write throughput: ``TraceStore.append`` against raw DuckDB bulk inserts.

All paths store the same rows (realistic 5-event decision flows) in the same run:

* ``TraceStore.append``: one call per flow (how the runtime calls it), each event
  redacted, hash-chained and appended to this process's segment; then ``compact()``
  bulk-loads the segment into ``traces.duckdb``. Timed end to end.
* raw bulk: the same ``TraceEvent`` objects -> ``model_dump_json`` (pydantic's Rust
  serializer) -> a JSON lines file -> ``INSERT ... SELECT FROM read_json`` (the
  fastest DuckDB path FACTS.md measured). No redaction, no chain, no concurrency.
* raw multi-row VALUES: ``INSERT ... VALUES (...), (...)`` in batches of 500 (on a
  sample: it is two orders of magnitude slower).
* 8 processes appending at once (start gate, wall time to the last finish), then one
  compaction.
* read latency over the result: ``list_flows`` and ``flow`` with everything compacted.

    python bench/traces.py [--flows 20000] [--repeat 3] [--target 0.5]

Exits 1 when append+compact is slower than ``target`` x the raw bulk path.

    python bench/traces.py --scale 100000 1000000

Tamper evidence at scale, no model: N decisions of 8 events each, written with
``TraceStore.append`` in batches of 100 decisions and compacted; then disk per
decision, files created, a first (full) verify, 1% more decisions, an incremental
verify and a ``--full`` one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from mir.traces import TraceEvent, TraceStore
from mir.traces.database import MIGRATIONS
from mir.traces.records import EVENT_FIELDS

EVENTS_PER_FLOW = 5
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def make_flow(i: int) -> list[TraceEvent]:
    flow, agent, at = f"flow-{i:08d}", f"agent{i % 4}", T0 + timedelta(seconds=i)
    return [
        TraceEvent(flow_id=flow, seq=0, step="snapshot", agent=agent, at=at,
                   data={"ticket": i, "customer": {"id": i * 7, "tier": "gold"}}),
        TraceEvent(flow_id=flow, seq=1, step="infer", agent=agent, at=at, provider="llama",
                   model="smollm2-135m", prompt_hash="9f2c0e4d1a7b55aa", prompt_version="v3",
                   prompt_tokens=230, completion_tokens=60, cost_usd=0.0, latency_ms=2150.0,
                   data={"decision": {"action": "refund", "amount": 12.5, "confidence": 0.8,
                                      "rationale": "order arrived damaged, within policy"}}),
        TraceEvent(flow_id=flow, seq=2, step="validate", agent=agent, at=at,
                   reasons=("schema_ok", "limit_ok"), latency_ms=0.4),
        TraceEvent(flow_id=flow, seq=3, step="route", agent=agent, at=at,
                   reasons=("confidence_above_threshold",), latency_ms=0.1),
        TraceEvent(flow_id=flow, seq=4, step="final", agent=agent, at=at, status="executed",
                   latency_ms=3.2, data={"action": "refund"}),
    ]  # fmt: skip


def time_append(flows: list[list[TraceEvent]], folder: Path) -> tuple[float, float]:
    start = time.perf_counter()
    store = TraceStore(folder, compact_after=10**9, environ={})
    for flow in flows:
        store.append(flow)
    store.close()
    appended = time.perf_counter()
    store.compact()
    return appended - start, time.perf_counter() - start


def create_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(MIGRATIONS[0].apply)


def time_raw_bulk(flows: list[list[TraceEvent]], folder: Path) -> tuple[float, float]:
    """The same events, serialized by pydantic (Rust) to JSON lines, bulk-loaded."""
    folder.mkdir(parents=True)
    start = time.perf_counter()
    jsonl = folder / "rows.jsonl"
    with jsonl.open("w") as handle:
        for flow in flows:
            handle.write("".join(event.model_dump_json() + "\n" for event in flow))
    serialized = time.perf_counter()
    con = duckdb.connect(str(folder / "raw.duckdb"))
    create_table(con)
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in EVENT_FIELDS.items()) + "}"
    names = ", ".join(f'"{k}"' for k in EVENT_FIELDS)
    con.execute(
        f"INSERT INTO events (segment, n, {names}) SELECT 'raw', 0, {names} "
        f"FROM read_json('{jsonl}', format='newline_delimited', columns={spec})"
    )
    con.close()
    end = time.perf_counter()
    return end - start, end - serialized


def time_values(flows: list[list[TraceEvent]], folder: Path, batch: int = 500) -> float:
    folder.mkdir(parents=True)
    rows = []
    for event in (event for flow in flows for event in flow):
        row = event.model_dump(mode="json")
        row["data"] = json.dumps(row["data"])
        rows.append(row)
    con = duckdb.connect(str(folder / "values.duckdb"))
    create_table(con)
    names = ", ".join(f'"{k}"' for k in EVENT_FIELDS)
    one = "('raw', 0, " + ", ".join("?" for _ in EVENT_FIELDS) + ")"
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch]
        params = [row[k] for row in chunk for k in EVENT_FIELDS]
        con.execute(
            f"INSERT INTO events (segment, n, {names}) VALUES " + ", ".join([one] * len(chunk)),
            params,
        )
    con.close()
    return time.perf_counter() - start


WORKER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from traces import make_flow
from mir.traces import TraceStore
folder, gate = Path(sys.argv[1]), Path(sys.argv[5])
worker, flows = int(sys.argv[2]), int(sys.argv[3])
batch = [make_flow(worker * 10_000_000 + i) for i in range(flows)]
print("ready", flush=True)
while not gate.exists():
    time.sleep(0.001)
with TraceStore(folder, compact_after=10**9, environ={}) as store:
    for flow in batch:
        store.append(flow)
print(time.time(), flush=True)
"""


def time_processes(processes: int, flows_each: int, folder: Path) -> tuple[float, float]:
    folder.parent.mkdir(parents=True)
    script = folder.parent / "worker.py"
    script.write_text(WORKER)
    gate = folder.parent / "gate"
    bench_dir = str(Path(__file__).resolve().parent)
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(folder), str(w), str(flows_each), bench_dir,
             str(gate)],
            stdout=subprocess.PIPE, text=True,
        )
        for w in range(processes)
    ]  # fmt: skip
    for w in workers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    start = time.time()
    gate.touch()
    ends = [float(w.communicate()[0].strip()) for w in workers]
    wall = max(ends) - start
    compact_start = time.perf_counter()
    TraceStore(folder, environ={}).compact()
    return wall, time.perf_counter() - compact_start


SCALE_EVENTS = 8
SCALE_BATCH = 100


def scale_decision(i: int) -> list[TraceEvent]:
    """A realistic decision: snapshot, model call, validate, route, review, recheck,
    execute, final (8 events)."""
    flow, agent, at = f"d-{i:09d}", f"agent{i % 4}", T0 + timedelta(milliseconds=i)
    five = make_flow(i)
    return [
        *(e.model_copy(update={"flow_id": flow, "agent": agent, "at": at}) for e in five[:4]),
        TraceEvent(flow_id=flow, seq=4, step="review", agent=agent, at=at, latency_ms=0.2),
        TraceEvent(flow_id=flow, seq=5, step="recheck", agent=agent, at=at, latency_ms=0.9,
                   data={"order_total": 149.0, "changed": False}),
        TraceEvent(flow_id=flow, seq=6, step="execute", agent=agent, at=at, latency_ms=4.1,
                   data={"result": {"refund_id": f"r-{i}", "amount": 12.5}}),
        five[4].model_copy(update={"flow_id": flow, "agent": agent, "at": at, "seq": 7}),
    ]  # fmt: skip


def write_decisions(folder: Path, start: int, count: int) -> tuple[float, int]:
    """Append ``count`` decisions; returns (seconds spent in append, segments opened)."""
    spent = 0.0
    with TraceStore(folder, compact_after=10**9, environ={}) as store:
        for first in range(start, start + count, SCALE_BATCH):
            batch = [e for i in range(first, min(first + SCALE_BATCH, start + count))
                     for e in scale_decision(i)]  # fmt: skip
            began = time.perf_counter()
            store.append(batch)
            spent += time.perf_counter() - began
        opened = store._writer.rotations + 1
    return spent, opened


def disk_usage(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files), len(files)


def scale(decisions: int, root: Path) -> dict[str, float]:
    folder = root / f"scale-{decisions}" / "traces"
    appended, opened = write_decisions(folder, 0, decisions)
    began = time.perf_counter()
    TraceStore(folder, environ={}).compact()
    compacted = time.perf_counter() - began
    disk, files = disk_usage(folder)
    store = TraceStore(folder, environ={})
    began = time.perf_counter()
    assert len(store.flow(f"d-{decisions // 2:09d}", verify=True)) == SCALE_EVENTS
    gate = time.perf_counter() - began
    began = time.perf_counter()
    first = store.verify()
    first_s = time.perf_counter() - began
    more = max(decisions // 100, 1)
    write_decisions(folder, decisions, more)
    began = time.perf_counter()
    incremental = store.verify()
    incremental_s = time.perf_counter() - began
    began = time.perf_counter()
    full = store.verify(full=True)
    full_s = time.perf_counter() - began
    assert first.ok and incremental.ok and full.ok, (first, incremental, full)
    assert full.lines == (decisions + more) * SCALE_EVENTS
    return {
        "decisions": decisions,
        "append_s": appended,
        "events_per_s": decisions * SCALE_EVENTS / appended,
        "compact_s": compacted,
        "disk_per_decision": disk / decisions,
        "files_created": opened * 2 + files,  # each segment + its head record, then these
        "files_left": files,
        "approve_gate_s": gate,
        "first_verify_s": first_s,
        "incremental_verify_s": incremental_s,
        "incremental_lines": incremental.checked,
        "full_verify_s": full_s,
        "full_lines": full.checked,
    }


def main_scale(sizes: list[int]) -> int:
    print(f"{'decisions':>10}{'append s':>10}{'events/s':>10}{'compact s':>10}"
          f"{'B/decision':>11}{'files':>7}{'left':>6}{'verify 1st':>11}"
          f"{'incr (+1%)':>11}{'full':>8}{'gate':>8}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            r = scale(size, Path(tmp))
            print(
                f"{size:>10,}{r['append_s']:>10.1f}{r['events_per_s']:>10,.0f}"
                f"{r['compact_s']:>10.1f}{r['disk_per_decision']:>11.0f}"
                f"{r['files_created']:>7,}{r['files_left']:>6}{r['first_verify_s']:>10.2f}s"
                f"{r['incremental_verify_s']:>10.2f}s{r['full_verify_s']:>7.2f}s"
                f"{r['approve_gate_s'] * 1000:>6.0f}ms",
                flush=True,
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=20_000)
    parser.add_argument(
        "--scale", type=int, nargs="*", help="Tamper-evidence figures for these decision counts."
    )
    parser.add_argument("--repeat", type=int, default=3, help="Best of N (the machine is shared).")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--target", type=float, default=0.5)
    args = parser.parse_args()
    if args.scale is not None:
        return main_scale(args.scale or [100_000, 1_000_000])
    flows = [make_flow(i) for i in range(args.flows)]
    events = args.flows * EVENTS_PER_FLOW
    appended, total, bulk, insert = (float("inf"),) * 4
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # Interleaved repeats, best of each: load from other processes hits both alike.
        for run in range(args.repeat):
            run_append, run_total = time_append(flows, root / f"store{run}")
            appended, total = min(appended, run_append), min(total, run_total)
            run_bulk, run_insert = time_raw_bulk(flows, root / f"raw{run}")
            bulk, insert = min(bulk, run_bulk), min(insert, run_insert)
        sample = flows[: min(len(flows), 4_000)]
        values = time_values(sample, root / "values") * len(flows) / len(sample)
        each = args.flows // args.processes
        wall, compaction = time_processes(args.processes, each, root / "multi" / "traces")
        store = TraceStore(root / "store0", environ={})
        start = time.perf_counter()
        store.list_flows(agent="agent1", limit=50)
        listed = time.perf_counter() - start
        start = time.perf_counter()
        store.flow(f"flow-{args.flows // 2:08d}")
        shown = time.perf_counter() - start
    multi_events = each * args.processes * EVENTS_PER_FLOW
    print(f"{args.flows:,} flows x {EVENTS_PER_FLOW} events = {events:,} events\n")
    print(f"{'path':<52}{'seconds':>9}{'events/s':>12}{'flows/s':>10}{'vs bulk':>9}")
    table = [
        ("TraceStore.append (segments only)", appended, events),
        ("TraceStore.append + compact into DuckDB", total, events),
        ("raw bulk: model_dump_json + JSONL + INSERT..read_json", bulk, events),
        ("  (its INSERT ... SELECT FROM read_json alone)", insert, events),
        ("raw multi-row VALUES (extrapolated from 20k events)", values, events),
        (f"{args.processes} processes appending at once (wall)", wall, multi_events),
        (f"{args.processes} processes: append wall + compaction", wall + compaction, multi_events),
    ]
    for name, seconds, count in table:
        rate = count / seconds
        print(
            f"{name:<52}{seconds:>9.3f}{rate:>12,.0f}{rate / EVENTS_PER_FLOW:>10,.0f}"
            f"{(events / bulk) and rate / (events / bulk):>8.2f}x"
        )
    print(f"\nread: list_flows(agent, limit=50) {listed * 1000:.0f} ms; "
          f"flow(id) {shown * 1000:.0f} ms (over {events:,} compacted events)")  # fmt: skip
    ratio = (events / total) / (events / bulk)
    verdict = "ok" if ratio >= args.target else "BELOW TARGET"
    print(f"append+compact / raw bulk = {ratio:.2f}x (target >= {args.target}x): {verdict}")
    return 0 if ratio >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
