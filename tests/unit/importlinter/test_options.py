"""Raw option strings -> contract models, with import-linter's rules and messages."""

from __future__ import annotations

import pytest

from mir.importlinter.domain.contracts import (
    AcyclicSiblingsContract,
    AlertLevel,
    ForbiddenContract,
    LayersContract,
)
from mir.importlinter.domain.options import OptionsError, parse_contract, parse_session


def test_layers_with_siblings_optional_and_blank_lines() -> None:
    contract = parse_contract(
        {
            "id": "x",
            "name": "Layers",
            "type": "layers",
            "layers": ["top", "", "a | (b)", "c : d"],
            "containers": "app.*",
            "exhaustive": "TRUE",
            "exhaustive_ignores": ["tests", "conftest"],
        }
    )

    assert isinstance(contract, LayersContract)
    top, siblings, joined = contract.layers
    assert [t.name for t in top.tails] == ["top"]
    assert [(t.name, t.optional) for t in siblings.tails] == [("a", False), ("b", True)]
    assert siblings.independent and not joined.independent
    assert [str(c) for c in contract.containers] == ["app.*"]
    assert contract.exhaustive is True
    assert contract.exhaustive_ignores == {"tests", "conftest"}
    assert contract.unmatched_ignore_imports_alerting is AlertLevel.ERROR


def test_forbidden_defaults_and_ignore_imports() -> None:
    contract = parse_contract(
        {
            "name": "F",
            "type": "forbidden",
            "source_modules": "app.a",
            "forbidden_modules": ["app.b", "requests"],
            "ignore_imports": ["app.a.** -> app.b", "app.*.x->app.b.*"],
            "unmatched_ignore_imports_alerting": "warn",
        }
    )

    assert isinstance(contract, ForbiddenContract)
    assert contract.as_packages is True and contract.allow_indirect_imports is False
    assert [str(e) for e in contract.ignore_imports] == ["app.a.** -> app.b", "app.*.x -> app.b.*"]
    assert contract.unmatched_ignore_imports_alerting is AlertLevel.WARN


def test_acyclic_depth_accepts_a_toml_integer() -> None:
    contract = parse_contract(
        {"name": "A", "type": "acyclic_siblings", "ancestors": ["app"], "depth": 2}
    )
    assert isinstance(contract, AcyclicSiblingsContract)
    assert contract.depth == 2


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"type": "layers", "layers": ["a"]}, "a contract has no 'name'"),
        ({"name": "N"}, "the contract has no 'type'"),
        ({"name": "N", "type": "layered"}, "unknown contract type 'layered'"),
        (
            {"name": "N", "type": "private_modules", "packages_with_private_modules": "a._b.c"},
            "Packages cannot be private or inside a private module: 'a._b.c'.",
        ),
        (
            {"name": "N", "type": "protected", "protected_modules": "a"},
            "allowed_importers: This is a required field.",
        ),
        ({"name": "N", "type": "layers"}, "layers: This is a required field."),
        (
            {"name": "N", "type": "layers", "layers": ["a"], "exhaustiv": "true"},
            "exhaustiv: Unrecognized option. Did you mean 'exhaustive'?",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a"], "exhaustive": "yes"},
            "exhaustive: Could not parse a boolean from 'yes'.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a | b : c"]},
            "Layer cannot have a mixture of independent and non-independent elements.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a | a"]},
            "Modules cannot be repeated in a layer: 'a'.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a | a.b"]},
            "Modules cannot contain each other in a layer: 'a' contains 'a.b'.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a", "b | a"]},
            "Modules cannot be in more than one layer: 'a'.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a", "a.b"]},
            "Layers cannot contain other layers: 'a' contains 'a.b'.",
        ),
        (
            {"name": "N", "type": "layers", "layers": ["a"], "exhaustive": "true"},
            "The exhaustive option is not supported for contracts without containers.",
        ),
        (
            {"name": "N", "type": "forbidden", "source_modules": "a.b*", "forbidden_modules": "c"},
            "source_modules: A wildcard can only replace a whole module.",
        ),
        (
            {"name": "N", "type": "independence", "modules": ["a.**.*"]},
            "A recursive wildcard cannot be followed by a wildcard.",
        ),
        (
            {"name": "N", "type": "independence", "modules": ["a.*.**"]},
            "A wildcard cannot be followed by a recursive wildcard.",
        ),
        (
            {"name": "N", "type": "independence", "modules": ["a"], "ignore_imports": "a b"},
            'Must be in the form "package.importer -> package.imported".',
        ),
        (
            {
                "name": "N",
                "type": "independence",
                "modules": ["a"],
                "unmatched_ignore_imports_alerting": "loud",
            },
            "Invalid value 'loud': expected 'none', 'warn' or 'error'.",
        ),
        (
            {"name": "N", "type": "acyclic_siblings", "ancestors": "a", "depth": "-1"},
            "depth: Must be >= 0.",
        ),
        (
            {"name": "N", "type": "acyclic_siblings", "ancestors": "a", "depth": "deep"},
            "depth: 'deep' is not an integer.",
        ),
        (
            {
                "name": "N",
                "type": "forbidden",
                "source_modules": "a",
                "forbidden_modules": "b",
                "as_packages": ["true", "false"],
            },
            "as_packages: Expected a single value, got multiple values.",
        ),
    ],
)
def test_invalid_contract_options_name_the_contract(options: dict, expected: str) -> None:
    with pytest.raises(OptionsError) as raised:
        parse_contract(options)

    assert expected in raised.value.message
    assert raised.value.contract == options.get("name", "?")


def test_session_root_package_forms() -> None:
    assert parse_session({"root_package": "a"}).root_packages == ("a",)
    session = parse_session({"root_packages": ["a", "b"], "include_external_packages": "true"})
    assert session.root_packages == ("a", "b")
    assert session.include_external_packages is True
    assert session.exclude_type_checking_imports is False


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "missing 'root_packages'"),
        ({"root_packages": ["", " "]}, "'root_packages' is empty"),
        ({"root_package": "a", "contract_types": ["x: y.Z"]}, "custom contract_types"),
    ],
)
def test_invalid_session(options: dict, expected: str) -> None:
    with pytest.raises(OptionsError, match=expected) as raised:
        parse_session(options)
    assert raised.value.contract is None
