"""Scaffolding use cases: plan init / capability / agent, then apply a plan all-or-nothing.

Ports are the four things planning needs from the outside world: templates to render,
the files on disk, a TOML editor that keeps the user's formatting, and a check that a
rendered file is valid (so a broken override template is refused before anything is
written). Each has one real adapter in ``adapters`` and a fake in the unit tests.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from mir.contracts import json_schemas
from mir.errors import ConfigError, UsageError
from mir.scaffold.domain import (
    ChangeKind,
    FileChange,
    Plan,
    import_order,
    normalize_name,
    pascal_case,
)

GITIGNORE_ENTRY = ".mir/"
# Always offered to an agent: the deterministic fallback hands the case to a human.
ESCALATE = "escalate"
DEFAULT_ACTIONS = ("resolve", ESCALATE)
# Where `mir new agent` puts the editor schemas of the files it writes (at the root).
SCHEMAS_DIR = "schemas"
CONTRACT_SCHEMA = "agent-contract.schema.json"
SUITE_SCHEMA = "eval-suite.schema.json"

# Names the appended decision schema / executors use; the starter files import them.
DOMAIN_NEEDS = {"BaseModel": "pydantic", "Field": "pydantic", "Literal": "typing"}
ADAPTERS_NEEDS = {"Mapping": "collections.abc", "Any": "typing"}


class Templates(Protocol):
    def render(self, name: str, variables: Mapping[str, Any]) -> str: ...


class Workspace(Protocol):
    def read_text(self, path: Path) -> str | None:
        """The file's text, or None when there is no such file."""
        ...

    def create(self, path: Path, text: str) -> None:
        """Write a new file (and its folders); fail if it exists."""
        ...

    def replace(self, path: Path, text: str) -> None: ...

    def remove(self, path: Path) -> None: ...


class PyprojectEditor(Protocol):
    def tool_mir(self, text: str, where: str) -> dict[str, Any] | None:
        """The ``[tool.mir]`` table, None if absent; ConfigError naming ``where`` if malformed."""
        ...

    def add_tool_mir(self, text: str, settings: Mapping[str, Any], where: str) -> str: ...


class GeneratedCheck(Protocol):
    def check(self, path: PurePosixPath, text: str) -> None:
        """Raise ConfigError when a rendered file is not valid for its kind."""
        ...


# --------------------------------------------------------------------------- init
def plan_init(
    root: Path,
    *,
    templates: Templates,
    workspace: Workspace,
    editor: PyprojectEditor,
    check: GeneratedCheck,
) -> Plan:
    """Root intent docs, ``[tool.mir]``, the capabilities package and ``.gitignore``.

    Anything that exists already is kept as it is (re-running is safe), except that an
    existing pyproject.toml without ``[tool.mir]`` gets the table added, and an existing
    .gitignore without ``.mir/`` gets the line appended.
    """
    project = _project_name(root)
    variables = {"project": project, "capabilities": "capabilities"}
    changes: list[FileChange] = []

    pyproject = root / "pyproject.toml"
    current = workspace.read_text(pyproject)
    if current is None:
        text = templates.render("project/pyproject.toml.j2", variables)
        changes.append(_new("pyproject.toml", text))
    else:
        table = editor.tool_mir(current, str(pyproject))
        if table is None:
            settings = {"capabilities": "capabilities"}
            text = editor.add_tool_mir(current, settings, str(pyproject))
            changes.append(
                FileChange(
                    PurePosixPath("pyproject.toml"),
                    ChangeKind.UPDATE,
                    text,
                    current,
                    note="added [tool.mir]",
                )
            )
        else:
            variables["capabilities"] = str(table.get("capabilities", "capabilities"))
            changes.append(_keep("pyproject.toml", "already has [tool.mir]"))

    for doc in ("CLAUDE.md", "AGENTS.md"):
        if workspace.read_text(root / doc) is None:
            changes.append(_new(doc, templates.render(f"project/{doc}.j2", variables)))
        else:
            changes.append(_keep(doc, "exists"))

    package = PurePosixPath(variables["capabilities"], "__init__.py")
    if workspace.read_text(root / package) is None:
        text = templates.render("project/capabilities_init.py.j2", variables)
        changes.append(_new(str(package), text))
    else:
        changes.append(_keep(str(package), "exists"))

    changes.append(_gitignore(workspace.read_text(root / ".gitignore")))
    plan = Plan(title=f"mir project {project}", root=root, changes=tuple(changes))
    _check_all(plan, check)
    return plan


