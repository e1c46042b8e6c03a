"""The real adapters: tomlkit editing, jinja2 rendering with overrides, checks, the disk."""

from __future__ import annotations

import tomllib
from pathlib import PurePosixPath

import pytest

from mir.errors import ConfigError, UsageError
from mir.scaffold.adapters import (
    DiskWorkspace,
    GeneratedFileCheck,
    JinjaTemplates,
    TomlkitEditor,
    builtin_template_root,
)
from tests.conftest import REPO

FOREIGN_PYPROJECT = """\
# a hand-written file: comments, odd spacing and key order must survive
[project]
name    = "shop"   # aligned on purpose
dependencies = [
  "pydantic",
]

[tool.ruff]
line-length = 88
"""


def test_tool_mir_is_added_and_the_rest_is_kept_byte_for_byte():
    editor = TomlkitEditor()
    result = editor.add_tool_mir(FOREIGN_PYPROJECT, {"capabilities": "capabilities"}, "p")
    assert result.startswith(FOREIGN_PYPROJECT)
    data = tomllib.loads(result)
    assert data["tool"]["mir"] == {"capabilities": "capabilities"}
    assert data["tool"]["ruff"] == {"line-length": 88}
    assert editor.tool_mir(result, "p") == {"capabilities": "capabilities"}


def test_tool_mir_is_added_to_a_pyproject_without_a_tool_table():
    result = TomlkitEditor().add_tool_mir('[project]\nname = "x"\n', {"capabilities": "c"}, "p")
    assert result.startswith('[project]\nname = "x"\n')
    assert "\n\n\n" not in result
    assert tomllib.loads(result)["tool"]["mir"] == {"capabilities": "c"}


def test_tool_mir_goes_to_the_end_even_after_dotted_tool_keys():
    text = 'tool.ruff.line-length = 88\n[project]\nname = "x"'
    result = TomlkitEditor().add_tool_mir(text, {"capabilities": "c"}, "p")
    assert (
        result == f"{text}\n\n[tool.mir]\n# mir: capability-first layout, boundaries, agents\n"
        'capabilities = "c"\n'
    )


def test_an_inline_tool_table_cannot_be_extended(tmp_path):
    with pytest.raises(ConfigError, match="inline table") as info:
        TomlkitEditor().add_tool_mir("tool = {ruff = {x = 1}}\n", {"capabilities": "c"}, "p")
    assert info.value.where == "p"


def test_tool_mir_reads_none_when_absent():
    assert TomlkitEditor().tool_mir(FOREIGN_PYPROJECT, "p") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("[project\n", "invalid TOML"), ("[tool]\nmir = 3\n", "tool.mir must be a table")],
)
def test_a_malformed_pyproject_names_the_file(text, message):
    with pytest.raises(ConfigError, match=message) as info:
        TomlkitEditor().tool_mir(text, "/x/pyproject.toml")
    assert info.value.where == "/x/pyproject.toml"


def test_builtin_templates_are_found_in_the_repository():
    assert builtin_template_root() == REPO / "templates"
    assert (builtin_template_root() / "capability" / "domain.py.j2").is_file()


def test_an_override_wins_and_missing_templates_fall_back(tmp_path):
    (tmp_path / "capability").mkdir()
    (tmp_path / "capability" / "domain.py.j2").write_text("# custom {{ capability }}\n")
    templates = JinjaTemplates(tmp_path)
    assert templates.render("capability/domain.py.j2", {"capability": "desk"}) == "# custom desk\n"
    builtin = templates.render("capability/adapters.py.j2", {"capability": "d", "pascal": "D"})
    assert "class InMemoryDCaseStore" in builtin


def test_a_missing_override_folder_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        JinjaTemplates(tmp_path / "nope")


def test_an_undefined_variable_is_an_error_naming_the_template(tmp_path):
    (tmp_path / "x.j2").write_text("line\n{{ nope }}\n")
    with pytest.raises(ConfigError, match="'nope' is undefined"):
        JinjaTemplates(tmp_path).render("x.j2", {})


@pytest.mark.parametrize(
    ("path", "text", "message"),
    [
        ("a/domain.py", "def (:\n", "not valid Python"),
        ("pyproject.toml", "[x\n", "not valid TOML"),
        ("caps/a/agents/t.yaml", "agent: t\n", "not a valid AgentContract"),
        ("caps/a/evals/t.yaml", "cases: 3\n", "not a valid EvalSuite"),
        ("caps/a/CLAUDE.md", "# no front matter\n", "no front matter"),
        ("caps/a/CLAUDE.md", "---\ncapability: 1abc\n---\n", "not a valid IntentDoc"),
    ],
)
def test_generated_files_are_checked_by_kind(path, text, message):
    with pytest.raises(ConfigError, match=message):
        GeneratedFileCheck().check(PurePosixPath(path), text)


def test_files_without_a_format_pass_the_check():
    GeneratedFileCheck().check(PurePosixPath("CLAUDE.md"), "# root doc, no front matter\n")
    GeneratedFileCheck().check(PurePosixPath("a/agents/t.j2"), "{{ mission }}")


def test_disk_workspace_never_overwrites(tmp_path):
    disk = DiskWorkspace()
    target = tmp_path / "deep" / "a.py"
    disk.create(target, "one\n")
    with pytest.raises(FileExistsError):
        disk.create(target, "two\n")
    assert disk.read_text(target) == "one\n"
    assert disk.read_text(tmp_path / "missing") is None
    disk.remove(target)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []  # the folder it made is gone too


def test_disk_workspace_keeps_folders_it_did_not_make(tmp_path):
    disk = DiskWorkspace()
    (tmp_path / "mine").mkdir()
    disk.create(tmp_path / "mine" / "a.py", "")
    disk.remove(tmp_path / "mine" / "a.py")
    assert (tmp_path / "mine").is_dir()


def test_a_file_in_place_of_a_folder_is_a_usage_error(tmp_path):
    (tmp_path / "orders").write_text("")
    with pytest.raises(UsageError, match="a file stands where a folder"):
        DiskWorkspace().read_text(tmp_path / "orders" / "domain.py")


def test_a_crlf_pyproject_keeps_its_line_endings(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(b'[project]\r\nname = "x"\r\n')
    disk, editor = DiskWorkspace(), TomlkitEditor()
    text = disk.read_text(path)
    assert text is not None
    disk.replace(path, editor.add_tool_mir(text, {"capabilities": "c"}, str(path)))
    assert path.read_bytes().startswith(b'[project]\r\nname = "x"\r\n')
    assert tomllib.loads(path.read_text())["tool"]["mir"] == {"capabilities": "c"}
