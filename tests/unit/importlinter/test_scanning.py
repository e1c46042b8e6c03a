"""Building the graph from files: module discovery and import resolution like grimp."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mir.boundaries import extract_imports
from mir.errors import ConfigError
from mir.importlinter.adapters.scanning import build_graph, find_modules, locate_package
from mir.importlinter.domain.contracts import Session


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_modules_of_a_regular_package(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "",
            "app/sub/__init__.py": "",
            "app/sub/b.py": "",
            "app/orphan/c.py": "",  # no __init__.py inside a regular package: not a module
            "app/not-an-identifier/d.py": "",
            "app/some.thing.py": "",  # too many dots
            "app/.hidden.py": "",
            "app/data.txt": "",
        },
    )

    files, namespaces = find_modules("app", tmp_path / "app")

    assert sorted(files) == ["app", "app.a", "app.sub", "app.sub.b"]
    assert files["app.sub"] == tmp_path / "app/sub/__init__.py"
    assert namespaces == set()


def test_modules_of_a_namespace_root(tmp_path: Path) -> None:
    write(tmp_path, {"ns/inner/mod.py": "", "ns/empty/readme.txt": "", "ns/top.py": ""})

    files, namespaces = find_modules("ns", tmp_path / "ns")

    assert sorted(files) == ["ns.inner.mod", "ns.top"]
    assert namespaces == {"ns", "ns.inner"}


def test_locating_root_packages(tmp_path: Path) -> None:
    write(tmp_path, {"src/app/__init__.py": "", "single.py": ""})
    dirs = [tmp_path, tmp_path / "src"]
    assert locate_package("app", dirs) == tmp_path / "src" / "app"
    with pytest.raises(ConfigError, match="is a module, not a package"):
        locate_package("single", dirs)
    with pytest.raises(ConfigError, match="could not find root package 'ghost'"):
        locate_package("ghost", dirs)


def test_a_root_package_elsewhere_is_found_on_sys_path_without_importing_it(
    tmp_path: Path, monkeypatch
) -> None:
    # a monorepo member installed with `pip install -e packages/billing`
    write(tmp_path, {"packages/billing/src/billing/__init__.py": "raise SystemExit('imported!')"})
    monkeypatch.syspath_prepend(str(tmp_path / "packages" / "billing" / "src"))
    found = locate_package("billing", [tmp_path, tmp_path / "src"])
    assert found == tmp_path / "packages" / "billing" / "src" / "billing"
    assert "billing" not in sys.modules


SOURCES = {
    "app/__init__.py": "from . import a\n",
    "app/a.py": (
        "from app.sub import b, helper\nimport app.sub.b.deep.er\nimport requests.adapters\n"
    ),
    "app/sub/__init__.py": "def helper(): ...\n",
    "app/sub/b.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from app import a\n"
        "from ... import beyond\n"
        "from .. import *\n"
    ),
}


def test_import_resolution(tmp_path: Path) -> None:
    write(tmp_path, SOURCES)
    session = Session(root_packages=("app",))

    scanned = build_graph(session, [tmp_path], extract_imports)
    graph = scanned.graph

    assert set(graph.imports_of("app")) == {"app.a"}
    # b is a module, helper is a name in app.sub; app.sub.b.deep.er resolves one level up
    # only, so it is dropped (not internal, and externals are off)
    assert set(graph.imports_of("app.a")) == {"app.sub.b", "app.sub"}
    assert graph.lines("app.a", "app.sub") == [1]
    # the TYPE_CHECKING import counts by default; the relative import above the top
    # package is dropped; `from .. import *` names the package
    assert set(graph.imports_of("app.sub.b")) == {"app.a", "app"}
    assert graph.squashed == set()
    assert scanned.files["app.sub.b"] == tmp_path / "app/sub/b.py"


def test_externals_are_squashed_and_type_checking_imports_can_be_excluded(tmp_path: Path) -> None:
    write(tmp_path, SOURCES)
    session = Session(
        root_packages=("app",), include_external_packages=True, exclude_type_checking_imports=True
    )

    graph = build_graph(session, [tmp_path], extract_imports).graph

    assert "requests" in graph.imports_of("app.a")
    assert "typing" in graph.imports_of("app.sub.b")
    assert graph.squashed == {"requests", "typing"}
    assert "app.a" not in graph.imports_of("app.sub.b")


def test_external_names_sharing_a_namespace_with_a_root(tmp_path: Path) -> None:
    write(tmp_path, {"ns/app/__init__.py": "import ns.other.thing\nimport ns\n"})
    session = Session(root_packages=("ns.app",), include_external_packages=True)

    graph = build_graph(session, [tmp_path], extract_imports).graph

    # the portion next to ours, not the shared namespace (importing `ns` itself is dropped)
    assert set(graph.imports_of("ns.app")) == {"ns.other"}