def _gitignore(current: str | None) -> FileChange:
    path = PurePosixPath(".gitignore")
    if current is None:
        return FileChange(path, ChangeKind.CREATE, f"{GITIGNORE_ENTRY}\n", note="ignores .mir/")
    entries = {line.strip().strip("/") for line in current.splitlines()}
    if ".mir" in entries:
        return _keep(str(path), "already ignores .mir/")
    separator = "" if not current or current.endswith("\n") else "\n"
    text = f"{current}{separator}{GITIGNORE_ENTRY}\n"
    return FileChange(path, ChangeKind.APPEND, text, current, note="added .mir/")


def _project_name(root: Path) -> str:
    """A valid distribution name from the folder name (PEP 508: letters, digits, -_.)."""
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in root.resolve().name.lower())
    return cleaned.strip("-") or "app"


# --------------------------------------------------------------------------- capability
def plan_capability(
    root: Path,
    capabilities_dir: str,
    raw_name: str,
    *,
    templates: Templates,
    check: GeneratedCheck,
) -> Plan:
    """A vertical slice: intent doc, public interface, three layers and a passing test."""
    name = normalize_name(raw_name, kind="capability")
    base = PurePosixPath(capabilities_dir, name)
    pascal = pascal_case(name)
    public = [f"{pascal}Case", f"{pascal}CaseStore", f"InMemory{pascal}CaseStore"]
    variables = {
        "capability": name,
        "pascal": pascal,
        "path": str(base),
        "package": ".".join(base.parts),
        "public": import_order([*public, "case_from_record", "close_case"]),
    }
    files = {
        "CLAUDE.md": "capability/CLAUDE.md.j2",
        "__init__.py": "capability/__init__.py.j2",
        "domain.py": "capability/domain.py.j2",
        "application.py": "capability/application.py.j2",
        "adapters.py": "capability/adapters.py.j2",
        "tests/__init__.py": "capability/tests/__init__.py.j2",
        f"tests/test_{name}.py": "capability/tests/test_capability.py.j2",
    }
    changes = tuple(
        _new(str(base / rel), templates.render(template, variables))
        for rel, template in files.items()
    )
    plan = Plan(title=f"capability {name}", root=root, changes=changes)
    _check_all(plan, check)
    return plan


# --------------------------------------------------------------------------- agent
def plan_agent(
    root: Path,
    capabilities_dir: str,
    raw_capability: str,
    raw_name: str,
    *,
    actions: Sequence[str] = DEFAULT_ACTIONS,
    templates: Templates,
    workspace: Workspace,
    check: GeneratedCheck,
) -> Plan:
    """Contract, prompt, eval suite and test as new files; schema and executors appended."""
    capability = normalize_name(raw_capability, kind="capability")
    agent = normalize_name(raw_name, kind="agent")
    action_names = _action_names(actions)
    base = PurePosixPath(capabilities_dir, capability)
    domain_path, adapters_path = base / "domain.py", base / "adapters.py"
    domain = workspace.read_text(root / domain_path)
    adapters = workspace.read_text(root / adapters_path)
    if domain is None or adapters is None:
        missing = domain_path if domain is None else adapters_path
        raise UsageError(
            f"capability {capability!r} not found (no {missing})",
            hint=f"run `mir new capability {capability}` first",
        )
    decision_class = f"{pascal_case(agent)}Decision"
    executors = {action: f"{agent}_{action}" for action in action_names}
    variables = {
        "capability": capability,
        "agent": agent,
        "decision_class": decision_class,
        "actions": action_names,
        "executors": executors,
        "executor_names": import_order(executors.values()),
        "escalate": ESCALATE,
        "package": ".".join(base.parts),
        # agents/ and evals/ files -> the project root, for the editor schema modeline
        "root_from_agent": "../" * (len(base.parts) + 1),
    }
    _require_free(domain, str(domain_path), [decision_class], DOMAIN_NEEDS)
    _require_free(adapters, str(adapters_path), list(executors.values()), ADAPTERS_NEEDS)
    changes = [
        _new(
            str(base / "agents" / f"{agent}.yaml"),
            templates.render("agent/contract.yaml.j2", variables),
        ),
        _new(
            str(base / "agents" / f"{agent}.j2"), templates.render("agent/prompt.j2.j2", variables)
        ),
        _new(
            str(base / "evals" / f"{agent}.yaml"), templates.render("agent/eval.yaml.j2", variables)
        ),
        _new(
            str(base / "tests" / f"test_{agent}_agent.py"),
            templates.render("agent/test_agent.py.j2", variables),
        ),
        _append(
            domain_path, domain, templates.render("agent/decision.py.j2", variables), decision_class
        ),
        _append(
            adapters_path,
            adapters,
            templates.render("agent/executors.py.j2", variables),
            ", ".join(executors.values()),
        ),
    ]
    changes.extend(_editor_schemas(root, workspace))
    plan = Plan(title=f"agent {agent} in {capability}", root=root, changes=tuple(changes))
    _check_all(plan, check)
    return plan


