"""Which file-system events start a ``--watch`` run: writes of files lint reads."""

from __future__ import annotations

import os

import pytest

from mir.boundaries.watch import starts_a_run

ROOT = os.path.join(os.sep, "home", "dev", "venv", "shop")  # a project inside a "venv"


def _at(*parts: str) -> str:
    return os.path.join(ROOT, *parts)


@pytest.mark.parametrize("kind", ["opened", "closed_no_write", "closed", "attrib"])
def test_reads_and_metadata_never_start_a_run(kind: str) -> None:
    assert not starts_a_run(kind, _at("capabilities", "a", "domain.py"), False, ROOT)


@pytest.mark.parametrize("kind", ["modified", "created", "deleted", "moved"])
@pytest.mark.parametrize(
    "name", ["domain.py", "CLAUDE.md", "AGENTS.md", "pyproject.toml", "setup.cfg", ".importlinter"]
)
def test_writes_of_files_lint_reads_start_a_run(kind: str, name: str) -> None:
    assert starts_a_run(kind, _at("capabilities", "a", name), False, ROOT)


@pytest.mark.parametrize(
    "path",
    [
        _at("README.md"),
        _at("notes.txt"),
        _at(".mir", "cache", "boundaries-index.marshal"),
        _at("capabilities", "a", "__pycache__", "domain.cpython-311.pyc"),
        _at(".git", "index"),
        _at(".venv", "lib", "site.py"),
        _at("build-cache", "x.py"),  # a custom cache folder
        os.path.join(os.sep, "elsewhere", "x.py"),
    ],
)
def test_other_files_never_start_a_run(path: str) -> None:
    assert not starts_a_run("modified", path, False, ROOT, ignored=(_at("build-cache"),))


def test_folders_and_extra_files() -> None:
    assert starts_a_run("created", _at("capabilities", "b"), True, ROOT)
    assert starts_a_run("moved", _at("capabilities", "b"), True, ROOT)
    assert not starts_a_run("modified", _at("capabilities"), True, ROOT)
    assert not starts_a_run("created", _at(".mir"), True, ROOT)
    config = os.path.join(os.sep, "etc", "contracts.ini")  # outside the project
    assert starts_a_run("modified", config, False, ROOT, extra_files=frozenset({config}))
