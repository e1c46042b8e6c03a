"""Finding the project and validating ``[tool.mir]``: errors name the file and the key."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from mir.errors import ConfigError
from mir.project import MirSettings, find_project, load_project_at


def pyproject(folder, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(text)
    return path


def test_find_project_walks_up_to_the_nearest_tool_mir(tmp_path):
    pyproject(tmp_path, '[tool.mir]\ncapabilities = "src/caps"\n')
    pyproject(tmp_path / "sub", '[project]\nname = "not-mir"\n')  # no [tool.mir]: skipped
    deep = tmp_path / "sub" / "a" / "b"
    deep.mkdir(parents=True)
    project = find_project(deep)
    assert project.root == tmp_path.resolve()
    assert project.capabilities_dir == tmp_path.resolve() / "src" / "caps"
    assert project.state_dir == tmp_path.resolve() / ".mir"


def test_find_project_from_a_file_starts_at_its_folder(tmp_path):
    pyproject(tmp_path, "[tool.mir]\n")
    (tmp_path / "x.py").write_text("")
    assert find_project(tmp_path / "x.py").root == tmp_path.resolve()


def test_no_project_says_run_mir_init(tmp_path):
    with pytest.raises(ConfigError, match="no mir project found") as info:
        find_project(tmp_path)
    assert "mir init" in (info.value.hint or "")


def test_defaults():
    settings = MirSettings()
    assert settings.capabilities == "capabilities"
    assert settings.state_dir == ".mir"
    assert settings.templates is None


def test_an_unknown_key_is_named_with_its_table(tmp_path):
    path = pyproject(tmp_path, '[tool.mir]\ncapabilites = "x"\n')
    with pytest.raises(ConfigError) as info:
        find_project(tmp_path)
    assert info.value.where == str(path)
    assert info.value.message == "tool.mir.capabilites: unknown key (did you mean `capabilities`?)"


def test_a_wrong_type_names_the_key(tmp_path):
    pyproject(tmp_path, '[tool.mir]\nshared = "mir.errors"\n')
    with pytest.raises(ConfigError) as info:
        find_project(tmp_path)
    assert info.value.message.startswith("tool.mir.shared: Input should be a valid list")


def test_tool_mir_that_is_not_a_table(tmp_path):
    path = pyproject(tmp_path, "[tool]\nmir = 1\n")
    with pytest.raises(ConfigError, match="must be a table") as info:
        find_project(tmp_path)
    assert info.value.where == str(path)


def test_tool_that_is_not_a_table(tmp_path):
    path = pyproject(tmp_path, "tool = 1\n")
    with pytest.raises(ConfigError, match=r"\[tool\] must be a table") as info:
        find_project(tmp_path)
    assert info.value.where == str(path)


def test_malformed_toml_names_the_file(tmp_path):
    path = pyproject(tmp_path, "[tool.mir\n")
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        find_project(tmp_path)
    assert info.value.where == str(path)


def test_load_project_at_needs_the_table(tmp_path):
    pyproject(tmp_path, "[project]\n")
    with pytest.raises(ConfigError, match=r"no \[tool.mir\] table") as info:
        load_project_at(tmp_path)
    assert "mir init" in (info.value.hint or "")


class LintSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cache: bool = True


def test_a_section_is_validated_by_its_owner_and_errors_name_the_dotted_key(tmp_path):
    path = pyproject(tmp_path, "[tool.mir.lint]\ncache = false\n")
    assert find_project(tmp_path).section("lint", LintSettings).cache is False
    pyproject(tmp_path, '[tool.mir.lint]\ncache = "sometimes"\n')
    with pytest.raises(ConfigError) as info:
        find_project(tmp_path).section("lint", LintSettings)
    assert info.value.where == str(path)
    assert info.value.message.startswith("tool.mir.lint.cache: Input should be a valid boolean")
