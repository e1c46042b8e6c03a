"""A warm ``mir lint boundaries`` is replayed without typer, and prints exactly what the
typer command prints for the same cached run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"

# The console script's entry point, reporting on stderr whether typer was imported.
_SCRIPT = (
    "import sys\n"
    "from mir.cli.app import run_main\n"
    "try:\n"
    "    run_main()\n"
    "finally:\n"
    "    print('TYPER' if 'typer' in sys.modules else 'REPLAY', file=sys.stderr)\n"
)
# The typer command itself (``main`` never replays).
_TYPER = "import sys\nfrom mir.cli.app import main\nsys.exit(main())\n"


def _run(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_a_replay_prints_what_the_typer_command_prints(tmp_path: Path, fmt: str) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    args = ("lint", "boundaries", "--format", fmt)
    cold = _run(_SCRIPT, *args, cwd=tree)
    assert cold.returncode == 1 and cold.stderr.strip().endswith("TYPER"), cold.stderr
    replayed = _run(_SCRIPT, *args, cwd=tree)
    assert replayed.stderr.strip() == "REPLAY"
    typer_run = _run(_TYPER, *args, cwd=tree)
    assert (replayed.returncode, replayed.stdout) == (typer_run.returncode, typer_run.stdout)
    assert "MIR105" in replayed.stdout


def test_a_changed_file_or_an_unknown_option_is_not_replayed(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert _run(_SCRIPT, "lint", "boundaries", cwd=tree).stderr.strip() == "REPLAY"
    domain = tree / "capabilities" / "audit" / "domain.py"
    domain.write_text(domain.read_text() + "\nimport json\n")
    edited = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert edited.stderr.strip().endswith("TYPER") and edited.returncode == 1
    unknown = _run(_SCRIPT, "lint", "boundaries", "--frobnicate", cwd=tree)
    assert unknown.returncode == 2 and "No such option" in unknown.stderr
    bad_format = _run(_SCRIPT, "lint", "boundaries", "--format", "yaml", cwd=tree)
    assert bad_format.returncode == 2 and "unknown --format 'yaml'" in bad_format.stderr


def test_import_linter_contracts_are_never_replayed(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    (tree / ".importlinter").write_text(
        "[importlinter]\nroot_package = capabilities\n\n"
        "[importlinter:contract:one]\nname = audit is independent\ntype = independence\n"
        "modules =\n    capabilities.audit\n    capabilities.billing\n"
    )
    _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    again = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert again.stderr.strip().endswith("TYPER")
