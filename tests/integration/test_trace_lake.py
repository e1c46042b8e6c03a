"""The fleet's traces on DuckLake (``mir/traces/lake.py``), on a real Postgres catalog and a
real data folder: hosts ship what they compacted, every host reads every host's flows,
shipping survives kills, and an edit to the lake is found by verify and by approve's check.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mir.errors import ConfigError
from mir.traces import TraceEvent, TraceStore, TraceStoreError
from mir.traces.domain import TamperedTraceError
from mir.traces.lake import Lake, fleet_lake

pytestmark = [pytest.mark.fleet]
ROOT = Path(__file__).resolve().parents[2]


def _flow(flow_id: str, action: str = "refund") -> list[TraceEvent]:
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent="triage", data={"n": 1}),
        TraceEvent(
            flow_id=flow_id,
            seq=1,
            step="final",
            agent="triage",
            status="executed",
            data={"source": "production", "action": action},
        ),
    ]


def _host(tmp_path: Path, name: str, lake: Lake, flows: int, **options: int) -> TraceStore:
    store = TraceStore(tmp_path / name / "traces", lake=lake, segment_events=6, **options)
    for i in range(flows):
        store.append(_flow(f"{name}-{i:04d}"))
    store.close()
    return store


def _lake_rows(lake: Lake, sql: str) -> list[tuple]:
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        lake.attach(con)
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _lake_write(lake: Lake, sql: str) -> None:
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        lake.attach(con, write=True)
        con.execute(sql)
    finally:
        con.close()


@pytest.fixture
def lake(pg_url, tmp_path) -> Lake:
    return Lake(pg_url, tmp_path / "lake")


def test_every_host_reads_every_hosts_flows_once_they_are_shipped(lake, tmp_path):
    stores = [_host(tmp_path, name, lake, 20) for name in ("a", "b", "c")]
    for store in stores:
        result = store.compact()
        assert result.shipped == result.segments and result.shipped_events == 40, result
        assert not store.warnings
    for store in stores:
        flows = store.list_flows(limit=1000)
        assert len(flows) == 60
        assert store.count_events() == 120
        assert {f.flow_id.split("-")[0] for f in flows} == {"a", "b", "c"}
    # a second compaction ships nothing again, and nothing is counted twice
    assert stores[0].compact().shipped == 0
    assert stores[1].count_events() == 120
    # live segments (not compacted yet) are read from this host, not from the lake
    extra = TraceStore(tmp_path / "a" / "traces", lake=lake, compact_after=1000)
    extra.append(_flow("a-live"))
    assert stores[2].count_events() == 120  # host c: not shipped yet
    assert extra.count_events() == 122  # host a: its own live segment
    assert [e.step for e in stores[2].flow("b-0003", verify=True)] == ["snapshot", "final"]
    extra.close()


def test_a_host_that_never_shipped_reads_an_empty_lake_and_its_own_flows(lake, tmp_path):
    store = _host(tmp_path, "a", lake, 3)
    assert store.count_events() == 6  # the lake does not exist yet: no error
    assert not lake.attach(__import__("duckdb").connect(":memory:"))


def test_shipments_killed_at_random_points_ship_every_segment_exactly_once(lake, tmp_path):
    """A host's database already holds 200 segments (compacted before the lake was set);
    its shipment is SIGKILLed at random moments: the lake holds all of them or none, and
    the shipment that finishes ships each one once."""
    local = _host(tmp_path, "a", None, 600)
    local.compact()
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    # the child says when its shipment starts (its lake connection, the load, the commit
    # all come after), so each kill lands inside a shipment, not in Python's start-up
    ship = (
        "import sys; from pathlib import Path; import mir.traces.shipping as sh;"
        "from mir.traces import TraceStore; from mir.traces.lake import Lake; real = sh.ship;"
        "sh.ship = lambda *a: (print('shipping', flush=True), real(*a))[1];"
        "s = TraceStore(Path(sys.argv[1]), lake=Lake(sys.argv[2], sys.argv[3]));"
        "print(s.compact().shipped, flush=True); s.close()"
    )
    count = "SELECT count(DISTINCT name) FROM lake.segments"
    rng = random.Random(7)
    inside = 0  # kills that left the lake without the shipment
    for _ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", ship, str(local.directory), lake.url, lake.data_path],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline() == "shipping\n"
        time.sleep(rng.uniform(0.0, 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        seen = _lake_rows(lake, count) if lake.attach(__import__("duckdb").connect()) else [(0,)]
        assert seen[0][0] in (0, 200), seen  # all of the shipment, or nothing
        inside += proc.returncode == -signal.SIGKILL and seen[0][0] == 0
        if seen[0][0] == 200:
            break
    assert inside >= 1
    final = TraceStore(local.directory, lake=lake)
    final.compact()
    assert not final.warnings
    shipped = _lake_rows(
        lake,
        "SELECT count(*), count(DISTINCT (segment, n)), "
        "(SELECT count(*) FROM lake.segments), (SELECT count(DISTINCT name) FROM lake.segments) "
        "FROM lake.events",
    )
    assert shipped == [(1200, 1200, 200, 200)]
    report = final.verify(full=True)
    assert report.ok, report.breaks
    assert final.count_events() == 1200


def test_an_edited_or_deleted_lake_row_is_found_by_verify_and_by_approves_check(lake, tmp_path):
    a, b = (_host(tmp_path, name, lake, 10) for name in ("a", "b"))
    a.compact()
    b.compact()
    first = a.verify()
    assert first.ok and any("segment(s) re-hashed" in n for n in first.notices)
    second = a.verify()  # incremental: what was verified with the same head is not again
    assert second.ok and any("0 segment(s) re-hashed" in n for n in second.notices)
    _lake_write(lake, "UPDATE lake.events SET data = '{\"action\": \"pay_me\"}' "
                "WHERE flow_id = 'b-0002' AND step = 'final'")  # fmt: skip
    report = a.verify(full=True)
    assert not report.ok
    assert any("edited" in brk.problem or "changed" in brk.problem for brk in report.breaks)
    with pytest.raises(TamperedTraceError):
        a.flow("b-0002", verify=True)
    assert a.flow("b-0005", verify=True)  # another segment's flow is untouched
    _lake_write(lake, "DELETE FROM lake.events WHERE flow_id = 'a-0001'")
    problems = {brk.problem for brk in a.verify().breaks}
    assert any("this host's" in p or "removed" in p for p in problems), problems


def test_a_lake_that_is_down_costs_a_warning_when_shipping_and_one_line_when_reading(
    pg_server_private, tmp_path
):
    name = pg_server_private.create_database()
    lake = Lake(pg_server_private.url(name), tmp_path / "lake")
    store = _host(tmp_path, "a", lake, 10)
    store.compact()
    pg_server_private.stop()
    store.append(_flow("a-late"))
    store.close()
    later = TraceStore(store.directory, lake=lake)
    result = later.compact()
    assert result.segments >= 1 and result.shipped == 0  # compacted here, not shipped
    assert any("not shipped to the fleet's lake" in w for w in later.warnings)
    with pytest.raises(TraceStoreError) as caught:
        later.count_events()
    assert "lake is unreachable" in str(caught.value) and "\n" not in str(caught.value)
    pg_server_private.start()
    assert later.compact().shipped >= 1  # the next compaction ships what waited
    assert later.count_events() == 22


def test_missing_extensions_and_a_data_path_without_a_store_are_one_line(
    lake, tmp_path, monkeypatch
):
    from mir.project import find_project

    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[tool.mir]\n[tool.mir.store]\ndata_path = "lake"\n'
    )
    monkeypatch.delenv("MIR_STORE_URL", raising=False)
    with pytest.raises(ConfigError, match="without a fleet store"):
        fleet_lake(find_project(root))
    monkeypatch.setenv("MIR_STORE_URL", lake.url)
    found = fleet_lake(find_project(root))
    assert found is not None and found.data_path == str((root / "lake").resolve())
    monkeypatch.setitem(sys.modules, "duckdb_extension_ducklake", None)
    store = _host(tmp_path, "a", lake, 1)
    with pytest.raises(TraceStoreError, match=r"pip install 'mir\[fleet\]'"):
        store.count_events()


def _desks(tmp_path: Path, lake: Lake, monkeypatch) -> list[Path]:
    """Two support desks ("hosts") on one lake, each with half of a month of decisions
    (different days), shipped."""
    import shutil
    from datetime import UTC, datetime

    from mir.project import find_project
    from tests.support import drift_month

    example = ROOT / "examples" / "support_desk"
    monkeypatch.setenv("MIR_STORE_URL", lake.url)
    monkeypatch.setenv("MIR_STORE_DATA_PATH", lake.data_path)
    roots = []
    end = datetime(2026, 11, 1, tzinfo=UTC)
    for n, name in enumerate(("a", "b")):
        root = tmp_path / name
        shutil.copytree(example, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
        with TraceStore.for_project(find_project(root), fleet_wide=False) as traces:
            drift_month.load().write_month(traces, end=end, days=14, per_day=30, seed=n)
        shipped = TraceStore.for_project(find_project(root)).compact()
        assert shipped.shipped and shipped.shipped_events == shipped.events
        roots.append(root)
    return roots


def _figures(report) -> list:
    return [
        (m.metric, m.reference_n, m.current_n, round(m.value, 9) if m.value is not None else None)
        for agent in report.agents
        for m in agent.metrics
    ]


def test_drift_on_any_host_counts_both_hosts_and_keeps_the_lakes_rows_parsed(
    lake, tmp_path, monkeypatch
):
    from datetime import UTC, datetime

    from mir.drift import WindowOptions, measure

    a, b = _desks(tmp_path, lake, monkeypatch)
    options = WindowOptions(window="7d", reference="21d", now=datetime(2026, 11, 1, tzinfo=UTC))
    first = measure(a, options=options)
    assert _figures(first) == _figures(measure(b, options=options))
    [agent] = [x for x in first.agents if x.agent == "refunds.triage"]
    both = agent.current.decisions
    # this host alone (what it held before the lake) counts about half of them
    monkeypatch.delenv("MIR_STORE_DATA_PATH")
    [alone] = [x for x in measure(a, options=options).agents if x.agent == "refunds.triage"]
    assert 0 < alone.current.decisions < both
    monkeypatch.setenv("MIR_STORE_DATA_PATH", lake.data_path)
    # the other host's rows are kept parsed here: dropping them loses nothing
    import duckdb

    con = duckdb.connect(str(a / ".mir" / "traces" / "traces.duckdb"))
    kept = con.execute("SELECT count(*) FROM drift_lake_rows").fetchone()[0]
    assert kept > 0
    con.execute("DELETE FROM drift_lake_ingested")
    con.execute("DELETE FROM drift_lake_rows")
    con.close()
    assert _figures(measure(a, options=options)) == _figures(first)
    # a final event of host b deleted from the lake: host a (which reads b's events
    # from the lake) counts one decision fewer on its next run, b's verify says so
    con = duckdb.connect(str(b / ".mir" / "traces" / "traces.duckdb"), read_only=True)
    theirs = [row[0] for row in con.execute("SELECT name FROM segments").fetchall()]
    con.close()
    quoted = ", ".join(f"'{name}'" for name in theirs)
    _lake_write(
        lake,
        "DELETE FROM lake.events WHERE flow_id = (SELECT max(flow_id) FROM lake.events "
        f"WHERE step = 'final' AND segment IN ({quoted}) "
        "AND \"at\" > TIMESTAMPTZ '2026-10-25 00:00:00+00') AND step = 'final'",
    )
    [here] = [x for x in measure(a, options=options).agents if x.agent == "refunds.triage"]
    assert here.current.decisions == both - 1
    report = TraceStore.for_project(__import__("mir.project").project.find_project(b)).verify()
    assert any("removed or changed in the lake" in brk.problem for brk in report.breaks)


def test_store_status_says_what_the_lake_holds_and_what_waits_here(lake, tmp_path, monkeypatch):
    from mir.project import find_project
    from mir.runtime import store_status

    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n[tool.mir]\n')
    monkeypatch.setenv("MIR_STORE_URL", lake.url)
    monkeypatch.setenv("MIR_STORE_DATA_PATH", lake.data_path)
    store = TraceStore.for_project(find_project(root))
    for i in range(3):
        store.append(_flow(f"p-{i}"))
    store.close()
    assert store.compact().shipped == 1
    status = store_status(root)
    assert status.lake == {
        "data_path": lake.data_path,
        "segments": 1,
        "lines": 6,
        "not shipped from this host": 0,
    }
    assert any(line.startswith("trace lake: ") for line in status.lines())


def test_two_hosts_shipping_at_once_ship_every_segment_once(lake, tmp_path):
    """DuckLake commits the two hosts' shipments one after the other (its retries on a
    catalog conflict): both finish, no segment is lost or shipped twice."""
    hosts = [_host(tmp_path, name, None, 300) for name in ("a", "b")]
    for host in hosts:
        host.compact()
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    ship = (
        "import sys; from pathlib import Path; from mir.traces import TraceStore;"
        "from mir.traces.lake import Lake;"
        "s = TraceStore(Path(sys.argv[1]), lake=Lake(sys.argv[2], sys.argv[3]));"
        "r = s.compact(); print(r.shipped, s.warnings)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ship, str(h.directory), lake.url, lake.data_path],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for h in hosts
    ]
    said = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], said
    assert [out.strip() for out, _err in said] == ["100 []", "100 []"], said
    rows = _lake_rows(
        lake,
        "SELECT count(*), count(DISTINCT (segment, n)), (SELECT count(*) FROM lake.segments) "
        "FROM lake.events",
    )
    assert rows == [(1200, 1200, 200)]
    assert TraceStore(hosts[0].directory, lake=lake).verify(full=True).ok


def test_a_secret_never_reaches_the_lakes_parquet_files(lake, tmp_path):
    secret = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    store = TraceStore(tmp_path / "a" / "traces", lake=lake, environ={"PAY_API_KEY": secret})
    for i in range(5):
        flow = _flow(f"s-{i}")
        flow[1] = flow[1].model_copy(update={"data": {"note": f"key {secret}", "source": "x"}})
        store.append(flow)
    store.close()
    assert store.compact().shipped
    # small shipments are inlined in the catalog (Postgres), larger ones are Parquet:
    # neither holds the secret, both hold the redacted lines
    seen = _lake_rows(
        lake,
        f"SELECT count(*) FILTER (WHERE data LIKE '%{secret}%'), "
        "count(*) FILTER (WHERE data LIKE '%REDACTED%') FROM lake.events",
    )
    assert seen == [(0, 5)]
    import psycopg

    with psycopg.connect(lake.url) as con:
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'mir_lake'"
        ).fetchall()
        for (table,) in tables:
            hits = con.execute(
                f'SELECT count(*) FROM mir_lake."{table}" t WHERE t::text LIKE %s',
                (f"%{secret}%",),
            ).fetchone()[0]
            assert hits == 0, table
    for path in Path(lake.data_path).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes()


def test_drift_history_and_frozen_references_are_the_fleets(lake, tmp_path, monkeypatch):
    """With a lake, a drift run or a snapshot on one host is in every host's history."""
    from datetime import UTC, datetime

    from mir.drift import WindowOptions, history, measure, snapshot

    a, b = _desks(tmp_path, lake, monkeypatch)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    options = WindowOptions(window="7d", reference="21d", now=now)
    report = measure(a, options=options)
    assert report.stored
    points = history("refunds.triage", "action.js", project=b)
    assert [p.at for p in points] == [now]  # host a's run, read on host b
    frozen = snapshot("refunds.triage", "baseline", project=a, options=WindowOptions(now=now))
    again = measure(b, options=WindowOptions(frozen_reference="baseline", now=now))
    [agent] = [x for x in again.agents if x.agent == "refunds.triage"]
    assert agent.reference.decisions == frozen.decisions > 0
    assert len(history("refunds.triage", "action.js", project=a)) == 2  # and b's run too
    import duckdb

    con = duckdb.connect(str(a / ".mir" / "traces" / "traces.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM drift_metrics").fetchone()[0] == 0  # not here
    con.close()


def test_store_migrate_copies_a_hosts_local_drift_history_into_the_fleets(
    lake, tmp_path, monkeypatch
):
    from datetime import UTC, datetime

    from mir.drift import WindowOptions, copy_drift_history, history, measure, snapshot
    from mir.runtime import migrate_store

    a, b = _desks(tmp_path, lake, monkeypatch)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    monkeypatch.delenv("MIR_STORE_DATA_PATH")  # before the lake: drift's history is local
    assert measure(a, options=WindowOptions(now=now)).stored
    snapshot("refunds.triage", "before", project=a, options=WindowOptions(now=now))
    monkeypatch.setenv("MIR_STORE_DATA_PATH", lake.data_path)
    assert history("refunds.triage", "action.js", project=b) == []
    copies = {"drift records": copy_drift_history}
    dry = migrate_store(a, dry_run=True, histories=copies)
    assert dry.histories["drift records"].copied > 1
    assert history("refunds.triage", "action.js", project=b) == []  # a dry run wrote nothing
    done = migrate_store(a, histories=copies)
    assert done.histories["drift records"].copied == dry.histories["drift records"].copied
    assert len(history("refunds.triage", "action.js", project=b)) == 1
    again = measure(b, options=WindowOptions(frozen_reference="before", now=now))
    assert again.agents  # host a's frozen reference, used on host b
    twice = migrate_store(a, histories=copies).histories["drift records"]
    assert (twice.copied, twice.already) == (0, done.histories["drift records"].copied)
