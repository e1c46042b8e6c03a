"""``--json`` and ``--format json`` mean the same in every command that prints JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"
SUPPORT_DESK = Path(__file__).resolve().parents[2] / "examples" / "support_desk"
PROMPT_INPUT = (
    '{"ticket_id": "T-1", "customer_id": "C-001", "order_id": "A-1001", "category": '
    '"damaged", "requested_amount": 40, "message": "where is my refund?"}'
)


@pytest.mark.parametrize(
    "command", [("lint", "rules"), ("schema",), ("agents", "list", "--project", "{app}")]
)
def test_json_and_format_json_print_the_same(run_mir, app: Path, command):
    args = [part.format(app=app) for part in command]
    by_flag = run_mir(*args, "--json")
    by_format = run_mir(*args, "--format", "json")
    assert by_flag.returncode == by_format.returncode == 0, by_format.stderr
    assert json.loads(by_format.stdout) == json.loads(by_flag.stdout)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(SUPPORT_DESK, root)
    return root


@pytest.mark.parametrize(
    ("command", "other"),
    [
        (("traces", "list"), "table"),
        (("traces", "export"), "otlp"),
        (("models", "list"), "table"),
        (("drift", "history", "refunds.triage"), "table"),
        (("eval", "history", "refunds.triage"), "table"),
        (("run", "agent", "refunds.triage", "--input", PROMPT_INPUT, "--show-prompt"), "text"),
    ],
)
def test_a_project_command_prints_the_same_json_both_ways(run_mir, desk: Path, command, other):
    by_flag = run_mir(*command, "--json", cwd=desk)
    by_format = run_mir(*command, "--format", "json", cwd=desk)
    assert by_flag.returncode == by_format.returncode == 0, by_format.stderr
    assert by_flag.stdout == by_format.stdout
    if command[1] != "export":  # JSON lines: nothing to export from a new project
        json.loads(by_flag.stdout)
    clash = run_mir(*command, "--json", "--format", other, cwd=desk)
    assert clash.returncode == 2
    [line] = clash.stderr.strip().splitlines()
    assert line == f"error: --json and --format {other} disagree (give one of them)"
    # the other format is still the command's own
    assert run_mir(*command, "--format", other, cwd=desk).returncode == 0


@pytest.mark.parametrize(
    ("command", "other"),
    [
        (("eval", "run", "-f", "junit"), "junit"),
        (("drift", "check", "--format", "table"), "table"),
        (("models", "check", "--format", "table"), "table"),
        (("approve", "3f9c", "--format", "text"), "text"),
        (("traces", "show", "3f9c", "--format", "table"), "table"),
    ],
)
def test_json_and_a_different_format_are_refused_before_any_work(
    run_mir, desk: Path, command, other
):
    result = run_mir(*command, "--json", cwd=desk)
    assert result.returncode == 2, result.stdout
    assert (
        result.stderr.strip() == f"error: --json and --format {other} disagree (give one of them)"
    )
    assert not (desk / ".mir").exists()  # nothing opened: no store, no run recorded


def test_lint_boundaries_takes_json_as_well(run_mir, tmp_path: Path):
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    by_format = run_mir("lint", "boundaries", str(tree), "--format", "json")
    by_flag = run_mir("lint", "boundaries", str(tree), "--json")  # answered without typer
    typer_run = run_mir("--debug", "lint", "boundaries", str(tree), "--json")  # through typer
    assert by_flag.returncode == by_format.returncode == 1
    # the same report (the first run parsed what the others read from its cache)
    runs = [json.loads(run.stdout) for run in (by_format, by_flag, typer_run)]
    assert runs[0]["findings"] and all(run["findings"] == runs[0]["findings"] for run in runs)
    assert by_flag.stdout == typer_run.stdout
    clash = run_mir("lint", "boundaries", str(tree), "--json", "--format", "sarif")
    assert clash.returncode == 2
    assert clash.stderr.strip() == "error: --json and --format sarif disagree (give one of them)"


def test_a_format_the_command_lacks_is_refused(run_mir):
    result = run_mir("lint", "rules", "--format", "sarif")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: unknown --format 'sarif' (use one of table, json)"


# Commands that have one of the two and still lack the other: none. A new command that
# prints JSON takes both (mir.cli.output.json_option / format_option / chosen_format).
ONE_OF_THE_TWO: set[str] = set()


def test_every_command_with_json_output_takes_both():
    from typer.main import get_command

    from mir.cli.app import build_app

    def walk(command, path):
        yield path, command
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, f"{path} {name}")

    lacking = set()
    for path, command in walk(get_command(build_app()), "mir"):
        options = {opt for param in command.params for opt in getattr(param, "opts", ())}
        if ("--json" in options) != ("--format" in options):
            lacking.add(path)
    assert lacking - ONE_OF_THE_TWO == set(), "give these both --json and --format"
    assert ONE_OF_THE_TWO - lacking == set(), "these take both now: drop them from the list"
