"""Attacks on drift's kept rows and the final event's source / contract hash (rows.py,
queries.py): each test here failed before its fix. A report must be what the store
says, kept rows or not, whatever the store's age or permissions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mir.drift import WindowOptions, measure
from mir.project import find_project
from mir.traces import TraceEvent, TraceStore
from tests.support import drift_month
from tests.support.drift_flows import db, decision_flow, desk

END = datetime(2026, 11, 1, tzinfo=UTC)
month = drift_month.load()


def flows(start: int, count: int, at: datetime, *, source: str | None, legacy: bool = False):
    """``count`` flows (snapshot + final) one second apart from ``at``; ``source`` None is a
    production flow; ``legacy``: the source is in the snapshot only (finals from before)."""
    events = []
    for i in range(start, start + count):
        events += decision_flow(
            f"atk{i:029d}",
            month.AGENT,
            at + timedelta(seconds=i - start),
            {
                "decision": {"action": "refund", "amount": 10.0, "confidence": 0.9},
                "latency_ms": 100.0,
                "tokens": 10,
            },
            source=source,
            legacy=legacy,
            final_after=timedelta(milliseconds=500),
            status="executed",
            provider="llama",
            model="m",
            cost_usd=0.001,
        )
    return events


def append(root: Path, events: list[TraceEvent], *, compact: bool = True) -> None:
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(events)
    if compact:
        TraceStore.for_project(find_project(root)).compact()


# -- --last N counts production decisions ------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["source-in-final", "legacy-final"])
def test_last_n_is_the_last_n_production_decisions_not_n_minus_the_eval_flows(tmp_path, legacy):
    """Eval flows that ended after the production ones must not eat into ``--last N``:
    the current window holds the last N production decisions, the reference the M
    before them, whatever else the agent's traces hold."""
    root = desk(tmp_path)
    start = END - timedelta(days=1)
    append(root, flows(0, 300, start, source=None, legacy=legacy))
    # then 60 eval runs, the newest finals of the agent
    append(root, flows(300, 60, start + timedelta(hours=1), source="eval", legacy=legacy))
    options = WindowOptions(last=50, reference_last=200, now=END)
    for store in (False, True, False):  # parsed now, parsing and keeping, kept
        [agent] = measure(root, options=options, store=store).agents
        assert (agent.reference.decisions, agent.current.decisions) == (200, 50)


# -- a read-only store written by an older mir ---------------------------------------------

MIR = Path(sys.executable).with_name("mir")


def _as_reader(args: list[str]) -> list[str]:
    """The command run by a user who may not write the store: root ignores file modes
    (and ``os.access`` says so), so as root the capabilities that do are dropped."""
    if os.geteuid() != 0:
        return args
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only store cannot be simulated")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--", *args]


def _read_only(path: Path, *, on: bool) -> None:
    for item in [path, *path.rglob("*")]:
        mode = item.stat().st_mode
        item.chmod(mode & ~0o222 if on else mode | 0o200)


