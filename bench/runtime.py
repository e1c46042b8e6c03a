"""Runtime speed: what mir's decision pipeline costs on top of the model call.

One run, printed as a table:

(a) local route: ``Agent.decide`` on the embedded SmolLM2 (llama.cpp in-process) against a
    bare ``llama_cpp.Llama.create_chat_completion`` with the same messages, response
    format (JSON schema grammar), max tokens, temperature and seed; medians of
    alternating runs after one warm-up each. Target: at most 1.05x.
(b) pipeline overhead with the scripted provider (no model): p50/p99 per decision,
    including snapshot, prompt rendering, integrity check, re-check, ledger claim,
    executor and trace persistence; and p50 as a share of the bare model call of (a).
(c) trace writes: ``TraceStore.append`` vs a raw DuckDB bulk insert of the same rows.
(d) 8 processes x 250 decisions against one project (the concurrency test): throughput.

    python bench/runtime.py [--rounds 5] [--decisions 2000] [--skip-model]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mir.project import load_project_at
from mir.runtime import Agent, load_agent
from mir.runtime.prompting import RenderedPrompt
from mir.traces import TraceEvent, TraceStore

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "runtime" / "project"
INPUT = {"order_id": "A1", "amount": 40, "message": "the parcel arrived broken"}
GOOD = {"action": "refund", "confidence": 0.95, "amount": 40, "reason": "damaged"}


def project(folder: Path) -> Path:
    root = folder / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def first_prompt(agent: Agent) -> RenderedPrompt:
    """The prompt of a decision's first attempt, rendered exactly as the flow does."""
    from mir.runtime.prompting import PromptVariables
    from mir.runtime.snapshot import ContextSnapshot, thaw

    snap = ContextSnapshot.take(
        INPUT,
        {"order_total": 80},
        input_scope=agent.contract.scope.input,
        context_scope=agent.contract.scope.context,
    )
    return agent.parts.prompt.render(
        PromptVariables(
            mission=agent.contract.mission,
            input=thaw(snap.visible_input),
            context=thaw(snap.visible_context),
            actions=dict(agent.contract.actions),
            schema=agent.parts.decision_schema,
            errors=[],
        )
    )


def local_route(root: Path, rounds: int) -> dict[str, float]:
    import llama_cpp

    from mir.inference import embedded_model_path

    store = TraceStore(root / "bench-traces")
    agent = load_agent("refunds.triage", project=root, provider="llama", traces=store)
    provider = agent.deps.providers(agent.contract.routes[0])
    route = agent.contract.routes[0]
    bare = llama_cpp.Llama(
        model_path=str(embedded_model_path()),
        n_ctx=provider.n_ctx,
        n_threads=provider.n_threads,
        seed=0,
        verbose=False,
    )
    messages = None
    mir_times, bare_times, calls = [], [], []

    def run_bare() -> float:
        started = time.perf_counter()
        bare.create_chat_completion(
            messages=messages,
            response_format={"type": "json_object", "schema": agent.parts.decision_schema},
            max_tokens=route.max_tokens,
            temperature=route.temperature,
            seed=0,
        )
        return time.perf_counter() - started

    def run_mir() -> float:
        started = time.perf_counter()
        record = agent.decide(INPUT)
        elapsed = time.perf_counter() - started
        infer = [e for e in store.flow(record.flow_id) if e.step == "infer"]
        assert rendered.hash == infer[0].prompt_hash, "the bare call must see the same prompt"
        calls.append(len(infer))
        return elapsed

    rendered = first_prompt(agent)
    messages = [{"role": m.role, "content": m.content} for m in rendered.messages]
    run_mir(), run_bare()  # warm-up: model load, grammar, prompt cache on both sides
    calls.clear()
    for index in range(rounds):
        # ABBA order: whatever else the machine does hits both sides alike
        if index % 2:
            bare_times.append(run_bare())
            mir_times.append(run_mir())
        else:
            mir_times.append(run_mir())
            bare_times.append(run_bare())
    agent.close()
    return {
        "mir_ms": statistics.median(mir_times) * 1000,
        "bare_ms": statistics.median(bare_times) * 1000,
        "mir_min_ms": min(mir_times) * 1000,
        "bare_min_ms": min(bare_times) * 1000,
        "ratio": statistics.median(mir_times) / statistics.median(bare_times),
        "min_ratio": min(mir_times) / min(bare_times),
        # each round's two calls ran back to back: their ratio cancels slow load drift
        "paired": statistics.median(m / b for m, b in zip(mir_times, bare_times, strict=True)),
        "calls": statistics.mean(calls),
    }


def scripted(root: Path, decisions: int) -> dict[str, float]:
    responses = root / "bench.jsonl"
    responses.write_text((json.dumps(json.dumps(GOOD)) + "\n") * decisions)
    times = []
    with load_agent(
        "refunds.triage", project=root, provider="scripted", responses=responses
    ) as agent:
        for _ in range(decisions):
            started = time.perf_counter()
            record = agent.decide(INPUT)
            times.append(time.perf_counter() - started)
            assert record.status == "executed", record
    return {
        "p50_ms": percentile(times, 0.5) * 1000,
        "p99_ms": percentile(times, 0.99) * 1000,
        "per_s": decisions / sum(times),
    }


