"""Every argument and option of every `mir models` command says what it is for."""

from __future__ import annotations

import re

import pytest

COMMANDS = ["list", "show", "register", "promote", "rollback", "retire", "history"]
COMMANDS += ["compare", "check"]
# "  name <str>   Registry name.  [required]" / "  --notes <str>  Free text ..."
ENTRY = re.compile(r"^  (?P<name>(?:-[\w-]+, )?[\w.-]+(?: <[^>]+>)?)(?P<rest>.*)$")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_and_option_is_described(run_mir, command):
    # Broke: promote/rollback/retire/history had empty argument descriptions, and
    # register's --quantization and --notes none at all.
    done = run_mir("models", command, "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    section, undescribed = None, []
    for line in done.stdout.splitlines():
        if line in ("Arguments:", "Options:"):
            section = line
            continue
        found = ENTRY.match(line) if section else None
        if found is None:
            continue
        described = re.sub(r"\[(?:required|default: [^\]]*)\]", "", found["rest"]).strip()
        if not described:
            undescribed.append(found["name"])
    assert section is not None, done.stdout
    assert not undescribed, f"mir models {command}: no description for {undescribed}"