def test_a_read_only_store_from_before_the_kept_rows_is_read_not_refused(tmp_path):
    """``mir drift`` on a store an older mir wrote (no ``0006_create_drift_rows``) that
    this user may not write: reading never needs write access, and the report is the
    one a writer makes after migrating."""
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=END, days=28, per_day=30, seed=4)
    TraceStore.for_project(find_project(root)).compact()
    con = duckdb.connect(str(db(root)))
    con.execute("DROP TABLE IF EXISTS drift_rows")  # drift never ran: its tables
    con.execute("DROP TABLE IF EXISTS drift_ingested")  # are not made yet
    con.execute("DELETE FROM _mir_migrations WHERE name = '0006_create_drift_rows'")
    con.close()
    args = [str(MIR), "drift", "--last", "100", "--format", "json"]
    env = {**os.environ, "NO_COLOR": "1"}
    _read_only(root / ".mir", on=True)
    try:
        read = subprocess.run(
            _as_reader(args), cwd=root, env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        _read_only(root / ".mir", on=False)
    assert read.returncode in (0, 1), read.stderr
    written = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert written.returncode == read.returncode, written.stderr

    def figures(text: str) -> Any:
        import json

        report = json.loads(text)
        return [
            (
                a["agent"],
                [
                    (m["metric"], m["verdict"], m["reference_n"], m["current_n"])
                    for m in a["metrics"]
                ],
            )
            for a in report["agents"]
        ]

    assert figures(read.stdout) == figures(written.stdout)
    assert figures(read.stdout)[0][1]  # it measured something


# -- hostile decisions -------------------------------------------------------------------


def _limit_memory() -> None:  # runs in the child: a runaway query fails, not the machine
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_a_few_decisions_with_ten_thousand_keys_do_not_exhaust_memory(tmp_path):
    """Five hostile decisions of 10,000 keys each made 10,000 decision fields, parsed
    into a 10,000-member struct for every flow: `mir drift` ran out of memory (the OOM
    killer took it). The fields measured are the ones most decisions have."""
    import json

    root = desk(tmp_path)
    start = END - timedelta(days=1)
    events = flows(0, 300, start, source=None)
    for event in flows(300, 5, start + timedelta(hours=1), source=None):
        if event.step == "final":
            event.data["record"]["decision"] = {f"k{j}": j for j in range(10_000)}
        events.append(event)
    append(root, events)
    for _ in range(2):  # parsed now, then from the kept rows
        done = subprocess.run(
            [str(MIR), "drift", "--last", "50", "--format", "json"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=_limit_memory,
            check=False,
        )
        assert done.returncode in (0, 1), done.stderr[-2000:]
        [agent] = json.loads(done.stdout)["agents"]
        fields = {
            m["metric"].split(".")[1] for m in agent["metrics"] if m["metric"].startswith("field.")
        }
        assert "amount" in fields and len(fields) <= 64


# -- change points count production flows only -------------------------------------------


def _with_prompt(events: list[TraceEvent], prompt: str) -> list[TraceEvent]:
    """The flows' events with an ``infer`` event (the model call, its prompt's hash)."""
    out = []
    for event in events:
        if event.step == "final":
            out.append(
                TraceEvent(
                    flow_id=event.flow_id,
                    seq=1,
                    step="infer",
                    agent=event.agent,
                    at=event.at - timedelta(milliseconds=200),
                    provider="llama",
                    model="m",
                    prompt_hash=prompt,
                    data={},
                )
            )
            data = event.data
            if "source" in data:  # a final as the runtime writes it lists its prompts
                data = {**data, "prompt_hashes": [prompt]}
            event = event.model_copy(update={"seq": 2, "data": data})
        out.append(event)
    return out


@pytest.mark.parametrize("legacy", [False, True], ids=["source-in-final", "legacy-final"])
def test_an_eval_run_of_an_edited_prompt_is_no_new_prompt_of_production(tmp_path, legacy):
    """`mir eval` of a prompt edit (its flows in the current window) must not name the
    edited prompt a likely cause of the production agent's drift: only the windows'
    production flows count, in time windows as in counted ones."""
    root = desk(tmp_path)
    now = END
    events = _with_prompt(flows(0, 300, now - timedelta(days=5), source=None, legacy=legacy), "p1")
    events += _with_prompt(
        flows(300, 250, now - timedelta(hours=12), source=None, legacy=legacy), "p1"
    )
    events += _with_prompt(
        flows(600, 40, now - timedelta(hours=2), source="eval", legacy=legacy), "p2-edited"
    )
    append(root, events)
    for options in (
        WindowOptions(window="24h", reference="7d", now=now),
        WindowOptions(last=200, reference_last=300, now=now),
    ):
        for store in (False, True, False):
            [agent] = measure(root, options=options, store=store).agents
            assert agent.current.decisions > 0
            assert not [c for c in agent.likely_causes if "p2-edited" in c], options


# -- decision fields whose names differ only in case ---------------------------------------


def test_fields_named_alike_but_for_case_are_each_measured(tmp_path):
    """One agent's decisions say ``Amount``, another's ``amount`` (and a third agent has
    both): DuckDB's struct members ignore case, so one shape holding both made every
    `mir drift` fail. Each agent's field is measured under its own name."""
    root = desk(tmp_path)
    start = END - timedelta(days=1)
    events = flows(0, 300, start, source=None)  # month.AGENT: "amount"
    for agent, decision in (
        ("other.caps", lambda i: {"action": "refund", "Amount": float(i % 7)}),
        ("both.cases", lambda i: {"action": "refund", "amount": 1.0, "Amount": float(i % 5)}),
    ):
        for i, event in enumerate(flows(1000 * len(agent), 300, start, source=None)):
            event = event.model_copy(update={"agent": agent})
            if event.step == "final":
                event.data["record"]["decision"] = decision(i // 2)
            events.append(event)
    append(root, events)
    options = WindowOptions(last=50, reference_last=200, now=END)
    for store in (False, True, False):
        report = measure(root, options=options, store=store)
        found = {
            a.agent: {m.metric.split(".")[1] for m in a.metrics if m.metric.startswith("field.")}
            for a in report.agents
        }
        assert found == {
            month.AGENT: {"amount"},
            "other.caps": {"Amount"},
            "both.cases": {"amount", "Amount"},
        }
        means = {
            a.agent: {m.metric: m for m in a.metrics}["field.Amount.ks"].reference_n
            for a in report.agents
            if a.agent != month.AGENT
        }
        assert means == {"other.caps": 200, "both.cases": 200}


def test_a_field_numeric_for_one_agent_and_categorical_for_another_is_both(tmp_path):
    """``amount`` is a number in one agent's decisions and a word in another's: one
    shape for both parsed one agent's values as the other's type (all NULL)."""
    root = desk(tmp_path)
    start = END - timedelta(days=1)
    events = flows(0, 300, start, source=None)  # month.AGENT: a numeric "amount"
    for i, event in enumerate(flows(5000, 300, start, source=None)):
        event = event.model_copy(update={"agent": "a.words"})
        if event.step == "final":
            # the last 50 (the current window) all "high": the mix moved
            word = "high" if i // 2 >= 250 else ["low", "high"][(i // 2) % 2]
            event.data["record"]["decision"] = {"amount": word}
        events.append(event)
    append(root, events)
    options = WindowOptions(last=50, reference_last=200, now=END)
    for store in (False, True, False):
        agents = {a.agent: a for a in measure(root, options=options, store=store).agents}
        words = {m.metric: m for m in agents["a.words"].metrics}
        numbers = {m.metric: m for m in agents[month.AGENT].metrics}
        assert words["field.amount.psi"].reference_n == 200, words.keys()
        assert words["field.amount.psi"].value > 0.5  # low/high -> high, not (none) -> (none)
        assert numbers["field.amount.ks"].reference_n == 200


# -- a field the decisions gained later -----------------------------------------------------


def test_last_n_measures_a_field_added_after_the_first_decisions_ever(tmp_path):
    """Fields were found in the first 2,000 decisions stored (scan order): with a longer
    history, `--last N` never measured a field the contract added since, nor any drift
    of it. The fields are found in the newest decisions of the windows."""
    root = desk(tmp_path)
    old = flows(0, 2500, END - timedelta(days=20), source=None)
    recent = flows(3000, 400, END - timedelta(hours=2), source=None)
    for i, event in enumerate(recent):
        if event.step == "final":
            # the new field drifts: 1.0 in the reference, 9.0 in the current window
            event.data["record"]["decision"]["priority"] = 9.0 if i // 2 >= 350 else 1.0
    append(root, old + recent)
    options = WindowOptions(last=50, reference_last=300, now=END)
    for store in (False, True, False):
        [agent] = measure(root, options=options, store=store).agents
        metrics = {m.metric: m for m in agent.metrics}
        assert "field.priority.ks" in metrics, sorted(metrics)
        assert metrics["field.priority.ks"].value == 1.0


# -- window sizes at the edge of a 64-bit integer ------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--last", "5", "--reference-last", str(2**63 - 1)],
        ["--last", str(2**63 - 1)],
        ["--last", "1" + "0" * 42],
        ["--last", "3", "--reference-last", "1" + "0" * 44],
    ],
    ids=["huge-reference", "huge-current", "beyond-128-bits", "reference-beyond-128-bits"],
)
def test_huge_counted_windows_are_all_the_decisions_not_an_overflow(tmp_path, args):
    """``--reference-last 9223372036854775807`` overflowed DuckDB's BIGINT (5 + it):
    a traceback instead of a report. A window larger than the history is the history."""
    root = desk(tmp_path)
    append(root, flows(0, 300, END - timedelta(days=1), source=None))
    done = subprocess.run(
        [str(MIR), "drift", *args, "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-800:]
    import json

    [agent] = json.loads(done.stdout)["agents"]
    assert agent["reference"]["decisions"] + agent["current"]["decisions"] == 300


@pytest.mark.parametrize(
    "args",
    [["--window", "99999999999d"], ["--reference", "99999999999999d"], ["--window", "999999999d"]],
)
def test_a_duration_beyond_a_century_is_one_line_not_a_traceback(tmp_path, args):
    root = desk(tmp_path)
    append(root, flows(0, 10, END - timedelta(days=1), source=None))
    done = subprocess.run(
        [str(MIR), "drift", *args], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert "longer than 100 years" in done.stderr