def runtime_flow(i: int) -> list[TraceEvent]:
    """The 7 events of an executed decision, shaped as the runtime writes them."""
    flow, agent = f"flow-{i:08d}", "refunds.triage"
    steps = ["snapshot", "infer", "validate", "recheck", "execute", "execute", "final"]
    data = {"input": {"order_id": f"A{i}", "amount": 40}, "context": {"order_total": 80}}
    return [
        TraceEvent(flow_id=flow, seq=n, step=step, agent=agent, data=data if n == 0 else {},
                   status="executed" if step == "final" else None, provider="scripted")
        for n, step in enumerate(steps)
    ]  # fmt: skip


def trace_writes(folder: Path, flows: int) -> dict[str, float]:
    """``TraceStore.append`` once per flow (as the runtime calls it) vs the fastest raw
    DuckDB path for the same rows: a JSONL file bulk-loaded with ``read_json``."""
    import duckdb

    batch = [runtime_flow(i) for i in range(flows)]
    events = sum(len(f) for f in batch)
    store = TraceStore(folder / "store", environ={})
    started = time.perf_counter()
    for flow in batch:
        store.append(flow)
    store.close()
    appended = time.perf_counter() - started
    started = time.perf_counter()
    jsonl = folder / "rows.jsonl"
    with jsonl.open("w") as handle:
        for flow in batch:
            for event in flow:
                handle.write(event.model_dump_json() + "\n")
    con = duckdb.connect(str(folder / "raw.duckdb"))
    con.execute(f"CREATE TABLE events AS SELECT * FROM read_json('{jsonl}')")
    con.close()
    bulk = time.perf_counter() - started
    return {"append_eps": events / appended, "bulk_eps": events / bulk}


WRITER = """
import sys
from mir.project import load_project_at
from mir.runtime import Agent, load_agent
from mir.runtime.prompting import RenderedPrompt
root, responses, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with load_agent("refunds.triage", project=root, provider="scripted", responses=responses) as a:
    for i in range(count):
        assert a.decide({"order_id": "A1", "amount": 30, "n": i}).status == "executed"
"""


def processes(root: Path, count: int, each: int) -> dict[str, float]:
    responses = root / "multi.jsonl"
    responses.write_text((json.dumps(json.dumps(GOOD)) + "\n") * each)
    started = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(responses), str(each)])
        for _ in range(count)
    ]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - started
    assert codes == [0] * count, codes
    with TraceStore.for_project(load_project_at(root)) as s:
        flows = len(s.list_flows(limit=10 * count * each))
    return {"wall_s": wall, "per_s": count * each / wall, "flows": flows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--skip-model", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bare_ms = None
        if not args.skip_model:
            a = local_route(project(folder / "a"), args.rounds)
            bare_ms = a["bare_ms"]
            verdict = "ok" if a["ratio"] <= 1.05 else "ABOVE TARGET"
            rows += [
                ("(a) bare llama_cpp create_chat_completion, median", f"{a['bare_ms']:.0f} ms",
                 f"min {a['bare_min_ms']:.0f} ms"),
                ("(a) mir Agent.decide on the same model, median", f"{a['mir_ms']:.0f} ms",
                 f"min {a['mir_min_ms']:.0f} ms; {a['calls']:.1f} model call(s)/decision"),
                ("(a) decide / bare call, medians", f"{a['ratio']:.3f}x",
                 f"target <= 1.05x: {verdict}"),
                ("(a) decide / bare call, minimums", f"{a['min_ratio']:.3f}x",
                 "least disturbed run of each side"),
                ("(a) decide / bare call, median of paired rounds", f"{a['paired']:.3f}x",
                 "each round's two calls back to back"),
            ]  # fmt: skip
            emit(rows)
        b = scripted(project(folder / "b"), args.decisions)
        share = f"{b['p50_ms'] / bare_ms * 100:.2f}% of the bare call" if bare_ms else "-"
        rows += [
            (f"(b) pipeline, scripted provider, p50 ({args.decisions} decisions)",
             f"{b['p50_ms']:.2f} ms", share),
            ("(b) pipeline, scripted provider, p99", f"{b['p99_ms']:.2f} ms",
             f"{b['per_s']:.0f} decisions/s in one process"),
        ]  # fmt: skip
        emit(rows)
        c = trace_writes(folder / "c", 5000)
        rows += [
            ("(c) TraceStore.append, events/s", f"{c['append_eps']:,.0f}", ""),
            ("(c) raw DuckDB bulk insert (read_json), events/s", f"{c['bulk_eps']:,.0f}",
             f"append / bulk = {c['append_eps'] / c['bulk_eps']:.2f}x"),
        ]  # fmt: skip
        emit(rows)
        d = processes(project(folder / "d"), 8, 250)
        rows.append(
            ("(d) 8 processes x 250 decisions, wall", f"{d['wall_s']:.1f} s",
             f"{d['per_s']:.0f} decisions/s, {d['flows']} flows traced"),
        )  # fmt: skip
    emit(rows)
    return 0


WIDTH = 64
_printed = 0


def emit(rows: list[tuple[str, str, str]]) -> None:
    """Print the rows not printed yet: a long run shows each result as it lands."""
    global _printed
    if _printed == 0:
        print(f"{'measure':<{WIDTH}}  {'value':>12}  note", flush=True)
    for name, value, note in rows[_printed:]:
        print(f"{name:<{WIDTH}}  {value:>12}  {note}", flush=True)
    _printed = len(rows)


if __name__ == "__main__":
    sys.exit(main())
