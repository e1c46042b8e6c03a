"""Differential test: mir's import-linter compatibility against the real ``lint-imports``.

Each fixture under ``tests/fixtures/importlinter`` is checked by both tools and the
verdicts must be equal contract by contract. ``lint-imports`` imports nothing either,
but it must *find* the root package, so it runs with the fixture on ``PYTHONPATH``;
mir finds it on disk. Every ``errors/configs/*`` file is one that ``lint-imports``
refuses to run ("could not run"); mir must refuse it too, with a ``ConfigError``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mir.boundaries import extract_imports
from mir.errors import ConfigError
from mir.importlinter import evaluate
from mir.importlinter.adapters.scanning import build_graph
from mir.importlinter.domain.contracts import Session

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "importlinter"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# "<contract name> KEPT" / "... BROKEN", optionally "(1 ignored import, 1 warning)"
VERDICT_LINE = re.compile(r"^(?P<name>.+) (?P<verdict>KEPT|BROKEN)(?: \([^()]*\))?$")
SUMMARY_LINE = re.compile(r"^Contracts: (?P<kept>\d+) kept, (?P<broken>\d+) broken\.$")


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    verdicts: dict[str, bool] | None  # None: lint-imports could not run


def lint_imports(cwd: Path, config: Path, pythonpath: Path) -> Run:
    env = {
        **os.environ,
        "PYTHONPATH": str(pythonpath),
        "COLUMNS": "400",  # rich must not wrap the one-line verdicts
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache", str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    lines = [line.rstrip() for line in output.splitlines()]
    summary = next((m for m in map(SUMMARY_LINE.match, lines) if m), None)
    if summary is None:
        return Run(done.returncode, output, None)
    verdicts = {m["name"]: m["verdict"] == "KEPT" for m in map(VERDICT_LINE.match, lines) if m}
    # The parse is only trusted when it accounts for every contract lint-imports counted.
    assert sum(verdicts.values()) == int(summary["kept"]), output
    assert len(verdicts) - sum(verdicts.values()) == int(summary["broken"]), output
    return Run(done.returncode, output, verdicts)


CASES = {
    "layers": (".importlinter", "."),
    "forbidden": ("setup.cfg", "."),
    "independence": ("pyproject.toml", "."),
    "src_layout": ("pyproject.toml", "src"),
    "unimportable": (".importlinter", "."),
    "multi_root": (".importlinter", "."),
    "direct": (".importlinter", "."),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_verdict_per_contract(case: str) -> None:
    config_name, pythonpath = CASES[case]
    folder = FIXTURES / case
    reference = lint_imports(folder, folder / config_name, folder / pythonpath)
    assert reference.verdicts is not None, reference.output

    results = evaluate(folder, folder / config_name)

    assert {r.name: r.kept for r in results} == reference.verdicts, reference.output
    assert reference.returncode == (0 if all(reference.verdicts.values()) else 1)
    for result in results:
        # A broken contract always says where (file:line) and through which chain.
        assert bool(result.findings) == (not result.kept), result
        for finding in result.findings:
            assert (folder / finding.path).is_file(), finding
            assert finding.contract == result.name


def test_fixtures_cover_kept_and_broken_variants_of_every_contract_type() -> None:
    seen: set[tuple[str, bool]] = set()
    for case, (config_name, _) in CASES.items():
        seen |= {(r.type, r.kept) for r in evaluate(FIXTURES / case, FIXTURES / case / config_name)}
    kinds = ["layers", "forbidden", "independence", "acyclic_siblings", "protected"]
    for kind in [*kinds, "private_modules"]:
        assert {(kind, True), (kind, False)} <= seen, kind


ERROR_CONFIGS = sorted((FIXTURES / "errors" / "configs").iterdir())


@pytest.mark.parametrize("config", ERROR_CONFIGS, ids=[c.name for c in ERROR_CONFIGS])
def test_config_lint_imports_refuses_is_a_config_error(config: Path) -> None:
    folder = FIXTURES / "errors"
    reference = lint_imports(folder, config, folder)
    assert reference.verdicts is None, reference.output
    assert reference.returncode == 1

    with pytest.raises(ConfigError) as raised:
        evaluate(folder, config)

    assert str(config) in str(raised.value)
    name = re.search(r'^name = "?([^"\n]+)"?$', config.read_text(), re.MULTILINE)
    if name:
        assert f"contract '{name[1]}'" in str(raised.value)


MIR_CONTRACTS = """\
[importlinter]
root_package = mir
include_external_packages = True

[importlinter:contract:capability-layers]
name = Every capability keeps domain under application under adapters
type = layers
containers = mir.*
layers =
    (entrypoints)
    (adapters)
    (application)
    (domain)

[importlinter:contract:importlinter-layers]
name = importlinter layers, inverted on purpose
type = layers
containers = mir.importlinter
layers =
    domain
    application

[importlinter:contract:domain-pure]
name = importlinter's domain never touches files or other capabilities
type = forbidden
source_modules = mir.importlinter.domain
forbidden_modules =
    mir.importlinter.adapters
    mir.boundaries
    configparser
    tomllib

