"""Config readers: INI and TOML forms, the search order, and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import ConfigError
from mir.importlinter.adapters.config import find_config, read_config

INI = """\
[importlinter]
root_packages =
    shop
    extra
include_external_packages = True

[importlinter:contract:one]
name = One
type = layers
layers =
    shop.high

    shop.low
"""


def test_ini_multiline_values_are_lists_and_single_lines_strings(tmp_path: Path) -> None:
    path = tmp_path / ".importlinter"
    path.write_text(INI)

    raw = read_config(path)

    assert raw.session == {"root_packages": ["shop", "extra"], "include_external_packages": "True"}
    [contract] = raw.contracts
    assert contract.options == {
        "id": "one",
        "name": "One",
        "type": "layers",
        "layers": ["shop.high", "", "shop.low"],
    }
    assert contract.line == 7  # the section header, for error messages
    assert raw.where(contract) == f"{path}:7"


def test_toml_booleans_become_the_strings_import_linter_compares(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[tool.importlinter]\nroot_package = "shop"\nexclude_type_checking_imports = true\n'
        '[[tool.importlinter.contracts]]\nname = "x"\ntype = "layers"\nlayers = ["a", "b"]\n'
        "exhaustive = false\n"
    )

    raw = read_config(path)

    assert raw.session == {"root_package": "shop", "exclude_type_checking_imports": "True"}
    assert raw.contracts[0].options["exhaustive"] == "False"
    assert raw.contracts[0].options["layers"] == ["a", "b"]


def test_search_order_is_setup_cfg_then_importlinter_then_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.importlinter]\nroot_package = 'a'\n")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    (tmp_path / ".importlinter").write_text("[importlinter]\nroot_package = a\n")
    assert find_config(tmp_path) == tmp_path / ".importlinter"
    # a setup.cfg without the section does not count
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = a\n")
    assert find_config(tmp_path) == tmp_path / ".importlinter"
    (tmp_path / "setup.cfg").write_text("[importlinter]\nroot_package = a\n")
    assert find_config(tmp_path) == tmp_path / "setup.cfg"


def test_no_config_found(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 1\n")
    assert find_config(tmp_path) is None


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("setup.cfg", "[metadata]\nname = x\n", "no [importlinter] section"),
        ("pyproject.toml", "[project]\nname = 'x'\n", "no [tool.importlinter] section"),
        (".importlinter", "[importlinter]\nroot_package = a\n", "no contracts found"),
        ("pyproject.toml", "[tool.importlinter]\nroot_package = 'a'\n", "no contracts found"),
        (".importlinter", "[importlinter\nroot_package = a\n", "invalid INI"),
        ("pyproject.toml", "[tool.importlinter\n", "invalid TOML"),
        (
            "pyproject.toml",
            "[tool.importlinter]\nroot_package = 'a'\ncontracts = 'x'\n",
            "must be an array of tables",
        ),
        (
            "pyproject.toml",
            "[tool.importlinter]\nroot_package = 'a'\n"
            "[[tool.importlinter.contracts]]\nid = 'a:b'\nname = 'x'\ntype = 'layers'\n",
            "may not contain a colon",
        ),
        (
            "pyproject.toml",
            "[tool.importlinter]\nroot_package = 'a'\n"
            "[[tool.importlinter.contracts]]\nid = 'x'\nname = 'x'\ntype = 'layers'\n"
            "[[tool.importlinter.contracts]]\nid = 'x'\nname = 'y'\ntype = 'layers'\n",
            "more than one contract has the id 'x'",
        ),
    ],
)
def test_unreadable_configs_name_the_file(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text)

    with pytest.raises(ConfigError) as raised:
        read_config(path)

    assert expected in str(raised.value)
    assert raised.value.where == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        read_config(tmp_path / "nope.ini")
