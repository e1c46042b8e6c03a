"""The process-pool path (CPython syntax checks in workers, scanning here) must give
exactly the serial result, syntax errors included; ruff's checker must find the same
broken files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mir.boundaries import LintOptions, lint_boundaries
from mir.boundaries.composition import POOL_THRESHOLD

REPO = Path(__file__).resolve().parents[3]


def _bench_tree(root: Path, checker: str) -> None:
    spec = importlib.util.spec_from_file_location("lint_speed", REPO / "bench" / "lint_speed.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_tree(root, capabilities=5, modules=90)
    with (root / "pyproject.toml").open("a") as out:
        out.write(f'\n[tool.mir.lint]\nsyntax_checker = "{checker}"\n')
    broken = root / "capabilities" / "cap03" / "domain" / "dom_004.py"
    broken.write_text("import litellm\n\ndef broken(:\n    pass\n")
    newer = root / "capabilities" / "cap01" / "application" / "app_002.py"
    newer.write_text("import json\n\ntype Pair = tuple[int, int]\n")
    assert sum(1 for _ in root.rglob("*.py")) > POOL_THRESHOLD


def test_pool_and_serial_parsing_agree(tmp_path: Path) -> None:
    _bench_tree(tmp_path, "python")

    serial = lint_boundaries(tmp_path, LintOptions(use_cache=False, workers=1))
    pooled = lint_boundaries(tmp_path, LintOptions(use_cache=False, workers=2))
    assert pooled.findings == serial.findings
    codes = {(f.code, f.path) for f in pooled.findings}
    assert ("MIR301", "capabilities/cap03/domain/dom_004.py") in codes
    assert ("MIR104", "capabilities/cap03/domain/dom_004.py") in codes


def test_ruff_and_cpython_flag_the_same_files_at_the_same_lines(tmp_path: Path) -> None:
    python, ruff = tmp_path / "python", tmp_path / "ruff"
    _bench_tree(python, "python")
    _bench_tree(ruff, "ruff")
    by_python = lint_boundaries(python, LintOptions(use_cache=False, workers=2)).findings
    by_ruff = lint_boundaries(ruff, LintOptions(use_cache=False, workers=2)).findings

    def where(findings: tuple) -> list[tuple[str, str, int]]:
        return [(f.code, f.path, f.line) for f in findings]

    assert where(by_ruff) == where(by_python)
    syntax = [f for f in by_ruff if f.code == "MIR301"]
    newer = ["capabilities/cap01/application/app_002.py"] if sys.version_info < (3, 12) else []
    assert [f.path for f in syntax] == [*newer, "capabilities/cap03/domain/dom_004.py"]
    if newer:
        assert "Python 3.12" in syntax[0].message  # ruff names the version it needs
