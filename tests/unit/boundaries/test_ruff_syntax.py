"""ruff's syntax check held to CPython: every file ``ast.parse`` rejects is flagged, and
every file flagged is one ``compile`` rejects (no false alarm)."""

from __future__ import annotations

import ast
import sys
import sysconfig
import warnings
from pathlib import Path

import pytest

from mir.boundaries import LintOptions, lint_boundaries, ruff_syntax
from mir.boundaries import composition as composition_module
from mir.boundaries.ruff_syntax import (
    RuffError,
    RuffSyntaxCheck,
    checker_tag,
    ruff_binary,
    ruff_can_check,
)
from mir.boundaries.scan import decode_source
from mir.errors import ConfigError

BINARY = ruff_binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="ruff is not installed")

SNIPPETS = {
    "ok_match": "match x:\n    case [a, *b]:\n        pass\n",
    "ok_except_star": "try:\n    pass\nexcept* ValueError:\n    pass\n",
    "ok_paren_with": "with (open(a) as b, open(c) as d):\n    pass\n",
    "ok_posonly": "def f(a, /, b): pass\n",
    "ok_fstring_format": "x = f'{a!r:>{w}}'\n",
    "ok_async_comp": "async def f():\n    return [x async for x in y]\n",
    "ok_decorator": "@x[0].y\ndef f(): pass\n",
    "ok_continuation": "from a import (b,\n    c)\nx = 1 + \\\n    2\n",
    "ok_future_first": '"""doc"""\nfrom __future__ import annotations\n',
    "bad_param": "def f(:\n    pass\n",
    "bad_unclosed": "x = (1,\n2\n",
    "bad_indent": "def f():\nreturn 1\n",
    "bad_unindent": "if x:\n        a = 1\n    b = 2\n",
    "bad_assign_literal": "1 = x\n",
    "bad_del_call": "del f()\n",
    "bad_walrus_attr": "(a.b := 1)\n",
    "bad_default_order": "def f(x=1, y): pass\n",
    "bad_star_after_kwargs": "f(**a, *b)\n",
    "bad_duplicate_param": "def f(a, a): pass\n",
    "bad_nonlocal_module": "nonlocal x\n",
    "bad_annotated_global": "def f():\n    global x\n    x: int = 1\n",
    "bad_bytes": "x = b'\u00e9'\n",
    "bad_late_future": "import os\nfrom __future__ import annotations\n",
    "bad_future_feature": "from __future__ import braces\n",
    "bad_return_module": "return 1\n",
    "bad_break_module": "break\n",
    "bad_yield_module": "x = yield 1\n",
    "bad_await_module": "await x\n",
    "bad_fstring_quote_reuse": "x = f'{'a'}'\n",
    "bad_unterminated": "x = 'abc\n",
    "bad_trailing_operator": "import os\nx = 1 +\n",
}
if sys.version_info < (3, 12):
    SNIPPETS["bad_type_alias"] = "type Pair = tuple[int, int]\n"


def _cpython(source: bytes) -> tuple[bool, bool]:
    """(``ast.parse`` accepts, ``compile`` accepts)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            return False, False
        try:
            compile(source, "<corpus>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return True, False
    return True, True


def _check_corpus(root: Path, paths: list[str]) -> tuple[int, int]:
    """Assert the property on ``paths`` (the files ruff is given in a lint run);
    returns (files checked, files flagged)."""
    sent = []
    for path in paths:
        source = (root / path).read_bytes()
        try:
            decode_source(source)
        except SyntaxError:
            continue  # mir reports undecodable files itself, before any parser
        if ruff_can_check(source):
            sent.append(path)
    assert BINARY is not None
    flagged = RuffSyntaxCheck(BINARY, root, sent).start().problems()
    wrong = []
    for path in sent:
        parses, compiles = _cpython((root / path).read_bytes())
        if not parses and path not in flagged:
            wrong.append(f"{path}: CPython cannot parse it, ruff says nothing")
        if path in flagged and compiles:
            wrong.append(f"{path}: CPython compiles it, ruff says {flagged[path]}")
    assert wrong == []
    return len(sent), len(flagged)


def test_snippets(tmp_path: Path) -> None:
    for name, text in SNIPPETS.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    paths = sorted(f"{name}.py" for name in SNIPPETS)
    checked, flagged = _check_corpus(tmp_path, paths)
    assert checked == len(SNIPPETS)
    assert flagged == sum(1 for name in SNIPPETS if name.startswith("bad_"))


def test_standard_library_sample() -> None:
    """Real code, plus CPython's own broken test files and Python 2 sources."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(
        path.relative_to(root).as_posix()
        for folder in ("json", "email", "asyncio", "test", "lib2to3/tests/data")
        if (root / folder).is_dir()
        for path in (root / folder).glob("*.py")
    )
    if len(paths) < 200:
        pytest.skip("this Python's standard library sources are not installed")
    checked, flagged = _check_corpus(root, paths)
    assert checked > 200
    assert flagged > 0


