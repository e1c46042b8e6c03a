"""``docs/cli.md`` is generated from the typer app (``make docs``) and must be current."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docs" / "cli_reference.py"


def _generator():
    spec = importlib.util.spec_from_file_location("cli_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_current():
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == _generator().reference(), (
        "docs/cli.md is stale: run `make docs` and commit docs/cli.md"
    )


def test_every_visible_command_has_its_section():
    from typer.main import get_command

    from mir.cli.app import build_app

    text = _generator().reference()
    root = get_command(build_app())
    for name, group in root.commands.items():
        assert f"## `mir {name}`\n" in text
        for sub, command in getattr(group, "commands", {}).items():
            assert (f"## `mir {name} {sub}`\n" in text) is not command.hidden


def test_the_output_does_not_depend_on_the_terminal(tmp_path: Path):
    # a narrow and a wide terminal, another folder: the same bytes
    runs = [
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import runpy; print(runpy.run_path({str(SCRIPT)!r})['reference'](), end='')",
            ],
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": columns, "LINES": "10"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for columns in ("40", "250")
    ]
    assert runs[0] == runs[1] == _generator().reference()


def test_check_names_the_command_to_run(tmp_path: Path, monkeypatch, capsys):
    generator = _generator()
    stale = tmp_path / "cli.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(generator, "TARGET", stale)
    assert generator.main(["--check"]) == 1
    assert "run `make docs`" in capsys.readouterr().err
    assert generator.main([]) == 0  # writes it
    assert generator.main(["--check"]) == 0
