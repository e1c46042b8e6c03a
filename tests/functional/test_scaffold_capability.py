"""``mir new capability``: the slice it writes, and every way it refuses."""

from __future__ import annotations

import ast

import pytest

from mir.contracts import load_intent_doc
from tests.functional.scaffold_helpers import read_tree


@pytest.fixture
def shop(run_mir, tmp_path):
    root = tmp_path / "shop"
    assert run_mir("init", str(root)).returncode == 0
    return root


def test_new_capability_writes_a_vertical_slice(run_mir, shop, snapshot):
    result = run_mir("new", "capability", "support-desk", cwd=shop)
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot(name="output")
    slice_ = shop / "capabilities" / "support_desk"
    assert read_tree(slice_) == snapshot(name="files")


def test_the_intent_doc_validates_and_lists_exactly_the_public_interface(run_mir, shop):
    assert run_mir("new", "capability", "orders", cwd=shop).returncode == 0
    slice_ = shop / "capabilities" / "orders"
    doc = load_intent_doc(slice_ / "CLAUDE.md")
    assert doc.capability == "orders"
    assert set(doc.forbidden) == {"domain", "application"}
    tree = ast.parse((slice_ / "__init__.py").read_text())
    exported = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "__all__"
    )
    assert sorted(doc.public) == sorted(ast.literal_eval(exported))
    assert 10 <= len((slice_ / "CLAUDE.md").read_text().splitlines()) <= 60


def test_it_works_from_a_subfolder_of_the_project(run_mir, shop):
    result = run_mir("new", "capability", "orders", cwd=shop / "capabilities")
    assert result.returncode == 0, result.stderr
    assert (shop / "capabilities" / "orders" / "domain.py").is_file()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("class", "is a Python keyword"),
        ("../x", "contains a path separator"),
        ("a/b", "contains a path separator"),
        ("1abc", "is not a valid Python identifier"),
        ("", "name is empty"),
        ("json", "shadows the standard-library module 'json'"),
        ("domain", "is a mir layer name"),
    ],
)
def test_bad_names_exit_2_with_the_reason_and_write_nothing(run_mir, shop, name, reason):
    before = read_tree(shop)
    result = run_mir("new", "capability", name, cwd=shop)
    assert result.returncode == 2
    assert result.stderr.startswith("error: capability name")
    assert reason in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert read_tree(shop) == before
    assert not (shop.parent / "x").exists()


def test_one_existing_file_means_exit_2_and_nothing_written(run_mir, shop):
    slice_ = shop / "capabilities" / "orders"
    (slice_ / "tests").mkdir(parents=True)
    (slice_ / "tests" / "test_orders.py").write_text("# mine\n")
    result = run_mir("new", "capability", "orders", cwd=shop)
    assert result.returncode == 2
    assert "refusing to overwrite: capabilities/orders/tests/test_orders.py exists" in result.stderr
    assert "nothing was written" in result.stderr
    assert read_tree(slice_) == {"tests/test_orders.py": "# mine\n"}


def test_running_it_twice_is_refused(run_mir, shop):
    assert run_mir("new", "capability", "orders", cwd=shop).returncode == 0
    before = read_tree(shop)
    result = run_mir("new", "capability", "orders", cwd=shop)
    assert result.returncode == 2
    assert "(+6 more)" in result.stderr
    assert read_tree(shop) == before


def test_dry_run_prints_the_tree_and_writes_nothing(run_mir, shop, snapshot):
    before = read_tree(shop)
    result = run_mir("new", "capability", "orders", "--dry-run", cwd=shop)
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot
    assert "would create" in result.stdout
    assert read_tree(shop) == before


def test_a_templates_option_overrides_file_by_file(run_mir, shop, tmp_path):
    custom = tmp_path / "house-style"
    (custom / "capability").mkdir(parents=True)
    (custom / "capability" / "domain.py.j2").write_text(
        '"""{{ capability }} domain, house style."""\n'
    )
    result = run_mir("new", "capability", "orders", "--templates", str(custom), cwd=shop)
    assert result.returncode == 0, result.stderr
    slice_ = shop / "capabilities" / "orders"
    assert (slice_ / "domain.py").read_text() == '"""orders domain, house style."""\n'
    assert "class InMemoryOrdersCaseStore" in (slice_ / "adapters.py").read_text()


def test_tool_mir_templates_setting_is_used(run_mir, shop):
    custom = shop / "house"
    (custom / "capability").mkdir(parents=True)
    (custom / "capability" / "application.py.j2").write_text('"""house {{ capability }}"""\n')
    with (shop / "pyproject.toml").open("a") as handle:
        handle.write('templates = "house"\n')
    result = run_mir("new", "capability", "orders", cwd=shop)
    assert result.returncode == 0, result.stderr
    assert (shop / "capabilities/orders/application.py").read_text() == '"""house orders"""\n'


def test_an_override_that_renders_broken_code_writes_nothing(run_mir, shop, tmp_path):
    (tmp_path / "bad" / "capability").mkdir(parents=True)
    (tmp_path / "bad" / "capability" / "adapters.py.j2").write_text("def broken(:\n")
    result = run_mir("new", "capability", "orders", "--templates", str(tmp_path / "bad"), cwd=shop)
    assert result.returncode == 2
    assert "rendered capabilities/orders/adapters.py:1: not valid Python" in result.stderr
    assert not (shop / "capabilities" / "orders").exists()


def test_a_missing_templates_folder_is_exit_2(run_mir, shop, tmp_path):
    result = run_mir("new", "capability", "orders", "--templates", str(tmp_path / "nope"), cwd=shop)
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_outside_a_project_it_says_run_mir_init(run_mir, tmp_path):
    result = run_mir("new", "capability", "orders", cwd=tmp_path)
    assert result.returncode == 2
    assert "`mir init` to make this folder one" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_help_reads_well(run_mir):
    result = run_mir("new", "--help")
    assert result.returncode == 0
    assert "capability" in result.stdout and "agent" in result.stdout
    result = run_mir("new", "capability", "--help")
    assert "--dry-run" in result.stdout and "--templates" in result.stdout
