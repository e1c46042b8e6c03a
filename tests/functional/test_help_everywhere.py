"""Every command's ``--help``: each argument and option says what it is, and no Python
type name (``<list[str]>``) stands where a word for the value should be.

The walk covers every command of the app, groups included, so a new command is checked
without being listed here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from mir.cli.app import build_app

# Commands still failing: each entry is to be fixed and removed (the test fails on an
# entry that no longer needs to be here).
EXEMPT: dict[str, set[str]] = {}

TYPE_NAME = re.compile(
    r"<[^>\s]*\[[^>]*>|\b(?:list|dict|tuple|set|Optional|Union)\[|NoneType|<class '"
)


def _commands() -> Iterator[tuple[str, object]]:
    from typer.main import get_command

    def walk(command: object, path: str) -> Iterator[tuple[str, object]]:
        yield path, command
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, f"{path} {name}")

    yield from walk(get_command(build_app()), "mir")


def _problems(path: str, command: Any) -> set[str]:  # a click command
    try:
        from typer._click import Context
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import Context

    problems = set()
    if not (command.help or command.short_help):
        problems.add("no help: the command itself")
    for param in command.params:
        if param.name == "help":
            continue
        if not (getattr(param, "help", None) or "").strip():
            problems.add(f"no help: {param.name}")
    text = command.get_help(Context(command, info_name=path))
    problems |= {f"type name {found}" for found in TYPE_NAME.findall(text)}
    return problems


COMMANDS = dict(_commands())


def test_the_walk_reaches_every_group():
    groups = {path.split()[1] for path in COMMANDS if len(path.split()) > 1}
    assert {"agents", "drift", "eval", "lint", "models", "new", "run", "traces"} <= groups
    assert {"mir approve", "mir reject", "mir traces verify", "mir schema"} <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_argument_and_option_is_described_in_words(path: str):
    problems = _problems(path, COMMANDS[path])
    exempt = EXEMPT.get(path, set())
    assert problems - exempt == set(), f"{path} --help: {sorted(problems - exempt)}"
    assert exempt - problems == set(), f"{path} is fixed: drop {sorted(exempt - problems)}"


def test_the_installed_mir_prints_the_help_walked_here(run_mir):
    # the walk renders help in-process (45 subprocesses would cost ~15 s): hold it to
    # what the installed command prints
    result = run_mir("agents", "list", "--help")
    assert result.returncode == 0
    assert "--format FORMAT" in result.stdout and "--json" in result.stdout
    assert not TYPE_NAME.search(result.stdout)


def test_a_variadic_argument_reads_as_its_name_and_dots(run_mir):
    result = run_mir("drift", "check", "--help")
    assert result.returncode == 0
    assert "[AGENT]..." in result.stdout  # the usage line
    assert "\n  AGENT...  Agents" in result.stdout  # the argument's row
    assert not TYPE_NAME.search(result.stdout)
