"""SIGKILL at random moments: processes running decisions, and processes approving them
(racing each other), are killed wherever they happen to be. Afterwards one recovery
pass approves what is left, and then:

* 0 duplicate executions: no idempotency key reached an executor twice (counted in the
  fixture's ``executed.jsonl``, written by the executor itself, not by mir);
* 0 lost flows: every flow that left an event ends with exactly one ``final`` event
  (no two events of a flow share a ``seq``), so every one was final or resumable; the
  only exception is a flow killed before it reached a decision (nothing to resume);
* every ``executed`` flow ran its executor exactly once; nothing else ran one, except
  a flow killed inside its executor, which ends ``execution_in_doubt``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from mir.project import load_project_at
from mir.traces import TraceEvent, TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
ROUNDS, WORKERS, DECISIONS = 5, 4, 60
APPROVAL_ROUNDS, APPROVERS = 3, 2
KILL_WITHIN = 1.5  # seconds after a process is ready

# Appended to the copy's adapters.py: random pauses in the context loader and around
# each executor's side effect, so kills land in every step of a flow, not just between.
PAUSES = textwrap.dedent(
    """

    import random as _random

    _PAUSE = float(os.environ.get("KILL_PAUSE", "0"))
    _plain_record, _plain_load_order = _record, load_order


    def _record(action, params, key):
        time.sleep(_random.uniform(0, _PAUSE))
        result = _plain_record(action, params, key)
        time.sleep(_random.uniform(0, _PAUSE))
        return result


    def load_order(input):
        time.sleep(_random.uniform(0, _PAUSE))
        return _plain_load_order(input)
    """
)

pytestmark = pytest.mark.slow

HIGH = {"action": "refund", "confidence": 0.95, "amount": 30, "reason": "ok"}
LOW = {**HIGH, "confidence": 0.2}

DECIDE = textwrap.dedent(
    """
    import sys
    from mir.runtime import load_agent

    root, responses, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with load_agent("refunds.triage", project=root, provider="scripted",
                    responses=responses) as agent:
        print("ready", flush=True)
        for i in range(count):
            agent.decide({"order_id": "A1", "amount": 30, "n": i})
    """
)

APPROVE = textwrap.dedent(
    """
    import random, sys
    from pathlib import Path
    from mir.errors import MirUserError
    from mir.project import load_project_at
    from mir.runtime import approve
    from mir.traces import TraceEvent, TraceStore

    root, ids, seed = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
    # same order in every approver of a round: they collide on flow after flow
    random.Random(seed // 10).shuffle(ids)
    with TraceStore.for_project(load_project_at(Path(root))) as store:
        print("ready", flush=True)
        for flow_id in ids:
            try:
                approve(flow_id, project=root, by=f"approver{seed}", traces=store)
            except MirUserError as exc:  # lost the flow to another approver, or it ended
                print(exc, file=sys.stderr)
    """
)


def unfinished(root: Path) -> list[str]:
    """Flows that may still be resumed: waiting for review, or interrupted (a flow's
    status is that of its last event with one; only a final event ends a flow)."""
    with TraceStore.for_project(load_project_at(root)) as store:
        flows = store.list_flows(limit=1_000_000)
    return [f.flow_id for f in flows if f.status in (None, "pending_review")]


def events_by_flow(root: Path) -> dict[str, list[TraceEvent]]:
    flows: dict[str, list[TraceEvent]] = defaultdict(list)
    with TraceStore.for_project(load_project_at(root)) as store:
        for event in store.events():
            flows[event.flow_id].append(event)
    return {k: sorted(v, key=lambda e: e.seq) for k, v in flows.items()}


def killed_at_random(rng: random.Random, argv: list[str], env: dict[str, str]) -> str:
    """Start a process, let it get going, SIGKILL it at a random moment; how it ended."""
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    return kill_at_random(rng, proc)


def kill_at_random(rng: random.Random, proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.0, KILL_WITHIN))
    proc.send_signal(signal.SIGKILL)
    proc.wait()  # reaped: a later reviewer can tell this holder is dead
    return "killed" if proc.returncode == -signal.SIGKILL else "finished first"


def test_random_kills_leave_no_duplicate_execution_and_no_lost_flow(tmp_path: Path):
    seed = int(os.environ.get("MIR_KILL_SEED", time.time()))
    rng = random.Random(seed)
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    adapters = root / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(adapters.read_text() + PAUSES)
    # a confident decision executes; two unconfident ones in a row (the cascade asks the
    # second route) wait for review
    lines = [json.dumps(json.dumps(d)) for d in (HIGH, LOW, LOW)]
    (root / "r.jsonl").write_text("\n".join(lines * DECISIONS * 2) + "\n")
    env = {**os.environ, "NO_COLOR": "1", "KILL_PAUSE": "0.01"}
    ends: Counter[str] = Counter()
    for _ in range(ROUNDS):
        for _ in range(WORKERS):
            argv = [sys.executable, "-c", DECIDE, str(root), str(root / "r.jsonl"), str(DECISIONS)]
            ends[killed_at_random(rng, argv, env)] += 1

    assert unfinished(root), "no flow was left to review: the kills prove nothing"
    for round_ in range(APPROVAL_ROUNDS):
        ids = ",".join(unfinished(root))
        procs = [  # approvers race each other on the same flows
            subprocess.Popen(
                [sys.executable, "-c", APPROVE, str(root), ids, str(round_ * 10 + i)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for i in range(APPROVERS)
        ]
        for proc in procs:
            ends[kill_at_random(rng, proc)] += 1
    left_before_recovery = unfinished(root)
    recovery = subprocess.run(
        [sys.executable, "-c", APPROVE, str(root), ",".join(left_before_recovery), "99"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert recovery.returncode == 0, recovery.stderr

    executed = [json.loads(line) for line in (root / "executed.jsonl").read_text().splitlines()]
    runs = Counter(line["key"] for line in executed)
    duplicates = {k: n for k, n in runs.items() if n > 1}
    statuses: Counter[str] = Counter()
    flows = events_by_flow(root)
    for flow_id, events in flows.items():
        finals = [e for e in events if e.step == "final"]
        seqs = [e.seq for e in events]
        assert len(seqs) == len(set(seqs)), (flow_id, seqs)
        keys = {e.data["key"] for e in events if e.data.get("phase") == "claim"}
        if not finals and not keys and all(e.status is None for e in events):
            # killed before it decided anything (only early events were durable):
            # nothing to resume, and nothing may have executed
            statuses["died before deciding"] += 1
            continue
        assert len(finals) == 1, (flow_id, [(e.seq, e.step, e.status) for e in events])
        final = finals[0]
        if final.status == "executed":
            assert [runs[k] for k in keys] == [1], (flow_id, final.reasons)
        elif "execution_in_doubt" not in final.reasons:
            assert all(runs[k] == 0 for k in keys), (flow_id, final)
        statuses[f"{final.status}:{','.join(final.reasons[-1:])}"] += 1
    assert set(runs) <= {k for events in flows.values() for k in claimed_keys(events)}
    print(
        f"seed {seed}: {sum(ends.values())} processes ({dict(ends)}), {len(flows)} flows, "
        f"{len(left_before_recovery)} left for recovery, {len(executed)} executions, "
        f"{len(duplicates)} duplicates; outcomes {dict(statuses)}"
    )
    assert duplicates == {}


def claimed_keys(events: list[TraceEvent]) -> set[str]:
    return {e.data["key"] for e in events if e.data.get("phase") == "claim"}
