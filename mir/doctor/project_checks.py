"""The project's checks: its model files and their digests, every contract, eval
suite and ``models.toml`` loading, and the keys its remote routes need (present or
missing: a value is never read into a row). Each check calls another capability's
public function and turns its answer, or its one-line error, into rows."""

from __future__ import annotations

import os
import re

from mir.doctor.domain import Check, ok, problem, warn
from mir.errors import MirUserError
from mir.project import Project

VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# litellm's provider prefixes and the variable each reads its key from.
KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}


def registry_checks(project: Project) -> list[Check]:
    """``models.toml`` loads, and every llama file it pins hashes to its sha256."""
    from mir.inference import DIGEST_CACHE, FILE_HASHER, ModelIntegrityError
    from mir.models import FILE_NAME, artifact_path, read_registry

    try:
        registry = read_registry(project.root)
    except MirUserError as exc:
        return [problem(FILE_NAME, str(exc), exc.hint or f"fix {FILE_NAME}")]
    if registry is None:
        return [ok(FILE_NAME, "none (routes name models directly)")]
    rows = [ok(FILE_NAME, f"valid, {len(registry.entries)} version(s)")]
    for entry in registry.entries:
        if entry.provider != "llama" or entry.stage == "retired":
            continue
        name = f"model {entry.ref}"
        if entry.sha256 is None:
            rows.append(
                warn(
                    name,
                    f"{entry.artifact}: no sha256 recorded",
                    f"re-register it: `mir models register {entry.name} ...`",
                )
            )
            continue
        try:
            path = artifact_path(entry, project.root)
            FILE_HASHER.verify(path, entry.sha256, project.root / DIGEST_CACHE)
        except (MirUserError, OSError) as exc:
            rows.append(
                problem(
                    name,
                    f"{entry.artifact}: {exc}",
                    "restore the file, or register it again (`mir models register`)",
                )
            )
        except ModelIntegrityError as exc:
            rows.append(
                problem(
                    name, str(exc), "restore the file the registry pinned, or register the new one"
                )
            )
        else:
            rows.append(ok(name, f"{entry.artifact}: sha256 {entry.sha256[:12]} matches"))
    return rows


def contract_checks(project: Project, *, deep: bool) -> list[Check]:
    """Every agent contract loads: ``mir agents list``'s reading when ``deep`` (it reads
    the agent states, so the store must be up), else the contract loader alone."""
    if not deep:
        return _loaded_contracts(project)
    from mir.runtime import list_agents

    agents = list_agents(project.root)
    broken = [a for a in agents if a.state == "broken"]
    rows = [
        problem(f"contract {a.name}", f"{a.contract}: {a.error}",
                f"fix {a.contract} (`mir agents list` shows it)")
        for a in broken
    ]  # fmt: skip
    if not broken:
        rows.append(ok("contracts", f"{len(agents)} agent contract(s) valid"))
    return rows


def _loaded_contracts(project: Project) -> list[Check]:
    from mir.contracts import load_contract

    paths = _contract_paths(project)
    rows = []
    for path in paths:
        try:
            load_contract(path)
        except MirUserError as exc:
            name = f"contract {path.parent.parent.name}.{path.stem}"
            rows.append(problem(name, str(exc), exc.hint or f"fix {path}"))
    if not rows:
        rows.append(ok("contracts", f"{len(paths)} agent contract(s) load (store down: "
                                    "review rules not checked)"))  # fmt: skip
    return rows


def _contract_paths(project: Project) -> list:
    return sorted(project.capabilities_dir.glob("*/agents/*.yaml"))


def suite_checks(project: Project) -> list[Check]:
    """Every eval suite (``capabilities/*/evals/*.yaml``) loads."""
    from mir.contracts import load_eval_suite

    paths = sorted(project.capabilities_dir.glob("*/evals/*.yaml"))
    rows = []
    for path in paths:
        try:
            load_eval_suite(path)
        except MirUserError as exc:
            rows.append(
                problem(
                    f"eval suite {path.parent.parent.name}/{path.name}",
                    str(exc),
                    exc.hint or f"fix {path}",
                )
            )
    if not rows:
        rows.append(ok("eval suites", f"{len(paths)} suite(s) valid"))
    return rows


def key_checks(project: Project) -> list[Check]:
    """Each key a litellm route or registry entry needs: present or missing, by name only."""
    needed = _needed_keys(project)
    rows = []
    for env, users in sorted(needed.items()):
        where = ", ".join(sorted(users))
        if not VARIABLE.fullmatch(env):  # maybe the key itself: never shown
            rows.append(
                problem(
                    f"api_key_env ({where})",
                    "not a variable name (it may be the key itself; its value is not shown)",
                    "set api_key_env to the NAME of the variable holding the key, e.g. "
                    "OPENAI_API_KEY, and export that variable",
                )
            )
            continue
        if os.environ.get(env, "").strip():
            rows.append(ok(f"key {env}", f"present (for {where})"))
        else:
            rows.append(
                problem(
                    f"key {env}",
                    f"missing (for {where})",
                    f"export {env}=... before running those agents",
                )
            )
    return rows or [ok("keys", "no remote route needs a key")]


def _needed_keys(project: Project) -> dict[str, set[str]]:
    from mir.contracts import load_contract

    needed: dict[str, set[str]] = {}
    for path in _contract_paths(project):
        try:
            contract = load_contract(path)
        except MirUserError:
            continue  # reported by contract_checks
        for route in contract.routes:
            if route.provider == "litellm" and (env := _key_env(route)):
                where = f"{path.parent.parent.name}.{contract.agent} route {route.name}"
                needed.setdefault(env, set()).add(where)
    for entry in _registry_entries(project):
        if entry.provider == "litellm" and entry.stage != "retired" and (env := _key_env(entry)):
            needed.setdefault(env, set()).add(f"model {entry.ref}")
    return needed


def _registry_entries(project: Project) -> tuple:
    from mir.models import read_registry

    try:
        registry = read_registry(project.root)
    except MirUserError:
        return ()  # reported by registry_checks
    return registry.entries if registry else ()


def _key_env(target: object) -> str | None:
    """The variable named (``api_key_env``), else the model id's provider's; none for a
    server of one's own (``api_base`` without a named key)."""
    named = getattr(target, "api_key_env", None)
    if named:
        return named
    if getattr(target, "api_base", None):
        return None
    model = getattr(target, "model", None) or getattr(target, "artifact", None) or ""
    prefix = (
        model.partition("/")[0] if "/" in model else "openai" if model.startswith("gpt") else ""
    )
    return KEY_ENVS.get(prefix)
