"""The use case with hand-written fakes for its two ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import ConfigError
from mir.importlinter import check_contracts
from mir.importlinter.application import evaluate_config, locate_config
from mir.importlinter.domain.contracts import Session
from mir.importlinter.domain.graph import ImportGraph, SourceGraph
from mir.importlinter.domain.options import RawConfig, RawContract


class FakeConfigs:
    def __init__(self, found: Path | None, configs: dict[Path, RawConfig]) -> None:
        self.found = found
        self.configs = configs

    def find(self, root: Path) -> Path | None:
        return self.found

    def read(self, path: Path) -> RawConfig:
        return self.configs[path]


class FakeBuilder:
    """Serves one graph: app.a -> app.b (line 7), app.b -> app.c (line 3)."""

    def __init__(self, root: Path) -> None:
        self.calls: list[tuple[Session, list[Path]]] = []
        self.root = root

    def build(self, session: Session, search_dirs: list[Path]) -> SourceGraph:
        self.calls.append((session, search_dirs))
        graph = ImportGraph()
        graph.add_module("app")
        graph.add_import("app.a", "app.b", 7)
        graph.add_import("app.b", "app.c", 3)
        files = {m: self.root / "src" / "app" / f"{m.split('.')[-1]}.py" for m in graph.modules}
        return SourceGraph(graph, files)


def raw(tmp_path: Path, *contracts: dict, session: dict | None = None) -> RawConfig:
    return RawConfig(
        tmp_path / "cfg" / ".importlinter",
        session if session is not None else {"root_package": "app"},
        [RawContract(options, line=10 + i) for i, options in enumerate(contracts)],
    )


LAYERS = {"name": "Layers", "type": "layers", "layers": ["app.c", "app.b", "app.a"]}
FORBIDDEN = {"name": "No c", "type": "forbidden", "source_modules": "app.a",
             "forbidden_modules": "app.c"}  # fmt: skip


def test_locate_prefers_the_explicit_config(tmp_path: Path) -> None:
    explicit, found = tmp_path / "x.ini", tmp_path / "setup.cfg"
    configs = {explicit: raw(tmp_path), found: raw(tmp_path)}
    assert locate_config(tmp_path, explicit, FakeConfigs(found, configs)) is configs[explicit]
    assert locate_config(tmp_path, None, FakeConfigs(found, configs)) is configs[found]
    assert locate_config(tmp_path, None, FakeConfigs(None, configs)) is None


def test_verdicts_in_config_order_with_findings_at_the_first_import(tmp_path: Path) -> None:
    builder = FakeBuilder(tmp_path)

    layers, forbidden = evaluate_config(tmp_path, raw(tmp_path, LAYERS, FORBIDDEN), builder)

    assert (layers.name, layers.type, layers.kept) == ("Layers", "layers", False)
    assert {(f.importer, f.imported) for f in layers.findings} == {
        ("app.a", "app.b"),
        ("app.b", "app.c"),
    }
    [finding] = forbidden.findings
    assert finding.code == "IL002"
    assert finding.rule == "importlinter-forbidden"
    assert finding.contract == "No c"
    assert (finding.path, finding.line) == ("src/app/a.py", 7)
    assert finding.message == "No c: app.a is not allowed to import app.c: app.a -> app.b -> app.c"
    # root packages are looked for next to the config file, under its src/, then the root
    [(session, dirs)] = builder.calls
    assert session.root_packages == ("app",)
    config_dir = (tmp_path / "cfg").resolve()
    assert dirs == [config_dir, config_dir / "src", tmp_path, tmp_path / "src"]


def test_invalid_contract_names_file_line_and_contract(tmp_path: Path) -> None:
    bad = {**FORBIDDEN, "name": "Typo", "forbiden_modules": "x"}
    with pytest.raises(ConfigError) as raised:
        evaluate_config(tmp_path, raw(tmp_path, LAYERS, bad), FakeBuilder(tmp_path))
    assert raised.value.where == f"{tmp_path / 'cfg' / '.importlinter'}:11"
    assert "contract 'Typo'" in raised.value.message
    assert "Did you mean 'forbidden_modules'?" in raised.value.message


def test_contract_that_cannot_be_checked_is_a_config_error(tmp_path: Path) -> None:
    missing = {"name": "Ghost", "type": "layers", "layers": ["app.ghost", "app.a"]}
    with pytest.raises(ConfigError) as raised:
        evaluate_config(tmp_path, raw(tmp_path, missing), FakeBuilder(tmp_path))
    assert raised.value.where.endswith(".importlinter:10")
    assert "contract 'Ghost': Missing layer 'app.ghost'" in raised.value.message
    assert raised.value.hint


def test_bad_session_is_a_config_error_before_any_graph_is_built(tmp_path: Path) -> None:
    builder = FakeBuilder(tmp_path)
    with pytest.raises(ConfigError, match=r"\[importlinter\]: missing 'root_packages'"):
        evaluate_config(tmp_path, raw(tmp_path, LAYERS, session={}), builder)
    assert builder.calls == []


def test_check_contracts_is_none_without_any_config(tmp_path: Path) -> None:
    assert check_contracts(tmp_path, None) is None


def test_a_finding_about_a_namespace_folder_points_at_its_nearest_file(tmp_path: Path) -> None:
    class NamespaceBuilder(FakeBuilder):
        def build(self, session: Session, search_dirs: list[Path]) -> SourceGraph:
            graph = ImportGraph()
            for module in ("app", "app.box", "app.box.ns", "app.box.domain"):
                graph.add_module(module)
            return SourceGraph(graph, {"app.box": tmp_path / "app/box/__init__.py"})

    exhaustive = {"name": "E", "type": "layers", "layers": ["domain"], "containers": "app.box",
                  "exhaustive": "true"}  # fmt: skip

    [result] = evaluate_config(tmp_path, raw(tmp_path, exhaustive), NamespaceBuilder(tmp_path))

    [finding] = result.findings
    assert (finding.importer, finding.path) == ("app.box.ns", "app/box/__init__.py")
