"""The tree keeps one way to change a schema: one migration runner
(``mir/storage/migrations.py``), no ``CREATE TABLE`` / ``CREATE INDEX`` outside a
``Migration`` step, and one ``is_lock_conflict`` (in ``mir/storage``). Read from the AST,
so a docstring that mentions a table is no finding."""

from __future__ import annotations

import ast
import re
from pathlib import Path

MIR = Path(__file__).parents[3] / "mir"
RUNNER = MIR / "storage" / "migrations.py"
_DDL = re.compile(r"\bCREATE\s+(UNIQUE\s+)?(TABLE|INDEX)\b", re.IGNORECASE)
# what a second runner writes to keep its record
_RECORD = re.compile(r"_migrations\b|user_version", re.IGNORECASE)


def _strings(node: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def findings(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    docs = _docstrings(tree)
    in_steps = {
        id(s)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Migration"
        for s in _strings(node)
    }
    out = []
    for s in _strings(tree):
        if id(s) in docs:
            continue
        if _DDL.search(s.value) and id(s) not in in_steps:
            out.append(f"{where}:{s.lineno}: CREATE outside a Migration step")
        if _RECORD.search(s.value):
            out.append(f"{where}:{s.lineno}: a migration record of its own ({s.value[:40]!r})")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "is_lock_conflict":
            out.append(f"{where}:{node.lineno}: a second is_lock_conflict")
    return out


def test_one_runner_no_stray_ddl_one_lock_reading():
    problems = []
    for path in sorted(MIR.rglob("*.py")):
        if path == RUNNER or (path.parent.name == "storage" and path.name == "conflicts.py"):
            continue
        problems += findings(path.read_text(), str(path.relative_to(MIR.parent)))
    assert problems == []


def test_the_runner_and_the_lock_reading_are_where_they_are_named():
    assert "def migrate(" in RUNNER.read_text()
    assert "def is_lock_conflict(" in (MIR / "storage" / "conflicts.py").read_text()


def test_the_check_finds_what_it_looks_for():
    source = '''
"""CREATE TABLE in a docstring is prose."""
from mir.storage import Migration
STEPS = (Migration("0001", "CREATE TABLE a (x INT)"),)
LOOSE = "CREATE TABLE IF NOT EXISTS b (y INT)"
INDEX = "create unique index i on a (x)"
OWN = "INSERT INTO _migrations VALUES (?, now())"
TEMP = "CREATE OR REPLACE TEMP TABLE scratch AS SELECT 1"
def is_lock_conflict(exc):
    return False
'''
    found = findings(source, "x.py")
    assert [f.split(": ", 1)[1][:20] for f in found] == [
        "CREATE outside a Mig",
        "CREATE outside a Mig",
        "a migration record o",
        "a second is_lock_con",
    ]
