"""One outcome per flow: `mir approve F & mir reject F` and `mir approve F & mir approve F`.

Real processes race on flows of ``examples/support_desk`` (copied to a temporary folder,
``--provider scripted``) that wait for review. Each trial checks: exactly one command
wins (exit 0), the other exits 1 and says what really happened; the flow has exactly
one ``final`` event and no two events share a ``seq``; the refund was paid at most once
(counted by a wrapper around the example's executor, not by mir).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from mir.project import load_project_at
from mir.traces import TraceStore
from tests.functional.reviewer_keys import sign_as

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
MIR = Path(sys.executable).parent / "mir"
TRIALS = 20
# what a loser may truthfully be told while, or after, an approval wins
APPROVED = {"approved", "executing", "executed"}

pytestmark = pytest.mark.slow

# Appended to the copy's adapters.py: every call of the refund executor leaves a line.
COUNTER = textwrap.dedent(
    """

    _counted_issue_refund = issue_refund


    def issue_refund(params, *, idempotency_key):
        with open(os.environ["RACE_CALLS"], "a", encoding="utf-8") as calls:
            calls.write(idempotency_key + "\\n")
        return _counted_issue_refund(params, idempotency_key=idempotency_key)
    """
)

PENDING = textwrap.dedent(
    """
    import json, sys
    from mir.runtime import load_agent

    root, responses, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ticket = json.load(open(root + "/inputs/blender_broken.json"))
    with load_agent("refunds.triage", project=root, provider="scripted",
                    responses=responses) as agent:
        for _ in range(count):
            record = agent.decide(ticket)
            assert record.status == "pending_review", record
            print(record.flow_id)
    """
)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    adapters = root / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(adapters.read_text() + COUNTER)
    for name in ("reviewer0", "reviewer1"):  # refunds need a support lead's signature
        sign_as(root, tmp_path / "keys", None, name)
    return root


def pending_flows(root: Path, count: int) -> list[str]:
    line = (root / "responses" / "blender_broken.jsonl").read_text().strip()
    responses = root / "many.jsonl"
    responses.write_text((line + "\n") * count)
    out = subprocess.run(
        [sys.executable, "-c", PENDING, str(root), str(responses), str(count)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    return out.split()


def race(root: Path, flow_id: str, ledger: Path, calls: Path, verdicts: tuple[str, str]):
    # Each trial gets an empty shop ledger, so the re-check sees the world of the snapshot
    # and an approval really pays.
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "SUPPORT_DESK_LEDGER": str(ledger),
        "RACE_CALLS": str(calls),
    }
    keys = root.parent / "keys"
    procs = [
        subprocess.Popen(
            [str(MIR), verdict, flow_id, "--json", "--by", f"reviewer{i}"],
            cwd=root,
            env={**env, "MIR_REVIEWER_KEY_FILE": str(keys / f"reviewer{i}.key")},
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i, verdict in enumerate(verdicts)
    ]
    results = []
    for verdict, proc in zip(verdicts, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        results.append((verdict, out, err, proc.returncode))
    return results


def check_trials(root: Path, verdicts: tuple[str, str]) -> Counter[str]:
    flows = pending_flows(root, TRIALS)
    calls = root / "calls.txt"
    outcomes: Counter[str] = Counter()
    results = {
        flow_id: race(root, flow_id, root / f"ledger-{i}.json", calls, verdicts)
        for i, flow_id in enumerate(flows)
    }
    paid = Counter(calls.read_text().split()) if calls.exists() else Counter()
    with TraceStore.for_project(load_project_at(root)) as store:
        for flow_id, result in results.items():
            winners = [(v, out) for v, out, _, code in result if code == 0]
            losers = [(v, err, code) for v, _, err, code in result if code != 0]
            assert len(winners) == 1 and len(losers) == 1, result
            verdict, out = winners[0]
            record = json.loads(out)
            status = record["status"]
            assert status == ("executed" if verdict == "approve" else "rejected"), record
            _, err, code = losers[0]
            assert code == 1, err
            assert f"flow {flow_id} is already" in err, err
            told = err.split("is already", 1)[1].split()[0]
            truthful = {"rejected"} if status == "rejected" else APPROVED
            assert told in truthful, (status, err)
            events = store.flow(flow_id)
            finals = [e for e in events if e.step == "final"]
            assert len(finals) == 1 and finals[0].status == status, events
            seqs = [e.seq for e in events]
            assert len(seqs) == len(set(seqs)), seqs
            keys = {e.data["key"] for e in events if e.data.get("phase") == "claim"}
            assert len(keys) == (status == "executed")
            for key in keys:
                assert paid[key] == 1, paid
            outcomes[f"{verdict} won"] += 1
            outcomes[f"loser told {told}"] += 1
    # every refund paid belongs to a flow whose one outcome is `executed`
    assert sum(paid.values()) == outcomes["approve won"]
    assert all(n == 1 for n in paid.values())
    print(dict(outcomes))  # how the races went (pytest -s): who won, what the loser was told
    return outcomes


def test_approve_racing_reject_has_one_outcome_and_an_honest_loser(desk: Path):
    outcomes = check_trials(desk, ("approve", "reject"))
    assert outcomes["approve won"] + outcomes["reject won"] == TRIALS


def test_two_approvals_racing_pay_once_and_write_one_final(desk: Path):
    outcomes = check_trials(desk, ("approve", "approve"))
    assert outcomes["approve won"] == TRIALS
