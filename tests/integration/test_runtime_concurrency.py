"""8 processes x 250 decisions while a reader queries: exactly 2,000 flows, none lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mir.project import load_project_at
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
PROCESSES, DECISIONS = 8, 250

WRITER = textwrap.dedent(
    """
    import sys
    from mir.runtime import load_agent

    root, responses, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with load_agent("refunds.triage", project=root, provider="scripted",
                    responses=responses) as agent:
        for i in range(count):
            record = agent.decide({"order_id": "A1", "amount": 30, "n": i})
            assert record.status == "executed", record
    """
)

READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mir.project import load_project_at
    from mir.traces import TraceStore

    root, stop = sys.argv[1], Path(sys.argv[2])
    reads = 0
    while not stop.exists():
        with TraceStore.for_project(load_project_at(Path(root))) as store:
            store.list_flows(limit=10)
            store.count_events()
        reads += 1
        time.sleep(0.05)
    print(reads)
    """
)


@pytest.mark.slow
def test_eight_writers_and_a_reader_lose_and_duplicate_nothing(tmp_path: Path):
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    decision = {"action": "refund", "confidence": 0.95, "amount": 30, "reason": "ok"}
    responses = root / "r.jsonl"
    responses.write_text((json.dumps(json.dumps(decision)) + "\n") * DECISIONS)
    stop = tmp_path / "stop"
    env = {**os.environ}
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(root), str(stop)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(responses), str(DECISIONS)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    for proc in writers:
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
    stop.write_text("")
    reads, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    assert int(reads) >= 1

    with TraceStore.for_project(load_project_at(root)) as store:
        flows = store.list_flows(limit=10 * PROCESSES * DECISIONS)
    assert len(flows) == PROCESSES * DECISIONS
    assert {f.status for f in flows} == {"executed"}
    lines = [json.loads(line) for line in (root / "executed.jsonl").read_text().splitlines()]
    assert len(lines) == PROCESSES * DECISIONS
    assert len({line["key"] for line in lines}) == PROCESSES * DECISIONS
