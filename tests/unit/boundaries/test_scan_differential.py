"""The fast extractor must find exactly the imports the ``ast`` reference finds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from mir.boundaries import ImportRef, check_syntax, extract_imports, extract_imports_ast

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "lint" / "extractor"
IMPORTERS = [("pkg.sub.mod", False), ("pkg.sub", True), ("top", False), ("top", True)]


def _assert_same(source: bytes, where: str) -> list[ImportRef]:
    for importer, is_package in IMPORTERS:
        expected = extract_imports_ast(source, importer, is_package)
        assert extract_imports(source, importer, is_package) == expected, (where, importer)
    return expected


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_tricky_fixtures_match_ast(path: Path) -> None:
    refs = _assert_same(path.read_bytes(), path.name)
    assert refs, "every fixture contains at least one real import"


def test_mir_source_matches_ast() -> None:
    paths = sorted((REPO / "mir").rglob("*.py"))
    assert len(paths) > 20
    for path in paths:
        _assert_same(path.read_bytes(), str(path))


def test_standard_library_sample_matches_ast() -> None:
    import email
    import json

    for package in (email, json):
        for path in sorted(Path(package.__file__).parent.rglob("*.py")):
            _assert_same(path.read_bytes(), str(path))


def test_strings_comments_and_docstrings_are_not_imports() -> None:
    refs = extract_imports((FIXTURES / "strings_and_docstrings.py").read_bytes(), "m", False)
    assert [(ref.module, ref.line) for ref in refs] == [("json", 6), ("collections", 23)]


def test_type_checking_blocks_end_at_dedent_not_inside_strings() -> None:
    refs = extract_imports((FIXTURES / "conditional.py").read_bytes(), "m", False)
    flags = {ref.module: ref.type_checking for ref in refs}
    assert flags["fractions"] is True  # after a column-0 line inside a string
    assert flags["numbers"] is False  # the else branch
    assert flags["glob"] is True  # nested block
    assert flags["heapq"] is False


def test_relative_import_above_top_is_flagged_not_resolved() -> None:
    refs = extract_imports(b"from ... import x\n", "a.b", False)
    assert refs == [ImportRef("...", ("x",), 1, 0, False, True)]


def test_newer_syntax_still_yields_imports() -> None:
    source = (
        b"import os\ntype Alias = list[int]\ndef f[T](x: T) -> T:\n    from json import dumps\n"
    )
    assert check_syntax(source) is not None
    assert [ref.module for ref in extract_imports(source, "m", False)] == ["os", "json"]


def test_columns_are_utf8_byte_offsets() -> None:
    source = 's = "é"; import os\n'.encode()
    assert extract_imports(source, "m", False) == extract_imports_ast(source, "m", False)
    assert extract_imports(source, "m", False)[0].column == 10


def test_undecodable_source_raises_syntax_error_with_line() -> None:
    with pytest.raises(SyntaxError) as info:
        extract_imports(b"import os\nx = '\xff'\n", "m", False)
    assert info.value.lineno == 2


def test_check_syntax_reports_the_line() -> None:
    error = check_syntax(b"import os\n\ndef broken(:\n    pass\n")
    assert error is not None and error.lineno == 3
    assert check_syntax(b"import os\n") is None


def test_generated_bench_tree_matches_ast(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("lint_speed", REPO / "bench" / "lint_speed.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_tree(tmp_path, capabilities=4, modules=30)
    paths = sorted(tmp_path.rglob("*.py"))
    assert len(paths) > 100
    for path in paths:
        parts = path.relative_to(tmp_path).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        source = path.read_bytes()
        assert extract_imports(source, module, is_package) == extract_imports_ast(
            source, module, is_package
        ), path
