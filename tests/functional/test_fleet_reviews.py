"""Pending reviews across hosts: two project folders (two "hosts") on one Postgres,
each ``mir`` a real subprocess with ``$MIR_STORE_URL``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

from .conftest import RUNTIME_PROJECT
from .test_run_agent import GOOD, INPUT, executed, script

pytestmark = [pytest.mark.fleet, pytest.mark.slow]


def _host(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(RUNTIME_PROJECT, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "MIR_STORE_URL": url}


def _mir(url: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MIR_EXE), *args], cwd=root, env=_env(url), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def _pause(url: str, root: Path) -> str:
    name = script(root, {**GOOD, "confidence": 0.3})
    done = _mir(
        url, root, "run", "agent", "refunds.triage", "--input", INPUT,
        "--provider", "scripted", "--responses", name, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "pending_review"
    return record["flow_id"]


@pytest.fixture
def hosts(tmp_path: Path) -> tuple[Path, Path]:
    return _host(tmp_path, "a"), _host(tmp_path, "b")


def test_paused_on_a_is_listed_and_approved_on_b_and_executes_once(pg_url, hosts):
    a, b = hosts
    flow_id = _pause(pg_url, a)
    listed = json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)
    assert [i["flow_id"] for i in listed["items"]] == [flow_id]
    assert listed["items"][0]["fields"]["amount"] == 40
    approved = _mir(pg_url, b, "approve", flow_id, "--by", "ana", "--json")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "executed"
    assert len(executed(b)) == 1 and executed(a) == []
    # host A sees it decided: no longer waiting, and its own approve is refused
    assert json.loads(_mir(pg_url, a, "review", "list", "--json").stdout)["total"] == 0
    again = _mir(pg_url, a, "approve", flow_id, "--by", "bo")
    assert again.returncode == 1, again.stderr
    assert f"flow {flow_id} is already executed (by ana on " in again.stderr
    assert "Traceback" not in again.stderr
    assert len(executed(b)) == 1 and executed(a) == []
    # B's own traces hold the whole flow and its outcome
    shown = json.loads(_mir(pg_url, b, "traces", "show", flow_id, "--json").stdout)
    assert shown[0]["step"] == "snapshot" and shown[-1]["status"] == "executed"


def test_approve_on_a_racing_reject_on_b_has_one_outcome(pg_url, hosts):
    a, b = hosts
    for _ in range(10):
        flow_id = _pause(pg_url, a)
        before_a, before_b = len(executed(a)), len(executed(b))
        racers = [
            subprocess.Popen(
                [str(MIR_EXE), verb, flow_id, "--by", who, "--json"],
                cwd=root,
                env=_env(pg_url),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for verb, who, root in (("approve", "ana", a), ("reject", "bo", b))
        ]
        outs = [(p.wait(timeout=120), *p.communicate()) for p in racers]
        codes = [rc for rc, _, _ in outs]
        assert sorted(codes) == [0, 1], outs
        ran = len(executed(a)) - before_a + len(executed(b)) - before_b
        approve_won = codes[0] == 0
        if approve_won:
            assert json.loads(outs[0][1])["status"] == "executed"
            assert ran == 1
            assert "already executed" in outs[1][2]
        else:
            assert json.loads(outs[1][1])["status"] == "rejected"
            assert ran == 0
            assert "already rejected" in outs[0][2]


def test_a_published_flow_edited_in_the_store_is_refused(pg_url, hosts):
    import psycopg

    a, b = hosts
    flow_id = _pause(pg_url, a)
    with psycopg.connect(pg_url, autocommit=True) as con:
        (events,) = con.execute(
            "SELECT events FROM mir.review_pending WHERE flow_id = %s", (flow_id,)
        ).fetchone()
        route = next(e for e in events if e["status"] == "pending_review")
        route["data"]["decision"]["amount"] = 79  # a bigger refund than proposed
        con.execute(
            "UPDATE mir.review_pending SET events = %s::jsonb WHERE flow_id = %s",
            (json.dumps(events), flow_id),
        )
    refused = _mir(pg_url, b, "approve", flow_id, "--by", "ana")
    assert refused.returncode == 2 and "do not match their digest" in refused.stderr
    assert executed(b) == [] and executed(a) == []
    # A still holds the flow untouched: it can approve it
    assert _mir(pg_url, a, "approve", flow_id, "--by", "ana").returncode == 0
    assert len(executed(a)) == 1


def test_expire_on_b_closes_a_flow_paused_on_a(pg_url, hosts):
    a, b = hosts
    contract = a / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract.write_text(contract.read_text().replace("ttl_seconds: 300", "ttl_seconds: 1"))
    flow_id = _pause(pg_url, a)
    time.sleep(1.2)
    expired = _mir(pg_url, b, "review", "expire", "--json")
    assert expired.returncode == 0, expired.stderr
    assert json.loads(expired.stdout) == {"expired": [flow_id], "pending": 0}
    late = _mir(pg_url, a, "approve", flow_id, "--by", "ana")
    assert late.returncode == 1 and "already expired" in late.stderr
    assert executed(a) == [] and executed(b) == []


def test_an_unreachable_store_refuses_the_review_in_one_line(pg_url, hosts):
    a, _ = hosts
    flow_id = _pause(pg_url, a)
    down = "postgresql://postgres@/mir?host=/tmp/no-such-mir-postgres"
    refused = _mir(down, a, "approve", flow_id, "--by", "ana")
    assert refused.returncode == 2, refused.stderr
    assert "fleet store is unreachable" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) <= 2  # the line and its hint
    assert executed(a) == []
    assert _mir(pg_url, a, "approve", flow_id, "--by", "ana").returncode == 0  # back: it runs
    assert len(executed(a)) == 1


def test_flows_waiting_before_the_migration_are_published_by_it_and_approved_elsewhere(
    pg_url, hosts
):
    a, b = hosts
    waiting = {_pause("", a), _pause("", a)}  # local mode: no fleet store yet
    assert json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)["total"] == 0
    dry = _mir(pg_url, a, "store", "migrate", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert set(json.loads(dry.stdout)["published"]) == waiting
    assert json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)["total"] == 0
    done = _mir(pg_url, a, "store", "migrate")
    assert done.returncode == 0, done.stderr
    assert "waiting for review: published 2 flow(s) to the fleet's queue" in done.stdout
    listed = json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)
    assert {i["flow_id"] for i in listed["items"]} == waiting
    first, second = sorted(waiting)
    approved = _mir(pg_url, b, "approve", first, "--by", "ana", "--json")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "executed"
    assert len(executed(b)) == 1 and executed(a) == []
    # a second migrate publishes nothing again, and the decided flow stays decided
    again = _mir(pg_url, a, "store", "migrate", "--json")
    assert json.loads(again.stdout)["published"] == []
    assert _mir(pg_url, a, "approve", first, "--by", "bo").returncode == 1
    assert _mir(pg_url, a, "approve", second, "--by", "bo").returncode == 0
    assert len(executed(a)) == 1 and len(executed(b)) == 1


def test_a_flow_whose_publish_was_lost_is_published_by_its_host_s_next_queue_read(pg_url, hosts):
    import psycopg

    a, b = hosts
    flow_id = _pause(pg_url, a)
    with psycopg.connect(pg_url, autocommit=True) as con:  # as if the server was away
        con.execute("DELETE FROM mir.review_pending WHERE flow_id = %s", (flow_id,))
    assert json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)["total"] == 0
    assert json.loads(_mir(pg_url, a, "review", "list", "--json").stdout)["total"] == 1
    listed = json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)
    assert [i["flow_id"] for i in listed["items"]] == [flow_id]
    assert _mir(pg_url, b, "reject", flow_id, "--by", "ana").returncode == 0
    # decided: A's next read publishes it no more, though its own traces still show it
    assert json.loads(_mir(pg_url, a, "review", "list", "--json").stdout)["total"] == 0
    assert executed(a) == [] and executed(b) == []


def test_two_of_n_approvals_given_on_two_hosts_count_together_and_execute_once(
    pg_url, hosts, run_mir, tmp_path
):
    from .test_review_identity import declare, require

    a, b = hosts
    for name in ("ana", "bob", "cy"):
        declare(run_mir, a, tmp_path, name)
    shutil.copy(a / "reviewers.toml", b / "reviewers.toml")  # committed: alike on every host
    for root in hosts:
        require(root, "{roles: [lead], count: 2}")
    flow_id = _pause(pg_url, a)
    first = _mir(pg_url, b, "approve", flow_id, "--by", "ana", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "pending_review"
    # the holding host sees B's approval: ana again is refused, bob's makes two
    twice = _mir(pg_url, a, "approve", flow_id, "--by", "ana")
    assert twice.returncode == 2 and "already approved" in twice.stderr, twice.stderr
    second = _mir(pg_url, a, "approve", flow_id, "--by", "bob", "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["status"] == "executed"
    assert len(executed(a)) == 1 and executed(b) == []
    late = _mir(pg_url, b, "approve", flow_id, "--by", "cy")
    assert late.returncode == 1 and "already executed" in late.stderr
    assert len(executed(a)) == 1 and executed(b) == []


def _claim_outcome(url: str, flow_id: str, live: str) -> None:
    """An outcome claim as a review leaves it when its process dies before settling."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            "INSERT INTO mir.review_outcomes (flow_id, verdict, by, host, live)"
            " VALUES (%s, 'approve', 'ghost', 'gone:/x', %s)",
            (flow_id, live),
        )


