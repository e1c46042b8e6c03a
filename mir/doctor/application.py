"""``diagnose``: every check of ``mir doctor``, machine first, then the project's.

Outside a project the machine checks still run and one row says there is no project. A
check that fails unexpectedly becomes a problem row naming it, so the others still run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from mir.doctor import project_checks, store_checks
from mir.doctor.domain import Check, Diagnosis, problem, warn
from mir.errors import MirUserError


class Machine(Protocol):
    """The machine's checks (``mir.doctor.machine``; a test may hand in its own)."""

    def python_check(self) -> Check: ...
    def llama_checks(self, n_threads: int | None, gpu_layers: int | None) -> list[Check]: ...
    def embedded_model_check(self) -> Check: ...
    def chromium_check(self) -> Check: ...


def diagnose(project: str | Path | None, machine: Machine) -> Diagnosis:
    """Run every check; ``project`` is a folder inside the project (default: the cwd)."""
    from mir.inference import ModelSettings
    from mir.project import find_project

    checks = [machine.python_check()]
    try:
        proj = find_project(Path(project) if project is not None else None)
    except MirUserError as exc:
        if project is not None:
            raise  # asked for a project by path: a usage error (exit 2)
        if exc.where is not None:  # a pyproject.toml with [tool.mir] that does not load
            fix = exc.hint or f"fix {exc.where}"
            proj, settings, missing = None, None, problem("project", str(exc), fix)
        else:
            fix = exc.hint or "run it inside a mir project, or pass --project"
            proj, settings, missing = None, None, warn("project", exc.message, fix)
    else:
        missing = None
        try:
            settings = proj.section("model", ModelSettings)
        except MirUserError as exc:
            settings = None
            checks.append(problem("[tool.mir.model]", str(exc), exc.hint or "fix pyproject.toml"))
    threads = settings.n_threads if settings else None
    gpu = settings.gpu_layers if settings else None
    checks += _guarded("llama-cpp-python", lambda: machine.llama_checks(threads, gpu))
    checks += _guarded("embedded model", lambda: [machine.embedded_model_check()])
    checks.append(machine.chromium_check())
    if proj is None:
        return Diagnosis(checks=[*checks, missing] if missing else checks)
    checks.append(Check(name="project", status="ok", found=str(proj.root)))
    store = _guarded("store", lambda: [store_checks.store_check(proj)])
    up = all(check.status != "problem" for check in store)
    for name, run in (
        ("models", lambda: project_checks.registry_checks(proj)),
        ("contracts", lambda: project_checks.contract_checks(proj, deep=up)),
        ("eval suites", lambda: project_checks.suite_checks(proj)),
        ("keys", lambda: project_checks.key_checks(proj)),
        ("store", lambda: store),
        ("locks", lambda: [store_checks.lock_check(proj)]),
    ):
        checks += _guarded(name, run)
    return Diagnosis(checks=checks)


def _guarded(name: str, run: Callable[[], list[Check]]) -> list[Check]:
    try:
        return run()
    except MirUserError as exc:
        return [problem(name, str(exc), exc.hint or "see the message")]
    except Exception as exc:  # one broken check must not hide the others
        return [
            problem(
                name,
                f"the check failed: {type(exc).__name__}: {exc}",
                "run it again with --debug, and report it",
            )
        ]