def test_problem_position_is_the_first_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n\ndef f(:\n    pass\nx = (\n")
    assert BINARY is not None
    problems = RuffSyntaxCheck(BINARY, tmp_path, ["a.py"]).start().problems()
    line, column, message = problems["a.py"]
    assert (line, column) == (3, 6)
    assert message


def test_many_files_are_split_over_processes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ruff_syntax, "_MAX_ARGUMENT_CHARS", 20_000)
    names = [f"module_with_a_rather_long_name_{i:05d}.py" for i in range(1200)]
    for name in names:
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / names[-1]).write_text("x = (\n")
    assert BINARY is not None
    check = RuffSyntaxCheck(BINARY, tmp_path, names).start()
    assert len(check.processes) > 1
    assert list(check.problems()) == [names[-1]]


def test_a_ruff_that_fails_is_an_error_not_a_clean_result(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = (\n")
    with pytest.raises(RuffError, match="listed none"):
        RuffSyntaxCheck("false", tmp_path, ["a.py"]).start().problems()
    with pytest.raises(RuffError, match="cannot run"):
        RuffSyntaxCheck(str(tmp_path / "no-such-ruff"), tmp_path, ["a.py"]).start()


def test_what_ruff_cannot_read_is_left_to_cpython() -> None:
    assert ruff_can_check("x = 'é'\n".encode())
    assert not ruff_can_check("# coding: latin-1\nx = 'é'\n".encode("latin-1"))
    assert not ruff_can_check(b"x = 1\0\n")


def _project(root: Path, checker: str) -> None:
    cap = root / "capabilities" / "refunds"
    cap.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[tool.mir]\ncapabilities = "capabilities"\n\n[tool.mir.lint]\n'
        f'syntax_checker = "{checker}"\n'
    )
    (cap / "__init__.py").write_text("")
    (cap / "CLAUDE.md").write_text(
        "---\ncapability: refunds\nlayers: {legacy: adapters}\n---\n# refunds\n"
    )
    (cap / "domain.py").write_text("import json\n\ndef f(:\n    pass\n")
    # another encoding: ruff cannot read it, CPython checks it
    (cap / "legacy.py").write_bytes("# coding: latin-1\nx = 'é'\nif x\n".encode("latin-1"))


@pytest.mark.parametrize("checker", ["ruff", "python", "auto"])
def test_every_checker_finds_the_broken_files(tmp_path: Path, checker: str) -> None:
    _project(tmp_path, checker)
    report = lint_boundaries(tmp_path, LintOptions(use_cache=False))
    found = [(f.code, f.path, f.line) for f in report.findings]
    assert found == [
        ("MIR301", "capabilities/refunds/domain.py", 3),
        ("MIR301", "capabilities/refunds/legacy.py", 3),
    ]


def test_a_ruff_that_fails_falls_back_to_cpython(tmp_path: Path, monkeypatch) -> None:
    _project(tmp_path, "ruff")
    fake = tmp_path / "fake-ruff"
    fake.write_text("#!/bin/sh\necho 'ruff: unknown target version' >&2\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setattr(composition_module, "ruff_binary", lambda: str(fake))
    report = lint_boundaries(tmp_path, LintOptions(use_cache=False))
    assert [(f.code, f.line) for f in report.findings] == [("MIR301", 3), ("MIR301", 3)]


def test_ruff_required_but_missing_is_a_config_error(tmp_path: Path, monkeypatch) -> None:
    _project(tmp_path, "ruff")
    monkeypatch.setattr(composition_module, "ruff_binary", lambda: None)
    with pytest.raises(ConfigError, match="ruff package is not installed"):
        lint_boundaries(tmp_path, LintOptions(use_cache=False))


def test_results_of_different_checkers_never_share_a_cache_entry(tmp_path: Path) -> None:
    _project(tmp_path, "python")
    by_python = lint_boundaries(tmp_path).findings
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"python"', '"ruff"'))
    by_ruff = lint_boundaries(tmp_path).findings
    domain = "capabilities/refunds/domain.py"
    python_message = next(f.message for f in by_python if f.path == domain)
    ruff_message = next(f.message for f in by_ruff if f.path == domain)
    assert python_message != ruff_message  # each checker's own words, not a cached one
    assert BINARY is not None and checker_tag(BINARY).startswith("ruff:")


def test_a_ruff_that_hangs_is_given_up(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    slow = tmp_path / "slow-ruff"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    check = RuffSyntaxCheck(str(slow), tmp_path, ["a.py"], timeout_s=0.5).start()
    with pytest.raises(RuffError, match="took over"):
        check.problems()
    assert all(process.poll() is not None for process in check.processes)  # killed
