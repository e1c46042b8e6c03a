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
from typing import TYPE_CHECKING, Protocol

from mir.errors import ConfigError
from mir.importlinter.domain.graph import ImportGraph, SourceGraph

if TYPE_CHECKING:  # a replay of cached verdicts locates packages without pydantic
    from mir.importlinter.domain.contracts import Session

# (source, module name, is_package) -> refs with .module, .names, .line, .type_checking,
# .beyond_top -- the shape of mir.boundaries.ImportRef
Extractor = Callable[[bytes, str, bool], Iterable]
# (root package, its folder, module -> file, namespace modules): what a scan walked
Located = tuple[str, Path, dict[str, Path], set[str]]


class RefsCache(Protocol):
    def refs(self, path: Path, module: str, is_package: bool, extract: Extractor) -> Iterable:
        """The imports of ``path``, by its content: extracted only when unknown."""
        ...


class SourceScanner:
    """The production ``GraphBuilder``: root packages found on disk, imports extracted
    from source text by ``extract`` (mir.boundaries' fast extractor by default), through
    ``cache`` when given. ``located`` and ``search_dirs`` keep what the last build
    walked, so the caller can key a result cache on exactly those files."""

    def __init__(self, extract: Extractor, cache: RefsCache | None = None) -> None:
        self.extract = extract
        self.cache = cache
        self.located: list[Located] = []
        self.search_dirs: list[Path] = []

    def build(self, session: Session, search_dirs: list[Path]) -> SourceGraph:
        self.located, self.search_dirs = [], list(search_dirs)
        return build_graph(session, search_dirs, self.extract, self.cache, self.located)


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
    """(module -> file, namespace modules) of the package at ``directory``, like grimp.
    (Folder names are handled as strings: a replay of cached verdicts walks the whole
    tree, and ``Path`` arithmetic per folder was most of its time.)"""
    files: dict[str, Path] = {}
    candidate_namespaces: list[tuple[str, ...]] = []
    portions: list[str] = []  # folders of regular packages, with a trailing separator
    with_modules: set[tuple[str, ...]] = set()  # folders that hold a module file
    base = str(directory)
    for dirpath, dirs, filenames in os.walk(base):
        inside = dirpath + os.sep
        relative = tuple(os.path.relpath(dirpath, base).split(os.sep)) if dirpath != base else ()
        if any(inside.startswith(portion) for portion in portions):
            if "__init__.py" not in filenames:
                dirs.clear()  # an orphan folder inside a regular package: not importable
                continue
        elif "__init__.py" in filenames:
            portions.append(inside)
        else:
            candidate_namespaces.append(relative)
        dirs[:] = sorted(d for d in dirs if d.isidentifier())
        folder = Path(dirpath)
        for filename in filenames:
            if filename.startswith(".") or not filename.endswith(".py") or filename.count(".") > 1:
                continue
            parts = [*relative, filename[:-3]]
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join([name, *parts])] = folder / filename
            with_modules.add(relative)
    namespaces = {  # a namespace folder counts when some module file lies below it
        ".".join([name, *ns])
        for ns in candidate_namespaces
        if any(held[: len(ns)] == ns for held in with_modules)
    }
    return files, namespaces


def build_graph(
    session: Session,
    search_dirs: list[Path],
    extract: Extractor,
    cache: RefsCache | None = None,
    located: list[Located] | None = None,
) -> SourceGraph:
    found: dict[str, Path] = {}
    namespaces: set[str] = set()
    for root in session.root_packages:
        directory = locate_package(root, search_dirs)
        files, root_namespaces = find_modules(root, directory)
        if located is not None:
            located.append((root, directory, files, root_namespaces))
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
            if cache is not None:
                refs = cache.refs(path, module, is_package, extract)
            else:
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
