"""`mir run agent NAME --batch FILE` through the installed `mir`: every row decided once,
a re-run skips what is decided, killed runs (SIGKILL of the whole process group, at
random moments, with and without workers) resume without any row executed twice, and
bad input is one line (exit 2) before anything is decided."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
AGENT = "refunds.triage"


def _reply(i: int) -> str:
    decision = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": f"row {i}"}
    return json.dumps(json.dumps(decision))


def _project(tmp_path: Path, rows: int) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    lines = [{"id": i, "order_id": "A1", "amount": 40, "message": f"m {i}"} for i in range(rows)]
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (root / "replies.jsonl").write_text("".join(_reply(i) + "\n" for i in range(rows)))
    return root


def _args(*extra: str) -> list[str]:
    return [str(MIR_EXE), "run", "agent", AGENT, "--batch", "rows.jsonl", "--provider",
            "scripted", "--responses", "replies.jsonl", *extra]  # fmt: skip


def _env(**more: str) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **more}


def _mir(root: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _args(*extra), cwd=root, env=_env(**env), capture_output=True, text=True, timeout=300
    )


def _results(root: Path, name: str = "rows.results.jsonl") -> list[dict]:
    return [json.loads(line) for line in (root / name).read_text().splitlines()]


def _executed(root: Path) -> Counter:
    log = root / "executed.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(json.loads(line)["params"]["reason"] for line in lines)


def test_every_row_is_decided_once_and_a_rerun_decides_only_new_rows(tmp_path: Path) -> None:
    root = _project(tmp_path, 5)
    done = _mir(root, "--key", "id")
    assert done.returncode == 0, done.stderr
    assert "decided 5 of 5 rows" in done.stdout and "executed 5" in done.stdout
    results = _results(root)
    assert [r["key"] for r in results] == ["0", "1", "2", "3", "4"]
    assert {r["status"] for r in results} == {"executed"}
    assert len({r["flow_id"] for r in results}) == 5
    assert _executed(root) == Counter(f"row {i}" for i in range(5))
    with (root / "rows.jsonl").open("a") as more:  # two rows appended
        more.write("".join(json.dumps({"id": i, "order_id": "A1", "amount": 40,
                                       "message": f"m {i}"}) + "\n" for i in (5, 6)))  # fmt: skip
    (root / "replies.jsonl").write_text("".join(_reply(i) + "\n" for i in range(7)))
    again = _mir(root, "--key", "id", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["decided"], report["skipped"], report["left"]) == (2, 5, 0)
    assert _executed(root) == Counter(f"row {i}" for i in range(7))
    assert len(_results(root)) == 7
    shown = subprocess.run([str(MIR_EXE), "traces", "show", results[0]["flow_id"]], cwd=root,
                           env=_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert shown.returncode == 0 and "executed" in shown.stdout, shown.stderr


def test_workers_decide_what_one_process_decides_and_parquet_holds_every_row(
    tmp_path: Path,
) -> None:
    import duckdb

    one, two = _project(tmp_path / "one", 40), _project(tmp_path / "two", 40)
    assert _mir(one).returncode == 0
    done = _mir(two, "-j", "2", "--out", "results.parquet")
    assert done.returncode == 0, done.stderr
    table = two / "results.parquet"
    query = f"SELECT key, status, decision FROM '{table}' ORDER BY line"
    rows = duckdb.connect().execute(query).fetchall()
    expected = [(r["key"], r["status"], json.dumps(r["decision"])) for r in _results(one)]
    assert [(k, s, json.dumps(json.loads(d))) for k, s, d in rows] == expected
    assert _executed(two) == _executed(one) == Counter(f"row {i}" for i in range(40))


def test_a_row_cut_off_in_its_executor_is_reported_and_never_decided_again(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, 3)
    hold = tmp_path / "hold"
    process = subprocess.Popen(_args(), cwd=root, env=_env(REFUNDS_HOLD=str(hold)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not Path(f"{hold}.started").exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        busy = _mir(root)  # the first run still holds the results file
        assert busy.returncode == 2 and "is writing" in busy.stderr, busy.stderr
        assert "Traceback" not in busy.stderr
    finally:
        process.kill()
        process.wait()
    again = _mir(root)
    assert again.returncode == 1, again.stderr  # one row did not end as designed
    assert "cut off mid-decision" in again.stdout
    statuses = Counter(r["status"] for r in _results(root))
    assert statuses == Counter({"executed": 2, "interrupted": 1})
    assert _executed(root) == Counter({"row 1": 1, "row 2": 1})  # row 0 was held, never re-run
    third = _mir(root, "--json")
    assert json.loads(third.stdout)["decided"] == 0


def _done_rows(root: Path) -> int:
    journals = list((root / ".mir" / "batches").glob("*.jsonl"))
    text = journals[0].read_bytes() if journals else b""
    return text.count(b'{"done"')


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_random_kills_never_execute_a_row_twice_and_the_last_run_finishes_all(
    tmp_path: Path, jobs: str
) -> None:
    rows = 120
    root = _project(tmp_path, rows)
    rnd = random.Random(int(os.environ.get("MIR_BATCH_SEED", "7")) + int(jobs))
    for _ in range(3):
        target = _done_rows(root) + rnd.randint(3, 30)  # kill once this many rows are done
        process = subprocess.Popen(_args("-j", jobs), cwd=root, env=_env(REFUNDS_DELAY_S="0.01"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + 120
        while _done_rows(root) < target and process.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(rnd.uniform(0.001, 0.02))
        os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, no clean-up
        process.wait()
        assert process.returncode == -signal.SIGKILL  # it was killed, not finished
    before = _done_rows(root)
    final = _mir(root, "-j", jobs, "--json")
    assert final.returncode in (0, 1), final.stderr
    report = json.loads(final.stdout)
    assert report["skipped"] == before  # each row done once in the journal, all skipped
    assert report["decided"] < rows  # the killed runs had done part of it
    results = _results(root)
    assert len(results) == rows and len({r["key"] for r in results}) == rows
    executed = _executed(root)
    assert max(executed.values()) == 1, executed.most_common(3)
    statuses = Counter(r["status"] for r in results)
    assert set(statuses) <= {"executed", "interrupted"}, statuses
    # every executed row ran once; an interrupted one at most once (killed around it)
    assert statuses["executed"] <= sum(executed.values()) <= rows


@pytest.mark.parametrize(
    ("setup", "extra", "message"),
    [
        (lambda r: (r / "rows.jsonl").write_text('{"id": 1}\n[1]\n'), (), "rows.jsonl:2:"),
        (lambda r: (r / "rows.jsonl").write_text('{"id": 1}\n{"id": 1}\n'), ("--key", "id"),
         "also the key of line 1"),
        (lambda r: (r / "replies.jsonl").write_text(_reply(0) + "\n"), (), "1 replies for 4"),
        (lambda r: None, ("--input", "{}"), "--input decides one input: not with --batch"),
        (lambda r: None, ("--out", "nowhere/x.jsonl"), "does not exist"),
        (lambda r: (r / "rows.jsonl").unlink(), (), "no such file"),
        (lambda r: None, ("--out", "./rows.jsonl"), "is the --batch file"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_nothing_is_decided(tmp_path: Path, setup, extra, message):
    root = _project(tmp_path, 4)
    setup(root)
    done = _mir(root, *extra)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (root / "executed.jsonl").exists()


def test_batch_options_without_batch_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, 1)
    cmd = [str(MIR_EXE), "run", "agent", AGENT, "--input", "{}", "-j", "2"]
    done = subprocess.run(cmd, cwd=root, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "go with --batch" in done.stderr


def test_a_damaged_journal_is_refused_naming_its_line(tmp_path: Path) -> None:
    root = _project(tmp_path, 3)
    assert _mir(root).returncode == 0
    (journal,) = (root / ".mir" / "batches").glob("*.jsonl")
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    done = _mir(root)
    assert done.returncode == 2 and f"{journal}:2" in done.stderr, done.stderr
    assert sum(_executed(root).values()) == 3


def test_ctrl_c_finishes_the_rows_in_flight_writes_the_results_and_a_rerun_goes_on(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, 60)
    slow = _env(REFUNDS_DELAY_S="0.05")
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    process = subprocess.Popen(_args(), cwd=root, env=slow, **pipes)
    deadline = time.monotonic() + 120
    while _done_rows(root) < 5:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "stopping: the rows in flight finish" in err and "Traceback" not in err
    assert "rows left; run the same command again" in out
    partial = _results(root)
    assert 5 <= len(partial) < 60 and {r["status"] for r in partial} == {"executed"}
    again = _mir(root, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == len(partial)
    assert _executed(root) == Counter(f"row {i}" for i in range(60))


def test_a_secret_in_a_decision_never_reaches_the_journal_or_the_results(tmp_path: Path) -> None:
    from tests.support.secret_samples import CUSTOM_PATTERN, ENV_SECRETS, SAMPLES

    root = _project(tmp_path, len(SAMPLES))
    pyproject = root / "pyproject.toml"
    patterns = json.dumps([CUSTOM_PATTERN])
    pyproject.write_text(
        f"{pyproject.read_text()}\n[tool.mir.traces]\nredact_patterns = {patterns}\n"
    )
    replies = []
    for _, text, _secret in SAMPLES:
        decision = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": text}
        replies.append(json.dumps(json.dumps(decision)) + "\n")
    (root / "replies.jsonl").write_text("".join(replies))
    for out in ("rows.results.jsonl", "rows.parquet"):
        done = _mir(root, "--out", out, **ENV_SECRETS)
        assert done.returncode == 0, done.stderr
    journals = sorted((root / ".mir" / "batches").glob("*.jsonl"))  # one per results file
    assert len(journals) == 2
    written = [j.read_bytes() for j in journals]
    written += [(root / "rows.results.jsonl").read_bytes(), (root / "rows.parquet").read_bytes()]
    leaked = [shape for shape, _, secret in SAMPLES if any(secret.encode() in w for w in written)]
    assert not leaked, leaked


def test_on_a_terminal_a_bar_shows_and_the_summary_is_whole(tmp_path: Path) -> None:
    import pty
    import re

    from tests.support.terminal import read_terminal

    root = _project(tmp_path, 30)
    master, slave = pty.openpty()
    env = {**_env(COLUMNS="100", TERM="xterm", REFUNDS_DELAY_S="0.02")}
    env.pop("NO_COLOR")
    process = subprocess.Popen(_args(), cwd=root, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    received = read_terminal(master, process)
    assert process.wait(timeout=60) == 0, received.decode(errors="replace")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", received.decode())
    assert re.search(r"batch .* \d+/30", shown), shown  # the bar, with done/total
    assert "batch: 3/30 rows" not in shown  # not the piped lines
    assert "decided 30 of 30 rows of rows.jsonl" in shown and "executed 30" in shown