[importlinter:contract:cli-apart]
name = boundaries and importlinter are independent
type = independence
modules =
    mir.boundaries
    mir.importlinter

[importlinter:contract:acyclic]
name = Capabilities have no import cycles inside
type = acyclic_siblings
ancestors = mir.*
"""


def test_same_verdicts_on_mirs_own_code(tmp_path: Path) -> None:
    config = tmp_path / ".importlinter"
    config.write_text(MIR_CONTRACTS)
    reference = lint_imports(REPO, config, REPO)
    assert reference.verdicts is not None, reference.output

    results = evaluate(REPO, config)

    assert {r.name: r.kept for r in results} == reference.verdicts, reference.output
    # The inverted contract and the independence one are broken by design.
    assert reference.verdicts["importlinter layers, inverted on purpose"] is False
    assert reference.verdicts["boundaries and importlinter are independent"] is False


GRIMP_GRAPH = """\
import json, sys
import grimp
graph = grimp.build_graph(*sys.argv[3:], include_external_packages=sys.argv[1] == "1",
                          exclude_type_checking_imports=sys.argv[2] == "1", cache_dir=None)
print(json.dumps({
    "modules": sorted(graph.modules),
    "imports": sorted(
        [d["importer"], d["imported"], d["line_number"]]
        for i in sorted(graph.modules)
        for j in sorted(graph.find_modules_directly_imported_by(i))
        for d in graph.get_import_details(importer=i, imported=j)
    ),
}))
"""
GRAPHS = {
    "layers": (FIXTURES / "layers", ["shop"], False, False),
    "forbidden": (FIXTURES / "forbidden", ["media"], True, False),
    "forbidden-no-typing": (FIXTURES / "forbidden", ["media"], True, True),
    "independence": (FIXTURES / "independence", ["zoo"], False, False),
    "src_layout": (FIXTURES / "src_layout" / "src", ["ledger"], True, True),
    "unimportable": (FIXTURES / "unimportable", ["vault"], False, False),
    "multi_root": (FIXTURES / "multi_root", ["alpha", "beta", "ns.gamma", "ns.delta"], True, False),
    "direct": (FIXTURES / "direct", ["bank"], False, False),
    "mir": (REPO, ["mir"], True, False),
    "mir-no-typing": (REPO, ["mir"], True, True),
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_same_graph_as_grimp(case: str) -> None:
    folder, roots, externals, no_typing = GRAPHS[case]
    flags = ["1" if externals else "0", "1" if no_typing else "0"]
    done = subprocess.run(
        [sys.executable, "-c", GRIMP_GRAPH, *flags, *roots],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected = json.loads(done.stdout)

    session = Session(
        root_packages=tuple(roots),
        include_external_packages=externals,
        exclude_type_checking_imports=no_typing,
    )
    graph = build_graph(session, [folder], extract_imports).graph

    assert sorted(graph.modules) == expected["modules"]
    ours = sorted(
        [importer, imported, line]
        for importer, imported in graph.direct_imports()
        for line in sorted(set(graph.lines(importer, imported)))
    )
    assert ours == expected["imports"]


# --------------------------------------------------------------------------- ecosystem
# Like ruff's ecosystem check: real, installed packages with generated contracts. Here the
# broken *pairs* must match too, not only the verdicts.
ECOSYSTEM = ["pydantic", "rich", "typer", "jinja2", "yaml"]
BROKEN_PAIR = re.compile(r"^(\S+) is not allowed to import (\S+):$", re.MULTILINE)


def ecosystem_config(package: str, folder: Path) -> str:
    children = sorted(
        p.stem
        for p in folder.iterdir()
        if (p.is_dir() and (p / "__init__.py").is_file())
        or (p.suffix == ".py" and p.stem.isidentifier() and p.stem != "__init__")
    )
    optional_layers = "".join(f"    ({child})\n" for child in children)
    return f"""\
[importlinter]
root_package = {package}
include_external_packages = True

[importlinter:contract:layers]
name = Children in alphabetical layers
type = layers
containers = {package}
layers =
{optional_layers}
[importlinter:contract:independence]
name = Children independent
type = independence
modules = {package}.*

[importlinter:contract:acyclic]
name = Acyclic
type = acyclic_siblings
ancestors = {package}

[importlinter:contract:forbidden]
name = No typing_extensions
type = forbidden
source_modules = {package}.*
forbidden_modules = typing_extensions
"""


@pytest.mark.slow
@pytest.mark.parametrize("package", ECOSYSTEM)
def test_same_verdicts_and_broken_pairs_on_installed_packages(package: str, tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.find_spec(package)  # finds, does not import
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    config = tmp_path / ".importlinter"
    config.write_text(ecosystem_config(package, folder))

    reference = lint_imports(tmp_path, config, folder.parent)
    assert reference.verdicts is not None, reference.output
    results = evaluate(folder.parent, config)

    assert {r.name: r.kept for r in results} == reference.verdicts
    ours = {
        (f.importer, f.imported)
        for r in results
        if r.type != "acyclic_siblings"
        for f in r.findings
    }
    assert ours == set(BROKEN_PAIR.findall(reference.output))
