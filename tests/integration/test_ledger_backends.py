"""One contract, both backends: the SQLite ledger and agent states of one host, and the
Postgres ones every host shares, held to the same tests (8 processes racing on one key,
a dead holder taken over, suspensions seen at once)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mir.runtime.agent_states import AgentStateFile
from mir.runtime.ledger import SqliteExecutionLedger
from mir.runtime.ports import FlowAlreadyDecided

pytestmark = pytest.mark.fleet

# A child process opening the same backend: argv = backend, location, command.
CHILD = r"""
import os, sys, time
backend, where, what = sys.argv[1:4]
if backend == "sqlite":
    from mir.runtime.ledger import SqliteExecutionLedger
    ledger = SqliteExecutionLedger(where + "/executions.db")
else:
    from mir.runtime.ledger_pg import PostgresExecutionLedger
    from mir.storage import FleetStore
    ledger = PostgresExecutionLedger(FleetStore.shared(where))
sys.stdin.readline()  # all children start racing at once
if what == "race":
    won_key = ledger.claim("k-race", {})
    won_flow = ledger.claim_flow("f-race", "approved", by=str(os.getpid())).won
    print(f"{int(won_key)} {int(won_flow)}", flush=True)
    sys.stdin.readline()  # alive until every child has claimed: a dead winner's
    # unsettled flow is rightly taken over, which is not the race this test is about
elif what == "grab":  # claim and exit at once: the next claimant takes a dead holder over
    ledger.claim_flow("f-grab", "approved", by=str(os.getpid()))
    print("ok", flush=True)
else:  # hold a flow, say so, then wait to be killed
    ledger.claim_flow("f-dead", "approved", by="doomed")
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path: Path) -> Iterator[tuple[str, str, Callable]]:
    if request.param == "sqlite":
        yield "sqlite", str(tmp_path), lambda: SqliteExecutionLedger(tmp_path / "executions.db")
        return
    url = request.getfixturevalue("pg_url")
    from mir.runtime.ledger_pg import PostgresExecutionLedger
    from mir.storage import FleetStore

    yield "postgres", url, lambda: PostgresExecutionLedger(FleetStore.shared(url))


def _children(kind: str, where: str, what: str, n: int) -> list[subprocess.Popen]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, kind, where, what],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(n)
    ]


def test_eight_processes_racing_on_one_key_and_one_flow_one_wins(backend):
    kind, where, _new = backend
    procs = _children(kind, where, "race", 8)
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [proc.stdout.readline().split() for proc in procs]
    for proc in procs:
        proc.stdin.write("done\n")
        proc.stdin.flush()
        proc.communicate(timeout=120)
    assert all(proc.returncode == 0 for proc in procs), results
    assert [r[0] for r in results].count("1") == 1
    assert [r[1] for r in results].count("1") == 1


def test_claims_racing_with_takeovers_of_exited_holders_all_answer(backend):
    """Holders that exit at once are taken over while others wait on the row: a claim
    whose row was deleted and re-inserted under it must look again, not crash."""
    kind, where, _new = backend
    for _round in range(3):
        procs = _children(kind, where, "grab", 8)
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outs = [proc.communicate(timeout=120) for proc in procs]
        assert [out for out, _err in outs] == ["ok\n"] * 8, outs


def test_keys_are_claimed_once_and_outcomes_are_kept(backend):
    _kind, _where, new = backend
    first, second = new(), new()
    assert first.claim("k1", {"agent": "a"}) is True
    assert second.claim("k1", {"agent": "a"}) is False
    assert second.claimed("k1") and not second.claimed("k2")
    assert second.outcome("k1") is None  # claimed, never completed: in doubt
    first.complete("k1", {"ok": True, "result": 3})
    assert new().outcome("k1") == {"ok": True, "result": 3}


def test_the_first_holder_of_a_flow_wins_and_runs_it(backend):
    _kind, _where, new = backend
    ana, bo = new(), new()
    assert ana.claim_flow("f1", "approved", by="ana").won
    lost = bo.claim_flow("f1", "rejected", by="bo")
    assert not lost.won and lost.holder is not None
    assert (lost.holder.state, lost.holder.by) == ("approved", "ana")
    with pytest.raises(FlowAlreadyDecided):
        bo.claim("k-bo", {"flow_id": "f1"})
    assert ana.claim("k1", {"flow_id": "f1"})
    assert bo.holder("f1").state == "executing"
    ana.complete("k1", {"ok": True})
    assert bo.holder("f1").state == "executed"
    ana.settle_flow("f1", "executed")
    held = bo.claim_flow("f1", "approved", by="bo")
    assert not held.won and held.holder.final == "executed"
    cy = new()
    assert cy.claim_flow("f2", "approved", by="cy").won
    cy.release_flow("f2")
    assert cy.holder("f2") is None and bo.claim_flow("f2", "rejected", by="bo").won


def test_a_claim_of_a_killed_process_is_taken_over_and_a_live_one_is_not(backend):
    kind, where, new = backend
    (proc,) = _children(kind, where, "hold", 1)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "held"
    alive = new().claim_flow("f-dead", "rejected", by="me")
    assert not alive.won  # its holder is alive: never taken over
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    taken = new().claim_flow("f-dead", "rejected", by="me")
    assert taken.won and taken.holder is not None and taken.holder.by == "doomed"
    assert not new().claim_flow("f-dead", "approved", by="other").won  # only once


@pytest.fixture(params=["sqlite", "postgres"])
def states(request, tmp_path: Path) -> Callable:
    if request.param == "sqlite":
        return lambda: AgentStateFile(tmp_path / "agents.json")
    url = request.getfixturevalue("pg_url")
    from mir.runtime.agent_states_pg import PostgresAgentStates
    from mir.storage import FleetStore

    return lambda: PostgresAgentStates(FleetStore.shared(url))


def test_a_suspension_is_seen_by_every_reader_at_once(states):
    writer, reader = states(), states()
    assert reader.read() == {} and not reader.is_suspended("a.b")
    entry = writer.set("a.b", "suspended", reason="drift", by="mir drift")
    assert reader.is_suspended("a.b")
    assert reader.read()["a.b"] == entry
    writer.set("a.b", "active", reason=None, by="ana")
    assert not reader.is_suspended("a.b")
    assert reader.read()["a.b"]["by"] == "ana"
