"""The process-pool path (syntax checks in workers, scanning here) must give exactly the
serial result, syntax errors included."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mir.boundaries import LintOptions, lint_boundaries
from mir.boundaries.composition import POOL_THRESHOLD

REPO = Path(__file__).resolve().parents[3]


def test_pool_and_serial_parsing_agree(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("lint_speed", REPO / "bench" / "lint_speed.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_tree(tmp_path, capabilities=5, modules=90)
    broken = tmp_path / "capabilities" / "cap03" / "domain" / "dom_004.py"
    broken.write_text("import litellm\n\ndef broken(:\n    pass\n")
    assert sum(1 for _ in tmp_path.rglob("*.py")) > POOL_THRESHOLD

    serial = lint_boundaries(tmp_path, LintOptions(use_cache=False, workers=1))
    pooled = lint_boundaries(tmp_path, LintOptions(use_cache=False, workers=2))
    assert pooled.findings == serial.findings
    codes = {(f.code, f.path) for f in pooled.findings}
    assert ("MIR301", "capabilities/cap03/domain/dom_004.py") in codes
    assert ("MIR104", "capabilities/cap03/domain/dom_004.py") in codes
