"""Submitted decisions and the fleet's workers: ``Agent.submit`` / ``result`` in this
process, ``mir worker`` as real subprocesses, one real Postgres (``pg_url``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

from .conftest import RUNTIME_PROJECT
from .test_run_agent import GOOD, executed, script

pytestmark = [pytest.mark.fleet, pytest.mark.slow]

ORDER = {"order_id": "A1", "amount": 40, "message": "arrived broken"}
FAST = "\n[tool.mir.workers]\nheartbeat_s = 0.3\nstalled_s = 1.0\npoll_s = 0.1\n"


def _host(tmp_path: Path, name: str = "a", replies: int = 50) -> Path:
    root = tmp_path / name
    shutil.copytree(RUNTIME_PROJECT, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    with (root / "pyproject.toml").open("a") as f:
        f.write(FAST)
    script(root, *([GOOD] * replies))
    return root


def _worker(url: str, root: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    """``mir worker ARGS`` in a session of its own (a kill reaches its children)."""
    return subprocess.Popen(
        [str(MIR_EXE), "worker", *args, "--provider", "scripted", "--responses",
         "responses.jsonl"],
        cwd=root, env={**os.environ, "MIR_STORE_URL": url, "NO_COLOR": "1", **env},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


@pytest.fixture
def agent(pg_url, tmp_path, monkeypatch):
    from mir.runtime import load_agent

    root = _host(tmp_path)
    monkeypatch.setenv("MIR_STORE_URL", pg_url)
    loaded = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
    yield loaded, root
    loaded.close()


def test_submitted_flows_are_decided_once_by_two_worker_processes(pg_url, agent):
    agent, root = agent
    ids = [agent.submit(ORDER) for _ in range(20)]
    assert len(set(ids)) == 20
    worker = _worker(pg_url, root, "refunds.triage", "-j", "2")
    try:
        records = [agent.result(i, timeout=60) for i in ids]
    finally:
        code, _out, err = _stop(worker)
    assert code == 0, err
    assert "Traceback" not in err
    assert [r.flow_id for r in records] == ids
    assert {r.status for r in records} == {"executed"}
    keys = Counter(line["key"] for line in executed(root))
    assert len(keys) == 20 and set(keys.values()) == {1}
    # a record is there at once afterwards, and the input left the queue
    assert agent.result(ids[0], timeout=0).status == "executed"
    assert agent.deps.submissions.queued(ids[0]) is False


def test_completion_callbacks_are_called_once_each_with_the_flows_record(pg_url, agent):
    """``when_decided``: callbacks registered before the worker starts, one after the
    flow was decided, one with a timeout that passes first, and one that raises (which
    stops none of the others)."""
    import threading

    from mir.errors import UsageError

    agent, root = agent
    ids = [agent.submit(ORDER) for _ in range(30)]
    got: list[tuple[str, str]] = []
    lock, all_in = threading.Lock(), threading.Event()

    def done(record):
        with lock:
            got.append((record.flow_id, record.status))
            if len(got) == len(ids):
                all_in.set()

    agent.when_decided(ids[0], lambda record: 1 / 0)  # logged, never fatal
    for flow_id in ids:
        agent.when_decided(flow_id, done)
    late: list[BaseException] = []
    worker = _worker(pg_url, root, "refunds.triage")
    try:
        assert all_in.wait(60), f"{len(got)} of {len(ids)} callbacks"
    finally:
        code, _out, err = _stop(worker)
    assert code == 0, err
    assert sorted(got) == sorted((i, "executed") for i in ids)  # each once, its own record
    again = threading.Event()
    agent.when_decided(ids[3], lambda record: again.set())  # already decided: called soon
    assert again.wait(10)
    # no worker now: a flow waits, its timeout passes, on_error gets ResultTimeout
    waiting = agent.submit(ORDER)
    timed_out = threading.Event()
    agent.when_decided(
        waiting, done, timeout=0.5, on_error=lambda exc: (late.append(exc), timed_out.set())
    )
    assert timed_out.wait(10)
    assert type(late[0]).__name__ == "ResultTimeout"
    with pytest.raises(UsageError, match="no flow"):
        agent.when_decided("q" + "0" * 31, done)


def _wait_for(path: Path, timeout: float = 60) -> None:
    until = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < until, f"{path} never appeared"
        time.sleep(0.05)


def _executions(url: str) -> list[tuple[str, bool]]:
    """Every execution the ledger claimed: (flow id, completed ok)."""
    import psycopg

    with psycopg.connect(url, options="-c search_path=mir") as con:
        rows = con.execute("SELECT info, outcome FROM executions").fetchall()
    return [(json.loads(i)["flow_id"], bool(o and json.loads(o).get("ok"))) for i, o in rows]


def test_a_worker_killed_inside_an_executor_never_runs_the_action_twice(pg_url, agent, tmp_path):
    agent, root = agent
    hold = tmp_path / "hold"
    first = subprocess.Popen(
        [str(MIR_EXE), "worker", "--provider", "scripted", "--responses", "responses.jsonl"],
        cwd=root, env={**os.environ, "MIR_STORE_URL": pg_url, "REFUNDS_HOLD": str(hold)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    flow_id = agent.submit(ORDER)
    _wait_for(Path(f"{hold}.started"))
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    second = _worker(pg_url, root)
    try:
        record = agent.result(flow_id, timeout=60)
    finally:
        code, _out, err = _stop(second)
    assert code == 0, err
    assert record.status == "aborted"
    assert record.reasons == ["interrupted", "execution_in_doubt"]
    assert record.flow_id == flow_id  # the attempt that claimed the execution
    assert "its action may have run" in record.problems[0]
    assert executed(root) == []  # the executor was killed before it wrote
    assert [f for f, _ok in _executions(pg_url)] == [flow_id]  # and never claimed again


def test_a_worker_killed_before_any_execution_is_retried_and_executes_once(pg_url, agent, tmp_path):
    agent, root = agent
    hold = tmp_path / "world"
    first = _worker(pg_url, root, REFUNDS_HOLD_CONTEXT=str(hold))
    flow_id = agent.submit(ORDER)
    _wait_for(Path(f"{hold}.started"))  # inside the context loader: nothing claimed yet
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    second = _worker(pg_url, root)
    try:
        record = agent.result(flow_id, timeout=60)
    finally:
        code, _out, err = _stop(second)
    assert code == 0, err
    assert record.status == "executed"
    assert record.flow_id == f"{flow_id}-r1"  # the retry's own flow id
    assert len(executed(root)) == 1
    assert _executions(pg_url) == [(f"{flow_id}-r1", True)]
    # the dead attempt's flow id is fenced: it can never claim an execution now
    from mir.runtime import FlowAlreadyDecided

    with pytest.raises(FlowAlreadyDecided, match="superseded"):
        agent.deps.ledger.claim(
            "late-key", {"flow_id": flow_id, "agent": "refunds.triage", "by": "late"}
        )


def test_workers_killed_at_random_points_lose_nothing_and_run_nothing_twice(pg_url, tmp_path):
    import random

    from mir.runtime import load_agent

    root = _host(tmp_path, replies=200)
    os.environ["MIR_STORE_URL"] = pg_url
    try:
        agent = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
        ids = [agent.submit(ORDER) for _ in range(60)]
        rng = random.Random(7)
        for _ in range(4):  # a worker decides for a while and is killed wherever it is
            victim = _worker(pg_url, root, REFUNDS_DELAY_S="0.02")
            time.sleep(rng.uniform(0.3, 1.2))
            os.killpg(victim.pid, signal.SIGKILL)
            victim.communicate(timeout=30)
        last = _worker(pg_url, root, "-j", "2")
        try:
            records = {i: agent.result(i, timeout=120) for i in ids}
        finally:
            code, _out, err = _stop(last)
        agent.close()
    finally:
        del os.environ["MIR_STORE_URL"]
    assert code == 0, err
    runs = _executions(pg_url)
    per_submission = Counter(f.split("-r")[0] for f, _ok in runs)
    assert set(per_submission.values()) <= {1}, "an action was claimed twice"
    for _flow_id, record in records.items():
        if record.status == "executed":
            assert (record.flow_id, True) in runs
        else:  # only a flow killed mid-execution is left in doubt
            assert record.reasons == ["interrupted", "execution_in_doubt"], record
    lines = len(executed(root))
    assert sum(ok for _f, ok in runs) <= lines <= len(runs)  # nothing ran unrecorded


def test_a_flow_that_waited_past_its_deadline_is_decided_by_the_rules(pg_url, agent):
    agent, root = agent
    flow_id = agent.submit(ORDER, deadline_ms=50)
    time.sleep(0.3)  # no worker yet: the deadline passes in the queue
    worker = _worker(pg_url, root)
    try:
        record = agent.result(flow_id, timeout=60)
    finally:
        _stop(worker)
    assert "shed" in record.reasons, record
    assert record.provider != "scripted"


def test_a_thousand_submissions_with_two_workers_are_each_decided_once(pg_url, tmp_path):
    from mir.runtime import load_agent

    root = _host(tmp_path, replies=1000)
    os.environ["MIR_STORE_URL"] = pg_url
    try:
        agent = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
        ids = [agent.submit(ORDER) for _ in range(1000)]
        worker = _worker(pg_url, root, "-j", "2")
        try:
            records = [agent.result(i, timeout=300) for i in ids]
        finally:
            code, out, err = _stop(worker)
        agent.close()
    finally:
        del os.environ["MIR_STORE_URL"]
    assert code == 0, err
    assert {r.status for r in records} == {"executed"}
    assert len({r.flow_id for r in records}) == 1000
    keys = Counter(line["key"] for line in executed(root))
    assert len(keys) == 1000 and set(keys.values()) == {1}
    assert len({line["pid"] for line in executed(root)}) == 2  # both workers decided
    assert out.count("executed (ok)") == 1000


def test_submit_and_result_say_what_is_wrong_in_one_line(pg_url, agent, tmp_path):
    from mir.errors import UsageError
    from mir.runtime import ResultTimeout, load_agent

    agent, root = agent
    flow_id = agent.submit(ORDER, flow_id="order-A1-refund")
    assert flow_id == "order-A1-refund"
    with pytest.raises(UsageError, match="is submitted already"):
        agent.submit(ORDER, flow_id="order-A1-refund")
    with pytest.raises(ResultTimeout, match=r"has no outcome after 0\.2 s"):
        agent.result(flow_id, timeout=0.2)
    with pytest.raises(UsageError, match="no flow q0 was submitted"):
        agent.result("q0", timeout=1)
    with pytest.raises(UsageError, match="ends like a retry's"):
        agent.submit(ORDER, flow_id="order-A1-r2")
    with pytest.raises(UsageError, match="not JSON"):
        agent.submit({"order_id": object()})
    os.environ.pop("MIR_STORE_URL")
    local = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
    with pytest.raises(UsageError, match="submit needs the fleet store"):
        local.submit(ORDER)
    local.close()
    alone = subprocess.run(
        [str(MIR_EXE), "worker"], cwd=root, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "MIR_STORE_URL"},
    )  # fmt: skip
    assert alone.returncode == 2
    assert alone.stderr.strip().splitlines() == [
        "error: mir worker needs the fleet store: submissions wait in Postgres "
        "(set [tool.mir.store] url (or $MIR_STORE_URL))"
    ]


def test_submit_with_postgres_down_fails_closed_in_one_line(pg_server_private, tmp_path):
    from mir.runtime import load_agent
    from mir.storage import StoreUnavailable

    root = _host(tmp_path)
    os.environ["MIR_STORE_URL"] = pg_server_private.url()
    try:
        agent = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
        agent.submit(ORDER)
        pg_server_private.stop()
        with pytest.raises(StoreUnavailable) as caught:
            agent.submit(ORDER)
        assert "\n" not in str(caught.value)
        pg_server_private.start()
        assert agent.submit(ORDER)  # back: submits again
        agent.close()
    finally:
        del os.environ["MIR_STORE_URL"]


def test_three_hosts_decide_three_times_200_submissions_under_random_kills(pg_url, tmp_path):
    """The fleet simulation through the workers: three project folders ("hosts") on one
    Postgres and one trace lake, each submitting 200 flows and running a worker that is
    SIGKILLed at random moments and started again; then one worker per host drains the
    queue. Every host's `mir traces list` and `mir drift` then show the whole fleet."""
    import random

    from mir.runtime import load_agent

    hosts = [_host(tmp_path, name, replies=700) for name in ("a", "b", "c")]
    os.environ["MIR_STORE_URL"] = pg_url
    os.environ["MIR_STORE_DATA_PATH"] = str(tmp_path / "lake")
    try:
        agents = [
            load_agent("refunds.triage", project=h, provider="rules", watch_models=False)
            for h in hosts
        ]
        ids = [agent.submit(ORDER) for agent in agents for _ in range(200)]
        rng = random.Random(21)
        for _ in range(3):  # every host's worker runs a while, then dies wherever it is
            victims = [_worker(pg_url, h, REFUNDS_DELAY_S="0.01") for h in hosts]
            for victim in victims:
                time.sleep(rng.uniform(0.2, 0.8))
                os.killpg(victim.pid, signal.SIGKILL)
            for victim in victims:
                victim.communicate(timeout=30)
        drains = [_worker(pg_url, h) for h in hosts]
        try:
            records = {i: agents[n // 200].result(i, timeout=300) for n, i in enumerate(ids)}
        finally:
            stops = [_stop(d) for d in drains]
        for agent in agents:  # production decisions (by the rules): drift's evidence
            for _ in range(40):
                agent.decide(ORDER)
            agent.close()
        views = [_fleet_view(h) for h in hosts]
    finally:
        del os.environ["MIR_STORE_URL"]
        del os.environ["MIR_STORE_DATA_PATH"]
    assert [code for code, _o, _e in stops] == [0, 0, 0], [e for _c, _o, e in stops]
    assert len(records) == 600  # every submission has its one outcome: none lost
    # every host sees every host's flows, and the same drift figures as one host would
    flows, drift = views[0]
    submitted = {f for f in flows if f.startswith("q")}  # submit's ids; decide's are hex
    assert {f.split("-r")[0] for f in submitted} == set(ids)
    assert len(flows - submitted) == 3 * 40
    assert all(view == views[0] for view in views[1:])
    assert drift and drift == _single_host_drift(hosts, tmp_path / "one")
    runs = _executions(pg_url)
    per_submission = Counter(f.split("-r")[0] for f, _ok in runs)
    assert set(per_submission.values()) <= {1}, "an action was claimed twice"
    statuses = Counter(r.status for r in records.values())
    assert set(statuses) <= {"executed", "aborted"}, statuses
    for record in records.values():
        if record.status == "executed":
            assert (record.flow_id, True) in runs
        else:
            assert record.reasons == ["interrupted", "execution_in_doubt"], record
    lines = sum(len(executed(h)) for h in hosts)
    assert sum(ok for _f, ok in runs) <= lines <= len(runs)
    assert statuses["executed"] >= 590  # the kills hit a few flows, not the run


def _mir(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(MIR_EXE), *args], cwd=root, env=env or {**os.environ, "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _fleet_view(root: Path) -> tuple[set[str], list[dict]]:
    """This host's `mir traces list` (every flow of the fleet, once all hosts shipped)
    and its `mir drift` figures, after every host compacted (shipping to the lake)."""
    for host in root.parent.glob("[abc]"):
        _mir(host, "traces", "compact")
    listed = json.loads(_mir(root, "traces", "list", "--source", "all", "--limit", "10000",
                             "--json"))  # fmt: skip
    return {f["flow_id"] for f in listed}, _drift(root)


def _drift(root: Path, env: dict[str, str] | None = None) -> list[dict]:
    report = json.loads(_mir(root, "drift", "--last", "40", "--all", "--json", env=env))
    return [{k: v for k, v in agent.items() if k != "notes"} for agent in report["agents"]]


def _single_host_drift(hosts: list[Path], one: Path) -> list[dict]:
    """The drift figures of one local host holding every host's events."""
    from mir.project import find_project
    from mir.traces import TraceStore

    shutil.copytree(hosts[0], one, ignore=shutil.ignore_patterns(".mir"))
    events = []
    for host in hosts:
        local = TraceStore.for_project(find_project(host), fleet_wide=False)
        events += list(local.events())
        local.close()
    merged = TraceStore.for_project(find_project(one))
    merged.append(events)
    merged.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIR_STORE")}
    return _drift(one, env={**env, "NO_COLOR": "1"})


def test_a_batch_through_the_workers_resumes_after_a_kill_without_deciding_twice(pg_url, tmp_path):
    root = _host(tmp_path, replies=100)
    rows = [{**ORDER, "message": f"row {i}"} for i in range(30)]
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "MIR_STORE_URL": pg_url, "NO_COLOR": "1"}
    batch = [str(MIR_EXE), "run", "agent", "refunds.triage", "--batch", "rows.jsonl", "--workers"]
    worker = _worker(pg_url, root, REFUNDS_DELAY_S="0.05")
    try:
        first = subprocess.Popen(
            batch, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        until = time.monotonic() + 60
        while len(executed(root)) < 5:  # some rows decided, most still queued or not sent
            assert time.monotonic() < until and first.poll() is None, first.stderr.read()
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
        again = subprocess.run(
            [*batch, "--json"], cwd=root, env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        code, _out, err = _stop(worker)
    assert again.returncode == 0, again.stderr
    assert code == 0, err
    report = json.loads(again.stdout)
    assert report["statuses"] == {"executed": 30}, report
    results = [json.loads(line) for line in (root / "rows.results.jsonl").read_text().splitlines()]
    assert len({r["key"] for r in results}) == 30
    keys = Counter(line["key"] for line in executed(root))
    assert len(keys) == 30 and set(keys.values()) == {1}  # each row's action ran once


def test_a_batch_with_workers_refuses_what_only_a_worker_takes(pg_url, tmp_path):
    root = _host(tmp_path)
    (root / "rows.jsonl").write_text(json.dumps(ORDER) + "\n")
    env = {**os.environ, "MIR_STORE_URL": pg_url, "NO_COLOR": "1"}
    base = [str(MIR_EXE), "run", "agent", "refunds.triage", "--batch", "rows.jsonl", "--workers"]
    for extra, message in (
        (["-j", "2"], "--provider, --responses and -j are the workers' with --workers"),
        (["--provider", "rules"], "--provider, --responses and -j are the workers'"),
    ):
        done = subprocess.run([*base, *extra], cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    env.pop("MIR_STORE_URL")
    done = subprocess.run(base, cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert "--workers needs the fleet store" in done.stderr and "Traceback" not in done.stderr


def test_a_submitted_flow_that_stops_for_review_is_approved_from_another_host(
    pg_url, agent, tmp_path
):
    agent, root = agent
    script(root, *([{**GOOD, "confidence": 0.3}] * 5))
    other = _host(tmp_path, "b")
    flow_id = agent.submit(ORDER)
    worker = _worker(pg_url, root)
    try:
        record = agent.result(flow_id, timeout=60)
    finally:
        _stop(worker)
    assert record.status == "pending_review"
    env = {**os.environ, "MIR_STORE_URL": pg_url, "NO_COLOR": "1"}
    listed = subprocess.run(
        [str(MIR_EXE), "review", "list", "--json"], cwd=other, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert [i["flow_id"] for i in json.loads(listed.stdout)["items"]] == [flow_id]
    approved = subprocess.run(
        [str(MIR_EXE), "approve", flow_id, "--by", "ana", "--json"], cwd=other, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "executed"
    assert len(executed(other)) == 1 and executed(root) == []


SECRET = "sk-abcdefghijklmnopqrstuvwxyz123456"  # an OpenAI-shaped key


def test_a_secret_in_the_input_and_the_decision_is_kept_out_of_the_outcome_and_the_queue(
    pg_url, agent
):
    import psycopg

    agent, root = agent
    script(root, *([{**GOOD, "reason": f"customer pasted {SECRET}"}] * 5))
    flow_id = agent.submit({**ORDER, "message": f"my key is {SECRET}"})
    with psycopg.connect(pg_url, options="-c search_path=mir") as con:
        queued = con.execute("SELECT args::text FROM procrastinate_jobs").fetchall()
    assert SECRET in queued[0][0]  # the worker needs the input as it was given
    worker = _worker(pg_url, root)
    try:
        record = agent.result(flow_id, timeout=60)
    finally:
        _stop(worker)
    assert record.status == "executed"
    assert SECRET not in record.model_dump_json()
    with psycopg.connect(pg_url, options="-c search_path=mir") as con:
        stored = con.execute("SELECT record::text FROM decided").fetchall()
        left = con.execute("SELECT count(*) FROM procrastinate_jobs").fetchone()[0]
    assert stored and SECRET not in stored[0][0]
    assert left == 0  # the input left the queue once decided
