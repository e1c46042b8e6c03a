"""``# mir: ignore[CODE]`` comments: found by the scanner, applied after every rule,
reported (MIR304) when they suppress nothing, and switchable off."""

from __future__ import annotations

from pathlib import Path

from mir.boundaries import LintOptions, lint_boundaries
from mir.boundaries.scan import scan_ignores


def test_directives_are_found_with_their_lines_and_codes() -> None:
    text = (
        "import os  # mir: ignore[MIR104]\n"
        "x = 1\r\n"
        "import a  #mir:ignore[ mir101 , MIR104 ] because reasons\n"
        "import b  # mir: ignore\n"
        "import c  # mir: ignored[MIR101]\n"
    )
    assert scan_ignores(text) == (
        (1, ("MIR104",)),
        (3, ("MIR101", "MIR104")),
        (4, ()),
    )
    assert scan_ignores("import os  # noqa\n") == ()


def _project(root: Path, domain: str, lint: str = "") -> None:
    cap = root / "capabilities" / "refunds"
    cap.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[tool.mir]\ncapabilities = "capabilities"\n\n[tool.mir.lint]\n{lint}\n'
    )
    (cap / "__init__.py").write_text("")
    (cap / "CLAUDE.md").write_text("---\ncapability: refunds\npublic: []\n---\n# refunds\n")
    (cap / "domain.py").write_text(domain)


def _found(root: Path) -> list[tuple[str, int, str]]:
    report = lint_boundaries(root, LintOptions(use_cache=False))
    return [(f.code, f.line, f.message) for f in report.findings]


def test_a_directive_suppresses_its_code_on_its_line_only(tmp_path: Path) -> None:
    _project(
        tmp_path,
        "import httpx  # mir: ignore[MIR104] until the client moves to adapters\nimport requests\n",
    )
    assert [(code, line) for code, line, _ in _found(tmp_path)] == [("MIR104", 2)]


def test_directives_that_suppress_nothing_are_findings(tmp_path: Path) -> None:
    _project(
        tmp_path,
        "import json  # mir: ignore[MIR104]\n"
        "import httpx  # mir: ignore[MIR101, MIR104]\n"
        "import decimal  # mir: ignore\n"
        "import enum  # mir: ignore[MIR999]\n",
    )
    found = _found(tmp_path)
    assert [(code, line) for code, line, _ in found] == [
        ("MIR304", 1),
        ("MIR304", 2),
        ("MIR304", 3),
        ("MIR304", 4),
    ]
    assert "MIR101" in found[1][2] and "suppresses nothing" in found[1][2]
    assert "needs the codes" in found[2][2]
    assert "names no mir rule" in found[3][2]


def test_ignores_can_be_switched_off(tmp_path: Path) -> None:
    domain = "import httpx  # mir: ignore[MIR104]\nimport json  # mir: ignore\n"
    _project(tmp_path, domain, "inline_ignores = false")
    assert [(code, line) for code, line, _ in _found(tmp_path)] == [("MIR104", 1)]


def test_an_edited_directive_is_seen_through_the_cache(tmp_path: Path) -> None:
    _project(tmp_path, "import httpx\n")
    assert [code for code, *_ in _found(tmp_path)] == ["MIR104"]
    lint_boundaries(tmp_path)  # fill the cache
    (tmp_path / "capabilities" / "refunds" / "domain.py").write_text(
        "import httpx  # mir: ignore[MIR104]\n"
    )
    assert lint_boundaries(tmp_path).findings == ()


def test_only_real_comments_are_directives() -> None:
    text = (
        '"""Docs: write ``# mir: ignore[MIR104]`` after the import."""\n'
        "TEXT = '# mir: ignore[MIR101]'\n"
        "import os  # see above; # mir: ignore[MIR104]\n"
        "x = '''\n# mir: ignore[MIR102]\n'''\n"
    )
    assert scan_ignores(text) == ((3, ("MIR104",)),)
