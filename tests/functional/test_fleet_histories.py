"""The eval and model histories on the fleet store, through the real `mir`: runs recorded
at once in two checkouts ("hosts") are both in `mir eval history` on either, a model registered
on host A is in `mir models history` on host B, nothing is written to the local DuckDB
files, and a store that is down is one line, never a traceback (an eval's report is
still shown, with the history's warning)."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.fleet

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
EVAL = ("eval", "refunds.triage", "--responses", "responses/eval-triage.jsonl", "-q")


def _host(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir"))
    return root


def _with_store(run_mir, url: str):
    def run(*args: str, cwd: Path):
        return run_mir(*args, cwd=cwd, env={"MIR_STORE_URL": url})

    return run


def test_eval_runs_from_two_hosts_are_in_the_history_of_either(run_mir, pg_url, tmp_path):
    mir = _with_store(run_mir, pg_url)
    a, b = _host(tmp_path, "host-a"), _host(tmp_path, "host-b")
    with ThreadPoolExecutor(2) as pool:  # both hosts' `mir eval` at once
        done = list(pool.map(lambda host: mir(*EVAL, cwd=host), (a, b)))
    for ran in done:
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "eval history not recorded" not in ran.stderr
    for host in (a, b):
        shown = mir("eval", "history", "refunds.triage", "--json", cwd=host)
        assert shown.returncode == 0, shown.stderr
        rows = json.loads(shown.stdout)
        assert len(rows) == 2 and len({row["run_id"] for row in rows}) == 2
        assert all(row["agent"] == "refunds.triage" for row in rows)
        table = mir("eval", "history", "triage", cwd=host)
        assert table.returncode == 0 and "pass rate" in table.stdout, table.stderr
    for host in (a, b):
        assert not (host / ".mir" / "evals.duckdb").exists()  # the fleet store holds them
    local = run_mir("eval", "history", "refunds.triage", "--json", cwd=a)  # no store: local
    assert local.returncode == 0 and json.loads(local.stdout) == [], local.stderr


def test_a_model_registered_on_host_a_is_in_the_history_on_host_b(
    run_mir, pg_url, tmp_path, tiny_gguf
):
    mir = _with_store(run_mir, pg_url)
    a, b = _host(tmp_path, "host-a"), _host(tmp_path, "host-b")
    (a / "models").mkdir()
    shutil.copy(tiny_gguf, a / "models" / "a.gguf")
    done = mir("models", "register", "qwen", "1", "--artifact", "models/a.gguf", "--by", "ana",
               cwd=a)  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = mir("models", "promote", "qwen", "1", "--to", "production", "--by", "ana", cwd=a)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = mir("models", "history", "qwen", "--format", "json", cwd=b)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert [(r["version"], r["from_stage"], r["to_stage"], r["by"]) for r in rows] == [
        ("1", None, "candidate", "ana"),
        ("1", "candidate", "production", "ana"),
    ]
    table = mir("models", "history", "qwen", cwd=b)
    assert table.returncode == 0 and "production" in table.stdout, table.stderr
    assert not (a / ".mir" / "models.duckdb").exists()
    assert not (b / "models.toml").exists()  # the registry file stays each checkout's own


def test_a_store_that_is_down_is_one_line_and_the_eval_report_still_shows(
    run_mir, pg_server_private, tmp_path, tiny_gguf
):
    mir = _with_store(run_mir, pg_server_private.url())
    host = _host(tmp_path, "host-a")
    with (host / "pyproject.toml").open("a") as out:  # fail fast once it is down
        out.write("\n[tool.mir.store]\nconnect_timeout = 1\n")
    (host / "models").mkdir()
    shutil.copy(tiny_gguf, host / "models" / "a.gguf")
    assert mir(*EVAL, cwd=host).returncode == 0  # migrated while it was up
    pg_server_private.stop()
    try:
        shown = mir("eval", "history", "refunds.triage", cwd=host)
        assert shown.returncode == 2 and "Traceback" not in shown.stderr
        assert "fleet store is unreachable" in shown.stderr
        assert len(shown.stderr.strip().splitlines()) == 1, shown.stderr
        ran = mir(*EVAL, cwd=host)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
        assert "eval history not recorded" in ran.stderr and "unreachable" in ran.stderr
        for args in (
            ("models", "history", "qwen"),
            ("models", "register", "qwen", "1", "--artifact", "models/a.gguf"),
        ):
            done = mir(*args, cwd=host)
            assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
            assert "fleet store is unreachable" in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (host / "models.toml").exists()  # nothing registered without its history
    finally:
        pg_server_private.start()
