"""Loading an agent: its contract, then the user's code the contract points at.

User code (decision models, executors, context loaders) is imported by FILE PATH
relative to the contract (``capabilities/<cap>/domain.py`` for ``domain:Class``), as a
proper package module with the project root on ``sys.path``, so the capability's own
relative and absolute imports work. Any failure names the file and the field.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mir.contracts import AgentContract, field_line
from mir.errors import ConfigError, UsageError
from mir.project import Project
from mir.reviewers import declared_roles
from mir.runtime.arguments import cwd_hint
from mir.runtime.decision_schema import pydantic_schema_check, schema_fields
from mir.runtime.fallback_checks import check_fallback_rules
from mir.runtime.integrity import IntegrityCheck, SchemaCheck
from mir.runtime.naming import agent_name, capability_dir, load_agent_contract
from mir.runtime.ports import AgentParts
from mir.runtime.review_checks import review_problems, roster_problems
from mir.runtime.schema_adapters import json_schema_check
from mir.runtime.templates import JinjaPromptRenderer


def resolve_contract(ref: str, project: Project | None) -> Path:
    """``capability.agent`` (looked up in the project) or a path to the contract file."""
    path = Path(ref)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if path.is_dir():
            raise UsageError(
                f"{ref} is a folder, not a contract file", hint=_reference_hint(ref, project)
            )
        if not path.is_file():
            raise UsageError(f"contract file not found: {ref}", hint=cwd_hint(path))
        return path.resolve()
    capability, _, agent = ref.partition(".")
    if not capability or not agent or "." in agent:
        raise UsageError(f"bad agent reference {ref!r}", hint=_reference_hint(ref, project))
    if project is None:
        raise UsageError(f"{ref!r} needs a mir project", hint="run inside one, or pass a path")
    found = project.capabilities_dir / capability / "agents" / f"{agent}.yaml"
    if not found.is_file():
        # the same agent in another capability is the likelier meaning than a new one
        # (`support_desk.triage` where the project has `refunds.triage`)
        elsewhere = _reference_hint(agent, project) if agent.isidentifier() else ""
        hint = (
            elsewhere
            if elsewhere.startswith("did you mean")
            else f"create it with `mir new agent {capability} {agent}`"
        )
        # the project-relative path and the project: run from the wrong folder (mir's own
        # checkout), an absolute path under mir/ read as mir's own files
        shown = _ref(found, project.root)
        raise UsageError(
            f"no agent {ref!r} in the project at {project.root}: {shown} does not exist",
            hint=hint,
        )
    return found.resolve()


def _reference_hint(ref: str, project: Project | None) -> str:
    """Name the agent a bare ``triage`` most likely means (``mir traces list --agent``
    takes the short name, so newcomers try it here too); running one stays explicit."""
    usage = "use 'capability.agent' (e.g. refunds.triage) or a path to the contract"
    if project is None or not ref.isidentifier():
        return usage
    found = sorted(project.capabilities_dir.glob(f"*/agents/{ref}.yaml"))
    names = [f"`{path.parent.parent.name}.{ref}`" for path in found]
    return f"did you mean {' or '.join(names)}?" if names else usage


def load_parts(contract_path: Path, root: Path) -> AgentParts:
    contract = load_agent_contract(contract_path)
    where = str(contract_path)
    cap = capability_dir(contract_path)
    importer = UserCode(cap, root)
    spec = contract.decision
    if spec.model is not None:
        model = importer.attribute(spec.model, where, "decision.model")
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigError(f"decision.model: {spec.model} is not a pydantic model", where=where)
        schema = model.model_json_schema()
        check = pydantic_schema_check(model)
    else:
        schema = dict(spec.json_schema or {})
        check = json_schema_check(schema, where)
    fields = schema_fields(schema)
    for role, name in (
        ("action_field", spec.action_field),
        ("confidence_field", spec.confidence_field),
    ):
        if fields and name not in fields:
            raise ConfigError(
                f"decision.{role}: {name!r} is not a field of the decision", where=where
            )
    input_check, input_schema = input_and_bindings(contract, importer, where, fields)
    integrity = IntegrityCheck(
        contract=contract,
        schema_check=check,
        schema_fields=fields,
        input_check=input_check,
    )
    review = review_problems(contract, schema, input_schema)
    review += roster_problems(contract, declared_roles(root))
    check_fallback_rules(
        contract, integrity, where, lambda loc: field_line(contract_path, loc), review
    )
    executors = {
        action: _callable(
            importer.attribute(a.executor, where, f"actions.{action}.executor"), a.executor, where
        )
        for action, a in contract.actions.items()
    }
    loader = None
    if contract.context_loader:
        loader = _callable(
            importer.attribute(contract.context_loader, where, "context_loader"),
            contract.context_loader,
            where,
        )
    return AgentParts(
        name=agent_name(contract, contract_path),
        contract=contract,
        contract_path=contract_path,
        contract_ref=_ref(contract_path, root),
        contract_hash=hashlib.sha256(contract_path.read_bytes()).hexdigest(),
        decision_schema=schema,
        input_schema=input_schema,
        integrity=integrity,
        prompt=JinjaPromptRenderer(contract_path.parent / contract.prompt, contract.version),
        executors=executors,
        context_loader=loader,
    )


def input_and_bindings(
    contract: AgentContract, importer: UserCode, where: str, decision_fields: frozenset[str]
) -> tuple[SchemaCheck | None, dict[str, Any] | None]:
    """The contract's input check and the input's JSON schema (None: the contract has no
    input schema), after checking at load what no input could fix: the input schema
    itself, and bindings that name a decision field or an input field that does not
    exist (a typo there would refuse every decision, or none)."""
    spec = contract.input
    input_fields: frozenset[str] = frozenset()
    check: SchemaCheck | None = None
    schema: dict[str, Any] | None = None
    if spec is not None and spec.model is not None:
        model = importer.attribute(spec.model, where, "input.model")
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigError(f"input.model: {spec.model} is not a pydantic model", where=where)
        schema = model.model_json_schema()
        input_fields = schema_fields(schema)
        check = pydantic_schema_check(model)
    elif spec is not None:
        schema = dict(spec.json_schema or {})
        input_fields = schema_fields(schema)
        check = json_schema_check(schema, where, field="input.json_schema")
    for action, action_spec in contract.actions.items():
        for name, binding in action_spec.bindings.items():
            field = f"actions.{action}.bindings.{name}"
            if decision_fields and name not in decision_fields:
                raise ConfigError(f"{field}: {name!r} is not a field of the decision", where=where)
            if isinstance(binding, str):
                references = [binding]
            else:
                references = [binding.minimum, binding.maximum]
            for reference in filter(None, references):
                root, first = reference[1:].split(".")[:2]
                if root == "input" and input_fields and first not in input_fields:
                    raise ConfigError(
                        f"{field}: {reference} names no field of the input schema",
                        where=where,
                        hint=f"input fields: {', '.join(sorted(input_fields))}",
                    )
    return check, schema


def _ref(path: Path, root: Path) -> str:
    resolved, base = path.resolve(), root.resolve()
    return resolved.relative_to(base).as_posix() if resolved.is_relative_to(base) else str(resolved)


def _did_you_mean(wrong: str, known: list[str], prefix: str, attr: str = "") -> str | None:
    """``did you mean `adapters:issue_refund`?`` for a misspelt executor, module or
    loader (the closest name the module or capability folder has), else None."""
    from mir.errors import did_you_mean

    close = did_you_mean(wrong, sorted(set(known)))
    if close is None:
        return None
    tail = f":{attr}" if attr else ""
    return f"did you mean `{prefix}{close}{tail}`?"


def _callable(value: Any, ref: str, where: str) -> Callable[..., Any]:
    if not callable(value):
        raise ConfigError(f"{ref} is not callable", where=where)
    return value


class UserCode:
    """Imports ``module:attr`` references inside one capability folder."""

    def __init__(self, capability: Path, root: Path):
        self.capability = capability.resolve()
        self.root = root.resolve()

    def attribute(self, ref: str, where: str, field: str) -> Any:
        module_name, _, attr = ref.partition(":")
        module = self.module(module_name, where, field, ref_attr=attr)
        try:
            return getattr(module, attr)
        except AttributeError as exc:
            names = [n for n in vars(module) if not n.startswith("_")]
            raise ConfigError(
                f"{field}: {module_name} has no {attr!r}",
                where=str(module.__file__),
                hint=_did_you_mean(attr, names, f"{module_name}:"),
            ) from exc

    def module(self, name: str, where: str, field: str, ref_attr: str = "") -> Any:
        relative = Path(*name.split("."))
        file = self.capability / relative.with_suffix(".py")
        if not file.is_file():
            file = self.capability / relative / "__init__.py"
        if not file.is_file():
            modules = [p.stem for p in self.capability.glob("*.py") if p.stem != "__init__"]
            modules += [p.parent.name for p in self.capability.glob("*/__init__.py")]
            close = _did_you_mean(name, modules, "", attr=ref_attr)
            create = f"create {self.capability / relative.with_suffix('.py')}"
            raise ConfigError(
                f"{field}: no module {name!r} in {self.capability}",
                where=where,
                hint=f"{close} If not, {create}" if close else create,
            )
        try:
            if self.capability.is_relative_to(self.root):
                package = ".".join(self.capability.relative_to(self.root).parts)
                self._use_root(package.split(".")[0] if package else name.split(".")[0])
                return importlib.import_module(f"{package}.{name}" if package else name)
            return _import_file(f"_mir_user.{self.capability.name}.{name}", file)
        except Exception as exc:  # the user's module failed to import: say which file
            raise ConfigError(
                f"{field}: importing {file.name} failed: {type(exc).__name__}: {exc}",
                where=str(file),
            ) from exc

    def _use_root(self, top: str) -> None:
        """Put the project root first on sys.path. A process that loads agents of two
        projects (tests, an eval over fixtures) must not get the first project's
        ``capabilities`` package for the second: a cached top package from another root
        is dropped, with its sub-modules, before importing."""
        root = str(self.root)
        if not sys.path or sys.path[0] != root:
            if root in sys.path:
                sys.path.remove(root)
            sys.path.insert(0, root)
        cached = sys.modules.get(top)
        locations = [str(p) for p in getattr(cached, "__path__", [])] if cached else []
        if cached is not None and str(self.root / top) not in locations:
            for loaded in [m for m in sys.modules if m == top or m.startswith(f"{top}.")]:
                del sys.modules[loaded]
            importlib.invalidate_caches()


def _import_file(module_name: str, file: Path) -> Any:
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