def test_a_review_that_died_before_anything_ran_no_longer_blocks_the_flow(pg_url, hosts):
    import uuid

    a, b = hosts
    flow_id = _pause(pg_url, a)
    _claim_outcome(pg_url, flow_id, uuid.uuid4().hex[:16])  # no process holds that token
    approved = _mir(pg_url, b, "approve", flow_id, "--by", "ana", "--json")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "executed"
    assert len(executed(b)) == 1 and executed(a) == []


def test_a_review_whose_process_lives_still_blocks_the_flow(pg_url, hosts):
    from mir.storage import FleetStore

    a, b = hosts
    flow_id = _pause(pg_url, a)
    alive = FleetStore(pg_url)
    try:
        _claim_outcome(pg_url, flow_id, alive.hold_liveness())
        refused = _mir(pg_url, b, "approve", flow_id, "--by", "ana")
        assert refused.returncode == 1 and "being approved" in refused.stderr, refused.stderr
    finally:
        alive.close()
    assert executed(a) == [] and executed(b) == []


def test_a_review_killed_inside_the_executor_blocks_the_flow_for_good(pg_url, hosts, tmp_path):
    import signal

    a, b = hosts
    flow_id = _pause(pg_url, a)
    hold = tmp_path / "hold"
    approving = subprocess.Popen(
        [str(MIR_EXE), "approve", flow_id, "--by", "ana"], cwd=b,
        env={**_env(pg_url), "REFUNDS_HOLD": str(hold)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not Path(f"{hold}.started").exists():
        assert approving.poll() is None and time.monotonic() < deadline, approving.stderr
        time.sleep(0.05)
    approving.send_signal(signal.SIGKILL)
    approving.wait(timeout=30)
    # its process is gone, but an execution was claimed: the action may have run
    for root in (a, b):
        refused = _mir(pg_url, root, "approve", flow_id, "--by", "bo")
        assert refused.returncode == 1 and "being approved" in refused.stderr, refused.stderr
    assert executed(a) == [] and executed(b) == []


def test_a_damaged_local_trace_store_costs_a_warning_not_the_fleet_queue(pg_url, hosts):
    a, b = hosts
    mine = _pause(pg_url, b)
    theirs = _pause(pg_url, a)
    database = b / ".mir" / "traces" / "traces.duckdb"
    assert _mir(pg_url, b, "traces", "compact").returncode == 0
    database.write_bytes(b"not duckdb at all" * 100)
    listed = _mir(pg_url, b, "review", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    page = json.loads(listed.stdout)
    assert {i["flow_id"] for i in page["items"]} == {mine, theirs}
    assert any("waiting flows were not checked for publishing" in n for n in page["notes"])
    shown = _mir(pg_url, b, "review", "list")
    assert shown.returncode == 0 and mine[:12] in shown.stdout and theirs[:12] in shown.stdout
    assert "warning: this host's waiting flows were not checked" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_two_hosts_approving_a_two_of_n_flow_at_once_count_both_and_execute_once(
    pg_url, hosts, run_mir, tmp_path
):
    from .test_review_identity import declare, require

    a, b = hosts
    for name in ("ana", "bob"):
        declare(run_mir, a, tmp_path, name)
    shutil.copy(a / "reviewers.toml", b / "reviewers.toml")
    for root in hosts:
        require(root, "{roles: [lead], count: 2}")
    for _ in range(3):
        flow_id = _pause(pg_url, a)
        before = len(executed(a)) + len(executed(b))
        racers = [
            subprocess.Popen(
                [str(MIR_EXE), "approve", flow_id, "--by", who, "--json"],
                cwd=root,
                env=_env(pg_url),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for who, root in (("ana", a), ("bob", b))
        ]
        outs = [(p.wait(timeout=120), *p.communicate()) for p in racers]
        assert [rc for rc, _, _ in outs] == [0, 0], outs
        statuses = sorted(json.loads(out)["status"] for _, out, _ in outs)
        assert statuses == ["executed", "pending_review"], outs  # the second one counted both
        assert len(executed(a)) + len(executed(b)) == before + 1


def test_two_queue_reads_racing_publish_a_lost_flow_once(pg_url, hosts):
    import psycopg

    a, b = hosts
    flow_id = _pause(pg_url, a)
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("DELETE FROM mir.review_pending WHERE flow_id = %s", (flow_id,))
    readers = [
        subprocess.Popen(
            [str(MIR_EXE), "review", "list", "--json"],
            cwd=a,
            env=_env(pg_url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for reader in readers:
        assert reader.wait(timeout=120) == 0, reader.communicate()
    with psycopg.connect(pg_url, autocommit=True) as con:
        (count,) = con.execute(
            "SELECT count(*) FROM mir.review_pending WHERE flow_id = %s", (flow_id,)
        ).fetchone()
    assert count == 1
    listed = json.loads(_mir(pg_url, b, "review", "list", "--json").stdout)
    assert [i["flow_id"] for i in listed["items"]] == [flow_id]
