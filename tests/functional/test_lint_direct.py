"""A plain ``mir lint boundaries`` runs without typer (a warm one replays the cached
findings) and prints exactly what the typer command prints."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.processes import run_python

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"

# The console script's entry point, reporting on stderr whether typer was imported and
# whether anything was parsed (a replay never imports the parser).
_SCRIPT = (
    "import sys\n"
    "from mir.cli.app import run_main\n"
    "try:\n"
    "    run_main()\n"
    "finally:\n"
    "    typer = 'typer' in sys.modules\n"
    "    parsed = 'mir.boundaries.parsing' in sys.modules\n"
    "    print('TYPER' if typer else 'FULL' if parsed else 'REPLAY', file=sys.stderr)\n"
)
# The typer command itself (``main`` never replays).
_TYPER = "import sys\nfrom mir.cli.app import main\nsys.exit(main())\n"


_run = run_python


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_without_typer_the_output_is_the_typer_commands(tmp_path: Path, fmt: str) -> None:
    tree, twin = tmp_path / "shop", tmp_path / "twin"
    shutil.copytree(FIXTURES / "MIR105", tree)
    shutil.copytree(FIXTURES / "MIR105", twin)
    args = ("lint", "boundaries", "--format", fmt)
    cold = _run(_SCRIPT, *args, cwd=tree)
    assert cold.stderr.strip().endswith("FULL"), cold.stderr
    typer_cold = _run(_TYPER, *args, cwd=twin)
    assert (cold.returncode, cold.stdout) == (typer_cold.returncode, typer_cold.stdout)
    replayed = _run(_SCRIPT, *args, cwd=tree)
    assert replayed.stderr.strip() == "REPLAY"
    typer_warm = _run(_TYPER, *args, cwd=tree)
    assert (replayed.returncode, replayed.stdout) == (typer_warm.returncode, typer_warm.stdout)
    assert replayed.returncode == 1 and "MIR105" in replayed.stdout
    uncached = _run(_SCRIPT, *args, "--no-cache", cwd=tree)
    assert uncached.stderr.strip().endswith("FULL")  # never a replay
    assert (uncached.returncode, uncached.stdout) == (typer_cold.returncode, typer_cold.stdout)


def test_errors_without_typer_are_the_typer_commands(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.mir.lint]\nsyntax_errors = 3\n")
    direct = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    typer_run = _run(_TYPER, "lint", "boundaries", cwd=tree)
    assert direct.returncode == typer_run.returncode == 2
    assert direct.stderr.replace("FULL", "").strip() == typer_run.stderr.strip()
    assert "syntax_errors" in typer_run.stderr


@pytest.mark.parametrize("where", ["option", "setting"])
def test_a_missing_baseline_is_the_same_error_without_typer(tmp_path: Path, where: str) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    args: tuple[str, ...] = ("lint", "boundaries")
    if where == "option":
        args += ("--baseline", "lint-baselin.json")
    else:
        pyproject = tree / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + '\n[tool.mir.lint]\nbaseline = "b.json"\n')
    for _ in range(2):  # cold, then with a warm cache
        direct = _run(_SCRIPT, *args, cwd=tree)
        typer_run = _run(_TYPER, *args, cwd=tree)
        assert direct.returncode == typer_run.returncode == 2
        assert direct.stdout == typer_run.stdout == ""
        assert direct.stderr.replace("FULL", "").strip() == typer_run.stderr.strip()
        assert "baseline file not found" in typer_run.stderr


def test_a_changed_file_is_linted_and_an_unknown_option_goes_to_typer(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert _run(_SCRIPT, "lint", "boundaries", cwd=tree).stderr.strip() == "REPLAY"
    domain = tree / "capabilities" / "audit" / "domain.py"
    domain.write_text(domain.read_text() + "\nimport json\n")
    edited = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert edited.stderr.strip().endswith("FULL") and edited.returncode == 1
    unknown = _run(_SCRIPT, "lint", "boundaries", "--frobnicate", cwd=tree)
    assert unknown.returncode == 2 and "No such option" in unknown.stderr
    bad_format = _run(_SCRIPT, "lint", "boundaries", "--format", "yaml", cwd=tree)
    assert bad_format.returncode == 2 and "unknown --format 'yaml'" in bad_format.stderr


def test_import_linter_contracts_are_replayed_with_the_rules(tmp_path: Path) -> None:
    tree, twin = tmp_path / "shop", tmp_path / "twin"
    shutil.copytree(FIXTURES / "MIR105", tree)
    contract = (
        "[importlinter]\nroot_package = capabilities\n\n"
        "[importlinter:contract:one]\nname = audit is independent\ntype = independence\n"
        "modules =\n    capabilities.audit\n    capabilities.billing\n"
    )
    (tree / ".importlinter").write_text(contract)
    shutil.copytree(tree, twin)
    cold = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert cold.stderr.strip().endswith("FULL")
    again = _run(_SCRIPT, "lint", "boundaries", cwd=tree)
    assert again.stderr.strip() == "REPLAY"  # rules and contracts: nothing parsed
    typer_run = _run(_TYPER, "lint", "boundaries", "--no-cache", cwd=twin)
    assert (again.returncode, again.stdout) == (typer_run.returncode, typer_run.stdout)
    assert "MIR105" in again.stdout


def test_outside_a_project_both_paths_say_the_same(tmp_path: Path) -> None:
    direct = _run(_SCRIPT, "lint", "boundaries", cwd=tmp_path)
    typer_run = _run(_TYPER, "lint", "boundaries", cwd=tmp_path)
    assert direct.returncode == typer_run.returncode == 2
    assert direct.stderr.replace("FULL", "").strip() == typer_run.stderr.strip()
    assert "no mir project found" in typer_run.stderr
