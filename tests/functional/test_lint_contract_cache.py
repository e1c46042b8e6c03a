"""import-linter contracts are cached: an unchanged project replays its verdicts (nothing
evaluated, nothing extracted, no typer), an edit re-extracts only the edited file, and
any change of a root package's files or of the contract config changes the verdict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.processes import run_python

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importlinter"

# The console script, counting the files whose imports were extracted and reporting
# whether the contracts were evaluated (the use case imported) and whether typer ran.
_SCRIPT = (
    "import sys\n"
    "import mir.boundaries.scan as scan\n"
    "calls = []\n"
    "real = scan.extract_imports\n"
    "def counting(source, module, is_package):\n"
    "    calls.append(module)\n"
    "    return real(source, module, is_package)\n"
    "scan.extract_imports = counting\n"
    "from mir.cli.app import run_main\n"
    "try:\n"
    "    run_main()\n"
    "finally:\n"
    "    evaluated = 'mir.importlinter.application' in sys.modules\n"
    "    typer = 'typer' in sys.modules\n"
    "    print(f'EVALUATED={evaluated} EXTRACTED={len(calls)} TYPER={typer}', file=sys.stderr)\n"
)
_TYPER = "import sys\nfrom mir.cli.app import main\nsys.exit(main())\n"
_REPLAY = "EVALUATED=False EXTRACTED=0 TYPER=False"


_run = run_python


def _lint(tree: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run(_SCRIPT, "lint", "boundaries", "--format", "json", *extra, cwd=tree)


def _fresh(tree: Path, *extra: str) -> list[dict]:
    """The verdicts of an uncached run through typer: the reference."""
    args = ("lint", "boundaries", "--format", "json", "--no-cache", *extra)
    return json.loads(_run(_TYPER, *args, cwd=tree).stdout)["findings"]


def _contracts(result: subprocess.CompletedProcess[str]) -> set[str]:
    return {finding["contract"] for finding in json.loads(result.stdout)["findings"]}


def test_an_unchanged_project_replays_its_contract_verdicts(tmp_path: Path) -> None:
    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "forbidden", tree)
    cold = _lint(tree)
    assert cold.returncode == 1, cold.stderr
    assert "EVALUATED=True EXTRACTED=8 TYPER=False" in cold.stderr
    warm = _lint(tree)
    assert warm.stderr.strip() == _REPLAY
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
    assert json.loads(warm.stdout)["findings"] == _fresh(tree)
    typer_warm = _run(_TYPER, "lint", "boundaries", "--format", "json", cwd=tree)
    assert (typer_warm.returncode, typer_warm.stdout) == (warm.returncode, warm.stdout)

    for path in tree.rglob("*.py"):  # a fresh checkout: new mtimes, same content
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    touched = _lint(tree)
    assert touched.stderr.strip() == _REPLAY and touched.stdout == cold.stdout


def test_an_edit_in_a_root_package_changes_the_verdict(tmp_path: Path) -> None:
    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "forbidden", tree)
    before = _lint(tree)
    assert "Core may not use json (broken, direct external)" in _contracts(before)

    (tree / "media" / "core.py").write_text("VALUE = 1\n")  # the broken import is gone
    edited = _lint(tree)
    assert "EVALUATED=True EXTRACTED=1 TYPER=False" in edited.stderr
    assert "Core may not use json (broken, direct external)" not in _contracts(edited)
    assert json.loads(edited.stdout)["findings"] == _fresh(tree)

    extra = tree / "media" / "extra.py"  # a new module: the tree is walked, not stat-checked
    extra.write_text("from media import store\n")
    grown = _lint(tree)
    assert "EVALUATED=True EXTRACTED=1" in grown.stderr
    assert json.loads(grown.stdout)["findings"] == _fresh(tree)
    assert _lint(tree).stderr.strip() == _REPLAY
    extra.unlink()  # and a module gone
    shrunk = _lint(tree)
    assert "EVALUATED=True EXTRACTED=0" in shrunk.stderr
    assert json.loads(shrunk.stdout)["findings"] == _fresh(tree)


def test_an_edit_to_the_contract_config_changes_the_verdict(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "forbidden", tree)
    config = tmp_path / "contracts.ini"
    config.write_text((tree / "setup.cfg").read_text())
    (tree / "setup.cfg").unlink()
    first = _lint(tree, "--config", str(config))
    assert first.returncode == 1
    assert _lint(tree, "--config", str(config)).stderr.strip() == _REPLAY

    text = config.read_text().replace("    json\n", "    yaml\n", 1)  # core-json now kept
    config.write_text(text)
    edited = _lint(tree, "--config", str(config))
    assert "EVALUATED=True EXTRACTED=0" in edited.stderr  # same code: nothing re-extracted
    assert "Core may not use json (broken, direct external)" not in _contracts(edited)
    assert json.loads(edited.stdout)["findings"] == _fresh(tree, "--config", str(config))

    twin = tmp_path / "other.ini"  # another config with the same bytes is another input
    twin.write_text(text)
    assert "EVALUATED=True" in _lint(tree, "--config", str(twin)).stderr


def test_a_config_found_in_the_root_is_watched_too(tmp_path: Path) -> None:
    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "forbidden", tree)
    _lint(tree)
    # a .importlinter does not win over setup.cfg (lint-imports' order), but a replay
    # cannot know that without reading it: any candidate file changing re-evaluates
    (tree / ".importlinter").write_text("[importlinter]\nroot_package = media\n")
    again = _lint(tree)
    assert "EVALUATED=True EXTRACTED=0" in again.stderr
    assert json.loads(again.stdout)["findings"] == _fresh(tree)


def test_a_damaged_contract_cache_is_ignored(tmp_path: Path) -> None:
    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "forbidden", tree)
    first = _lint(tree)
    damaged = sorted((tree / ".mir" / "cache").glob("importlinter-*"))
    assert [path.name for path in damaged] == [
        "importlinter-entries.marshal",
        "importlinter-index.marshal",
    ]
    for path in damaged:
        path.write_bytes(b"\x00garbage")
    again = _lint(tree)
    assert "EVALUATED=True EXTRACTED=8" in again.stderr
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert _lint(tree).stderr.strip() == _REPLAY  # and it is rewritten