def _editor_schemas(root: Path, workspace: Workspace) -> list[FileChange]:
    """The JSON schemas the contract's and suite's ``yaml-language-server`` modelines
    point at, in ``schemas/`` (as ``mir schema --write schemas`` writes them); kept
    as they are when present."""
    bodies = json_schemas()
    changes = []
    for name in (CONTRACT_SCHEMA, SUITE_SCHEMA):
        path = f"{SCHEMAS_DIR}/{name}"
        if workspace.read_text(root / path) is None:
            text = json.dumps(bodies[name], indent=2, sort_keys=True) + "\n"
            changes.append(_new(path, text))
        else:
            changes.append(_keep(path, "exists (`mir schema --write schemas` refreshes it)"))
    return changes


def _action_names(actions: Sequence[str]) -> tuple[str, ...]:
    names = [normalize_name(a, kind="action", module=False) for a in actions]
    if ESCALATE not in names:
        names.append(ESCALATE)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"action {duplicates[0]!r} is given twice")
    return tuple(names)


def _require_free(
    source: str, where: str, new_names: Sequence[str], needs: Mapping[str, str]
) -> None:
    """Appending must not redefine a name, and must only use names the file imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ConfigError(f"cannot parse: {exc.msg}", where=f"{where}:{exc.lineno}") from exc
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(t.id for t in targets if isinstance(t, ast.Name))
    taken = [n for n in new_names if n in bound]
    if taken:
        raise UsageError(
            f"{taken[0]!r} is already defined",
            where=where,
            hint="pick another agent name; nothing was written",
        )
    missing = [n for n in needs if n not in bound]
    if missing:
        name = missing[0]
        raise UsageError(
            f"the appended code needs {name!r}, which the file does not import",
            where=where,
            hint=f"add `from {needs[name]} import {name}` at the top, then re-run",
        )


# --------------------------------------------------------------------------- apply
def conflicts(plan: Plan, workspace: Workspace) -> list[str]:
    """Why the plan cannot be applied as planned (empty when it can)."""
    problems = []
    for change in plan.writes:
        current = workspace.read_text(plan.target(change))
        if change.kind is ChangeKind.CREATE and current is not None:
            problems.append(f"{change.path} exists")
        elif change.kind is not ChangeKind.CREATE and current != change.before:
            problems.append(f"{change.path} changed since it was read")
    return problems


def ensure_applicable(plan: Plan, workspace: Workspace) -> None:
    problems = conflicts(plan, workspace)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(
            f"refusing to overwrite: {problems[0]}{more}",
            where=str(plan.root),
            hint="scaffolding never overwrites a file; nothing was written",
        )


def apply(plan: Plan, workspace: Workspace) -> None:
    """Write every change of ``plan`` or none: check all targets first, undo on failure."""
    ensure_applicable(plan, workspace)
    done: list[FileChange] = []
    try:
        for change in plan.writes:
            target = plan.target(change)
            if change.kind is ChangeKind.CREATE:
                workspace.create(target, change.text)
            else:
                workspace.replace(target, change.text)
            done.append(change)
    except OSError:
        for change in reversed(done):
            target = plan.target(change)
            if change.kind is ChangeKind.CREATE:
                workspace.remove(target)
            elif change.before is not None:
                workspace.replace(target, change.before)
        raise


def _check_all(plan: Plan, check: GeneratedCheck) -> None:
    for change in plan.writes:
        check.check(change.path, change.text)


def _new(path: str, text: str) -> FileChange:
    return FileChange(PurePosixPath(path), ChangeKind.CREATE, text)


def _keep(path: str, note: str) -> FileChange:
    return FileChange(PurePosixPath(path), ChangeKind.KEEP, note=note)


def _append(path: PurePosixPath, before: str, chunk: str, note: str) -> FileChange:
    # Two blank lines between top-level definitions, one newline at the end (ruff format).
    text = f"{before.rstrip()}\n\n\n{chunk.strip()}\n"
    return FileChange(path, ChangeKind.APPEND, text, before, note=f"added {note}")
