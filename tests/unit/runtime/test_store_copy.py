"""The rules `mir store migrate` applies to each local row, and what it says (pure)."""

from __future__ import annotations

from mir.runtime.store_copy import (
    StoreMigration,
    StoreStatus,
    TableCopy,
    agent_verdict,
    fingerprint,
    row_verdict,
)

SUSPENDED = {"state": "suspended", "reason": "drift", "by": "ana", "at": "2026-01-01T00:00:00"}
ACTIVE = {"state": "active", "reason": None, "by": "bo", "at": "2026-01-02T00:00:00"}


def test_a_ledger_row_is_copied_counted_or_a_conflict():
    row = ("k1", 1, "{}", None, None)
    assert row_verdict(row, None) == "copy"
    assert row_verdict(row, ("k1", 1, "{}", None, None)) == "same"
    assert row_verdict(row, ("k1", 1, "{}", '{"ok":true}', 2)) == "conflict"  # never merged


def test_the_safer_agent_state_wins_and_nothing_else_overwrites_the_fleet():
    assert agent_verdict(SUSPENDED, None) == "copy"
    assert agent_verdict(SUSPENDED, dict(SUSPENDED)) == "same"
    assert agent_verdict(SUSPENDED, ACTIVE) == "suspend"
    assert agent_verdict(ACTIVE, SUSPENDED) == "conflict"  # the fleet's suspension kept
    assert agent_verdict(SUSPENDED, {**SUSPENDED, "reason": "other"}) == "conflict"
    assert agent_verdict(ACTIVE, {**ACTIVE, "by": "cy"}) == "conflict"


def test_a_tally_names_a_few_conflicts_and_counts_them_all():
    tally = TableCopy()
    for i in range(8):
        tally.count("conflict", f"k{i}")
    tally.count("same", "a")
    tally.count("copy", "b")
    tally.count("suspend", "c")
    assert (tally.copied, tally.already, tally.conflicts) == (2, 1, 8)
    assert tally.examples == ["k0", "k1", "k2", "k3", "k4"]


def test_the_fingerprint_ignores_row_order_and_sees_any_change():
    a, b = ("k1", 1, "{}", None, None), ("k2", 2, "{}", None, None)
    agents = {"x": SUSPENDED}
    assert fingerprint([a, b], [], agents) == fingerprint([b, a], [], agents)
    assert fingerprint([a], [], agents) != fingerprint([a, b], [], agents)
    assert fingerprint([a], [], agents) != fingerprint([a], [], {"x": ACTIVE})


def test_what_a_migration_says():
    report = StoreMigration(url="postgresql://u:***@db/mir", dry_run=False, in_doubt=1, held=2,
                            suspended=["refunds.triage"], kept=["executions.db"])  # fmt: skip
    report.executions.count("conflict", "k9")
    lines = report.lines()
    assert lines[0] == "into the fleet store postgresql://u:***@db/mir"
    assert (
        "execution keys: copied 0, already there 0, 1 conflicting (the fleet's kept: k9)" in lines
    )
    assert any("1 key(s) stay claimed (in doubt, never run again), 2 flow" in x for x in lines)
    assert any(x.startswith("refunds.triage: suspended locally") for x in lines)
    assert lines[-1] == "kept, no longer read: executions.db"
    dry = StoreMigration(url="u", dry_run=True, kept=["executions.db"]).lines()
    assert dry[0].startswith("dry run:") and dry[-1].startswith("nothing written")
    assert not any("kept" in line for line in dry)


def test_what_status_says():
    local = StoreStatus(backend="local", local={"execution keys": 3})
    assert local.lines() == ["backend: local files (execution keys: 3)"]
    fleet = StoreStatus(backend="fleet", url="postgresql://db", reachable=True,
                        pending_steps={"reviews": ["pending and outcome tables"]},
                        counts={"execution keys": 3}, warning="w")  # fmt: skip
    assert fleet.lines() == [
        "backend: fleet store postgresql://db (reachable)",
        "schema: reviews: pending and outcome tables not applied yet (applied on first use)",
        "rows: execution keys: 3",
        "warning: w",
    ]
