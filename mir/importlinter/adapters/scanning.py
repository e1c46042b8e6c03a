"""Building the import graph from source files, without importing any user code.

``lint-imports`` finds root packages with ``importlib`` (so they must be importable);
mir finds them as folders next to the config file or under ``src/``, which also works
for src-layouts and for packages whose ``__init__`` cannot be imported, and else where
``importlib``'s path finder would (``sys.path``, without importing them). Module discovery
and import resolution follow grimp:

* modules are the ``.py`` files of the root package; a folder below a regular package is
  walked only if it has an ``__init__.py``; folders of a namespace root count as
  (namespace) modules when they hold Python files;
* ``from a import b`` names ``a.b`` when that is a module, else ``a``; ``import a.b.c``
  names ``a.b.c`` or, failing that, ``a.b`` (one level up only, as grimp does);
* anything else is external: with ``include_external_packages`` it becomes one squashed
  node for its distribution (``requests``), otherwise it is dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from mir.errors import ConfigError
from mir.importlinter.domain.contracts import Session
from mir.importlinter.domain.graph import ImportGraph, SourceGraph

# (source, module name, is_package) -> refs with .module, .names, .line, .type_checking,
# .beyond_top -- the shape of mir.boundaries.ImportRef
Extractor = Callable[[bytes, str, bool], Iterable]


class SourceScanner:
    """The production ``GraphBuilder``: root packages found on disk, imports extracted
    from source text by ``extract`` (mir.boundaries' fast extractor by default)."""

    def __init__(self, extract: Extractor) -> None:
        self.extract = extract

    def build(self, session: Session, search_dirs: list[Path]) -> SourceGraph:
        return build_graph(session, search_dirs, self.extract)


def locate_package(name: str, search_dirs: Iterable[Path]) -> Path:
    """The folder of root package ``name`` (dotted names are namespace portions)."""
    for base in search_dirs:
        candidate = base.joinpath(*name.split("."))
        if candidate.is_dir():
            return candidate
        if candidate.with_suffix(".py").is_file():
            raise ConfigError(
                f"'{name}' is a module, not a package",
                where=str(candidate.with_suffix(".py")),
                hint="root_packages should only contain packages (directories)",
            )
    found = _on_sys_path(name)
    if found is not None:
        return found
    looked = ", ".join(str(d) for d in search_dirs)
    raise ConfigError(
        f"could not find root package '{name}'",
        where=f"{looked} or this Python's sys.path",
        hint="root_packages must be folders next to the config file, under src/, "
        "or importable by the Python running mir",
    )


def _on_sys_path(name: str) -> Path | None:
    """Where ``lint-imports`` would find root package ``name``: on ``sys.path`` (an
    installed or ``pip install -e`` package of a monorepo). ``PathFinder`` only looks at
    folders on disk: nothing is imported and no import hook runs."""
    from importlib.machinery import PathFinder

    top, _, rest = name.partition(".")
    try:
        spec = PathFinder.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*rest.split(".")) if rest else Path(location)
        if candidate.is_dir():
            return candidate
    return None


def find_modules(name: str, directory: Path) -> tuple[dict[str, Path], set[str]]:
    """(module -> file, namespace modules) of the package at ``directory``, like grimp."""
    files: dict[str, Path] = {}
    candidate_namespaces: list[Path] = []
    portions: list[Path] = []
    for dirpath_text, dirs, filenames in os.walk(directory):
        dirpath = Path(dirpath_text)
        if any(dirpath == p or p in dirpath.parents for p in portions):
            if "__init__.py" not in filenames:
                dirs.clear()  # an orphan folder inside a regular package: not importable
                continue
        elif "__init__.py" in filenames:
            portions.append(dirpath)
        else:
            candidate_namespaces.append(dirpath)
        dirs[:] = sorted(d for d in dirs if d.isidentifier())
        for filename in filenames:
            if filename.startswith(".") or not filename.endswith(".py") or filename.count(".") > 1:
                continue
            parts = [*dirpath.relative_to(directory).parts, filename[:-3]]
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join([name, *parts])] = dirpath / filename
    namespaces = {
        ".".join([name, *ns.relative_to(directory).parts])
        for ns in candidate_namespaces
        if any(ns in path.parents for path in files.values())
    }
    return files, namespaces


def build_graph(session: Session, search_dirs: list[Path], extract: Extractor) -> SourceGraph:
    found: dict[str, Path] = {}
    namespaces: set[str] = set()
    for root in session.root_packages:
        files, root_namespaces = find_modules(root, locate_package(root, search_dirs))
        found.update(files)
        namespaces |= root_namespaces
    graph = ImportGraph()
    for module in namespaces:
        graph.add_module(module)
    for module in found:
        graph.add_module(module)
    for module, path in sorted(found.items()):
        is_package = path.name == "__init__.py"
        try:
            refs = extract(path.read_bytes(), module, is_package)
        except SyntaxError as exc:
            raise ConfigError(
                f"cannot parse: {exc.msg}",
                where=f"{path}:{exc.lineno or 0}",
                hint="import-linter cannot build its graph either; fix the syntax error",
            ) from exc
        for ref in refs:
            if ref.beyond_top or (session.exclude_type_checking_imports and ref.type_checking):
                continue
            names = [f"{ref.module}.{n}" for n in ref.names] if ref.names else [ref.module]
            for name in names:
                imported = _resolve(name, found, session)
                if imported is not None:
                    if imported not in found and imported not in graph.modules:
                        graph.add_module(imported, squashed=True)
                    graph.add_import(module, imported, ref.line)
    return SourceGraph(graph, found)


def _resolve(name: str, internal: dict[str, Path], session: Session) -> str | None:
    if name in internal:
        return name
    parent = name.rpartition(".")[0]
    if parent and parent in internal:
        return parent
    if not session.include_external_packages:
        return None
    return _distill_external(name, session.root_packages)


def _distill_external(name: str, roots: tuple[str, ...]) -> str | None:
    """The squashed node for external ``name``: its top-level package, or, when it shares
    a namespace with a root package, its shallowest component outside that namespace."""
    if any(root.startswith(name + ".") for root in roots):
        return None  # importing the namespace that holds a root package
    top = name.split(".")[0]
    portions = []
    for root in sorted(roots, reverse=True):
        if root.startswith(top + "."):
            internal, external, shared = root.split("."), name.split("."), []
            while external and internal and external[0] == internal[0]:
                shared.append(external.pop(0))
                internal.pop(0)
            if external:
                portions.append(".".join([*shared, external[0]]))
    return max(portions, key=lambda p: p.count(".")) if portions else top
