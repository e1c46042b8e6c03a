"""``mir lint boundaries`` as one use case (and ``--watch`` as another): mir's boundary
findings and the import-linter contract verdicts of the same project merged into one
report, the baseline applied to both.

Composed here, not in ``boundaries``: this capability depends on ``boundaries``, so the
reverse import would be a cycle. Every import is inside a function: the console script
calls ``replay_project`` before typer is imported, and a project without contracts
never pays for the compatibility layer (``might_have_contracts`` is a substring check).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mir.boundaries import Finding, LintOptions, LintReport

IMPORTLINTER_FILES = (".importlinter", "setup.cfg", "pyproject.toml")
Warn = Callable[[str], None]


def might_have_contracts(root: Path) -> bool:
    """Cheap pre-check (a substring, no parsing) so a project without import-linter
    contracts never pays for importing the compatibility layer."""
    for name in IMPORTLINTER_FILES:
        try:
            if "importlinter" in (root / name).read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def lint_project(
    root: Path | None, options: LintOptions, config: Path | None, warn: Warn
) -> LintReport:
    """One run: import-linter contracts (if any) merged into the boundary findings, then
    the baseline applied to both. ``root`` None: the project around the current folder."""
    from mir.boundaries import lint_boundaries

    searched = root is None
    root = root if root is not None else default_root()
    contracts = contract_findings(root, config, cache_folder_for(root, options), warn)
    if contracts is None:
        _require_project(root, searched)
    return lint_boundaries(
        root, options, extra_findings=contracts or (), require_capabilities=contracts is None
    )


def lint_or_replay(
    root: Path | None,
    cache_dir: Path | None,
    baseline: Path | None,
    config: Path | None,
    warn: Warn,
    *,
    use_cache: bool = True,
) -> LintReport:
    """A plain ``mir lint boundaries``: the cached report when it is still valid
    (``replay_project``), else a full run (``lint_project``) with these options."""
    report = replay_project(root, cache_dir, baseline, config, warn) if use_cache else None
    if report is not None:
        return report
    from mir.boundaries import LintOptions

    options = LintOptions(
        use_cache=use_cache,
        cache_dir=cache_dir.resolve() if cache_dir is not None else None,
        baseline=baseline.resolve() if baseline is not None else None,
    )
    return lint_project(root, options, config, warn)


def replay_project(
    root: Path | None,
    cache_dir: Path | None,
    baseline: Path | None,
    config: Path | None,
    warn: Warn,
) -> LintReport | None:
    """The cached report when nothing changed: the import-linter verdicts (replayed by
    their own cache, or checked now) merged into the replayed boundary findings. None
    when anything is in doubt: the full run (``lint_project``) decides, and reports
    errors its way."""
    root = root if root is not None else _project_root()
    if root is None or not root.is_dir():
        return None
    from mir.boundaries import cache_folder, replay_report

    folder = cache_dir.resolve() if cache_dir is not None else cache_folder(root)
    if folder is None:
        return None
    if config is None and not might_have_contracts(root):
        contracts = None
    else:
        # checked once: the full run would give the same verdicts, and warn again;
        # errors are raised here, as the full run raises them
        contracts = contract_findings(root, config, folder, warn)
    report = replay_report(
        root,
        folder,
        baseline.resolve() if baseline is not None else None,
        contracts or (),
        require_capabilities=contracts is None,
    )
    if report is not None or contracts is None:
        return report
    from mir.boundaries import LintOptions, lint_boundaries

    options = LintOptions(
        cache_dir=folder, baseline=baseline.resolve() if baseline is not None else None
    )
    return lint_boundaries(root, options, contracts, require_capabilities=False)


def watch_project(
    root: Path,
    options: LintOptions,
    config: Path | None,
    warn: Warn,
    on_report: Callable[[LintReport], None],
    on_error: Callable[[Exception], None],
) -> None:
    """``mir lint boundaries --watch``: lint now and after every burst of saves
    (``mir.boundaries.watch_boundaries``), the contracts checked again with each run and
    ``config`` watched too, until Ctrl-C. A broken config is reported by the first run
    (``on_error``) and the watch goes on."""
    from mir.boundaries import watch_boundaries
    from mir.errors import MirUserError

    try:
        folder = cache_folder_for(root, options)
    except MirUserError:
        folder = None
    watch_boundaries(
        root,
        options,
        on_report,
        on_error,
        extra_findings=lambda: contract_findings(root, config, folder, warn),
        extra_files=[config] if config is not None else [],
    )


def watch_line(report: LintReport, root: Path) -> str:
    """The line under each ``--watch`` run: when, how many files were parsed and cached."""
    import time

    stats = report.stats
    return (
        f"{time.strftime('%H:%M:%S')} re-parsed {stats.parsed}, cached "
        f"{stats.cached} - watching {root} (Ctrl-C to stop)"
    )


def contract_findings(
    root: Path, config: Path | None, cache_dir: Path | None, warn: Warn
) -> list[Finding] | None:
    """Findings of import-linter contracts (``--config`` or found in ``root``), or None
    when there is no import-linter configuration; through the cache in ``cache_dir``
    (None: no cache). Contract warnings go to ``warn``, never a failure."""
    if config is None and not might_have_contracts(root):
        return None
    from mir.importlinter.entrypoints import cached_contracts

    return cached_contracts(root, config, cache_dir, warn=warn)


def default_root() -> Path:
    """The project around the current folder, else the current folder (defaults)."""
    from mir.errors import ConfigError
    from mir.project import find_project

    try:
        return find_project().root
    except ConfigError:  # no [tool.mir] anywhere up: lint the current folder with defaults
        return Path.cwd()


def cache_folder_for(root: Path, options: LintOptions) -> Path | None:
    """Where the boundaries cache lives (the import-linter cache sits next to it)."""
    if not options.use_cache:
        return None
    if options.cache_dir is not None:
        return options.cache_dir
    from mir.boundaries import load_lint_project

    project, settings = load_lint_project(root)
    return project.root / settings.cache_dir


def _project_root() -> Path | None:
    """``mir.project.find_project`` without validating settings: the nearest folder
    upward whose pyproject.toml has a ``[tool.mir]`` table, else the current folder;
    None when a pyproject.toml on the way cannot be read (the full run reports it)."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        tool = _tool_table(candidate)
        if tool is None or not isinstance(tool.get("mir", {}), dict):
            return None
        if "mir" in tool:
            return folder
    return here


def _tool_table(pyproject: Path) -> dict | None:
    """The ``[tool]`` table of a pyproject.toml; None when it cannot be read."""
    import tomllib

    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return tool if isinstance(tool, dict) else None


def _require_project(root: Path, searched: bool) -> None:
    """Outside any mir project (no ``[tool.mir]``, no capabilities folder, no contracts)
    say what every other command says, not that a default folder is missing."""
    from mir.boundaries import load_lint_project
    from mir.errors import ConfigError

    project, _ = load_lint_project(root)
    if (project.root / project.settings.capabilities).is_dir():
        return
    if "mir" in (_tool_table(project.pyproject) or {}):
        return  # a project whose capabilities folder is missing: lint says which
    where = f"{project.root} or any parent" if searched else str(project.root)
    raise ConfigError(
        f"no mir project found in {where} (no pyproject.toml with [tool.mir])",
        hint="run `mir init` there first, or pass the project's folder as ROOT",
    )
