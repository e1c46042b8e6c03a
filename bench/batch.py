"""``mir run agent --batch``: what the batch adds to each decision, and what it saves.

Rows of the runtime fixture (``tests/fixtures/runtime/project``, scripted replies: no
model, so the figures are the pipeline's and the batch's own), one fresh project each:

* ``decide`` loop: ``load_agent`` once, then ``agent.decide`` for every row, in this
  process: the reference (no journal, no results file);
* batch ``-j 1``: ``run_batch`` over the same rows (each row's start and outcome fsynced
  in the journal, the results file written at the end), as a ratio to the loop;
* batch ``-j 2``: two worker processes, as a ratio to ``-j 1`` (2 cores);
* re-run: the same command again, every row already decided (all skipped);
* ``mir run agent`` once per row (``--rows-cli`` rows, the installed executable): what a
  shell loop over the file costs per row, against the batch's per row.

    python bench/batch.py [--rows 2000] [--rows-cli 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mir.batch import run_batch  # noqa: E402
from mir.runtime import load_agent  # noqa: E402

PROJECT = ROOT / "tests" / "fixtures" / "runtime" / "project"
MIR = Path(sys.executable).parent / "mir"
AGENT = "refunds.triage"


def _project(base: Path, name: str, rows: int) -> Path:
    root = base / name
    shutil.copytree(PROJECT, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    lines = [{"id": i, "order_id": "A1", "amount": 40, "message": f"m {i}"} for i in range(rows)]
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    decision = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "broken"}
    reply = json.dumps(json.dumps(decision)) + "\n"
    (root / "replies.jsonl").write_text(reply * rows)
    return root


def _loop(root: Path) -> float:
    rows = [json.loads(line) for line in (root / "rows.jsonl").read_text().splitlines()]
    started = time.perf_counter()
    with load_agent(
        AGENT, project=root, provider="scripted", responses=str(root / "replies.jsonl")
    ) as agent:
        for row in rows:
            agent.decide(row)
    return time.perf_counter() - started


def _batch(root: Path, jobs: int) -> float:
    os.chdir(root)
    started = time.perf_counter()
    report = run_batch(
        AGENT, root / "rows.jsonl", jobs=jobs, project=root, provider="scripted",
        responses=str(root / "replies.jsonl"), key="id",
    )  # fmt: skip
    took = time.perf_counter() - started
    assert len(report.outcomes) == report.total, report.as_json()
    return took


def _cli(root: Path, rows: int) -> float:
    env = {**os.environ, "NO_COLOR": "1"}
    started = time.perf_counter()
    for i in range(rows):
        ticket = json.dumps({"order_id": "A1", "amount": 40, "message": f"m {i}"})
        subprocess.run(
            [str(MIR), "run", "agent", AGENT, "--input", ticket, "--provider", "scripted",
             "--responses", "replies.jsonl", "--json"],
            cwd=root, env=env, capture_output=True, check=True,
        )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--rows-cli", type=int, default=10)
    args = parser.parse_args()
    n = args.rows
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        loop = _loop(_project(base, "loop", n))
        one_root = _project(base, "one", n)
        one = _batch(one_root, 1)
        rerun = _batch(one_root, 1)
        two = _batch(_project(base, "two", n), 2)
        cli = _cli(_project(base, "cli", args.rows_cli), args.rows_cli)
    per = lambda seconds, rows: seconds / rows * 1000  # noqa: E731
    print(f"{n} rows, scripted replies (no model), 2 cores\n")
    print("| measure | time | per row | ratio |")
    print("|---|---|---|---|")
    print(f"| decide loop (reference) | {loop:.2f} s | {per(loop, n):.2f} ms | 1.00x |")
    print(f"| batch -j 1 | {one:.2f} s | {per(one, n):.2f} ms | {one / loop:.2f}x the loop |")
    print(f"| batch -j 2 | {two:.2f} s | {per(two, n):.2f} ms | {two / one:.2f}x -j 1 |")
    again = f"{rerun:.2f} s | {per(rerun, n):.3f} ms | {rerun / one:.3f}x -j 1"
    print(f"| re-run, all decided | {again} |")
    cli_row = per(cli, args.rows_cli)
    print(f"| `mir run agent` per row ({args.rows_cli} rows) | {cli:.2f} s | {cli_row:.0f} ms | "
          f"{cli_row / per(one, n):.0f}x batch -j 1 per row |")  # fmt: skip


if __name__ == "__main__":
    main()
