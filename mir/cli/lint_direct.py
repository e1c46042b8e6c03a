"""``mir lint boundaries`` without typer, and what the typer command shares with it.

A warm run of an unchanged project needs ~30 ms of work, but importing typer and letting
it build pydantic type adapters for the options costs ~150 ms more (and a cold run pays
it too). So the console script first offers the arguments to ``direct_command``: when
they are a plain ``lint boundaries`` invocation that it fully understands, it replays
the cached findings if they are still valid (``mir.boundaries.replay_report``, with the
import-linter verdicts of ``--config`` or the project's own config replayed by
``mir.importlinter.cached_contracts``), else runs the linter, and prints exactly what
the typer command prints (errors included); anything else (``--help``, an unknown or
invalid option, ``--watch``, ``--update-baseline``) returns None and the typer command
runs as usual.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mir.boundaries import Finding, LintOptions, LintReport

IMPORTLINTER_FILES = (".importlinter", "setup.cfg", "pyproject.toml")
FORMATS = ("text", "json", "sarif", "github", "junit")  # mir.boundaries.FORMATS (test-held)
_VALUED = {
    "--format": "fmt",
    "-f": "fmt",
    "--cache-dir": "cache_dir",
    "--baseline": "baseline",
    "--config": "config",
}


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


def parse_arguments(argv: list[str]) -> dict[str, str] | None:
    """``lint boundaries [ROOT] [--format F | --json] [--cache-dir D] [--baseline B] [--config C]
    [--no-cache]``
    (each at most once, ``--opt=value`` too) as a dict; None for anything else."""
    if argv[:2] != ["lint", "boundaries"]:
        return None
    found: dict[str, str] = {}
    rest = argv[2:]
    i = 0
    while i < len(rest):
        token = rest[i]
        name, eq, value = token.partition("=")
        if token == "--no-cache":
            key, value = "no_cache", "1"
        elif token == "--json":  # the same as --format json (both at once: typer says)
            key, value = "fmt", "json"
        elif name in _VALUED and name.startswith("--") and eq:
            key = _VALUED[name]
        elif token in _VALUED and i + 1 < len(rest):
            key, value = _VALUED[token], rest[i + 1]
            i += 1
        elif not token.startswith("-") and "root" not in found:
            key, value = "root", token
        else:
            return None
        if key in found or not value:
            return None
        found[key] = value
        i += 1
    return found


def _project_root() -> Path | None:
    """``mir.project.find_project`` without validating settings: the nearest folder
    upward whose pyproject.toml has a ``[tool.mir]`` table, else the current folder;
    None when a pyproject.toml on the way cannot be read (the full run reports it)."""
    import tomllib

    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            tool = tomllib.loads(candidate.read_text(encoding="utf-8")).get("tool", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        if not isinstance(tool, dict) or not isinstance(tool.get("mir", {}), dict):
            return None
        if "mir" in tool:
            return folder
    return here


def direct_command(argv: list[str]) -> int | None:
    """Run ``mir lint boundaries`` without typer; None: run the typer command instead."""
    found = parse_arguments(argv)
    if found is None or found.get("fmt", "text") not in FORMATS:
        return None
    root = Path(found["root"]) if "root" in found else None
    cache_dir = Path(found["cache_dir"]) if "cache_dir" in found else None
    baseline = Path(found["baseline"]) if "baseline" in found else None
    config = Path(found["config"]) if "config" in found else None
    if (
        (root is not None and root.is_file())
        or (cache_dir is not None and cache_dir.is_file())
        or (baseline is not None and baseline.is_dir())
        or (config is not None and config.is_dir())
    ):
        return None  # typer's own "is a file" / "is a directory" errors
    from mir.errors import MirUserError

    use_cache = "no_cache" not in found
    try:
        report = _replay(root, cache_dir, baseline, config) if use_cache else None
        if report is None:
            from mir.boundaries import LintOptions

            options = LintOptions(
                use_cache=use_cache,
                cache_dir=cache_dir.resolve() if cache_dir is not None else None,
                baseline=baseline.resolve() if baseline is not None else None,
            )
            report = lint_project(root, options, config)
    except MirUserError as exc:  # exactly what mir.cli.app.main prints
        from rich.markup import escape

        from mir.cli.output import error_console

        error_console().print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        from mir.cli.output import error_console

        error_console().print("interrupted", markup=False)  # as mir.cli.app.main says it
        return 130
    fmt = found.get("fmt", "text")
    if fmt == "text":
        render_text(report)
    else:
        from mir.boundaries import render

        rendered = render(report, fmt)
        if rendered:  # github with no findings: no output, not an empty line
            sys.stdout.write(rendered + "\n")
        sys.stdout.flush()
    return report.exit_code


def _replay(
    root: Path | None, cache_dir: Path | None, baseline: Path | None, config: Path | None
) -> LintReport | None:
    """The cached report when nothing changed: the import-linter verdicts (replayed by
    their own cache, or checked now) merged into the replayed boundary findings. None
    when anything is in doubt: the full run decides, and reports errors its way."""
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
        contracts = contract_findings(root, config, folder)
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


def contract_findings(
    root: Path, config: Path | None, cache_dir: Path | None = None
) -> list[Finding] | None:
    """Findings of import-linter contracts (``--config`` or found in ``root``), or None
    when there is no import-linter configuration; through the cache in ``cache_dir``
    (None: no cache). Composed here, not in boundaries:
    ``importlinter`` depends on ``boundaries``, so the reverse import would be a cycle."""
    if config is None and not might_have_contracts(root):
        return None
    try:
        from mir.importlinter import cached_contracts
    except ImportError as exc:  # pragma: no cover - a build without the compatibility layer
        if config is not None:
            from mir.errors import UsageError

            raise UsageError("import-linter support is not installed", where=str(config)) from exc
        return None
    return cached_contracts(root, config, cache_dir, warn=_warn)


def _warn(message: str) -> None:
    """A warning on stderr (stdout may be JSON, SARIF or JUnit), never a failure."""
    from rich.markup import escape

    from mir.cli.output import error_console

    error_console().print(f"[yellow]warning:[/] {escape(message)}", highlight=False)


def default_root() -> Path:
    from mir.errors import ConfigError
    from mir.project import find_project

    try:
        return find_project().root
    except ConfigError:  # no [tool.mir] anywhere up: lint the current folder with defaults
        return Path.cwd()


def lint_project(root: Path | None, options: LintOptions, config: Path | None) -> LintReport:
    """One run: import-linter contracts (if any) merged into the boundary findings, then
    the baseline applied to both. ``root`` None: the project around the current folder."""
    from mir.boundaries import lint_boundaries

    searched = root is None
    root = root if root is not None else default_root()
    contracts = contract_findings(root, config, cache_folder_for(root, options))
    if contracts is None:
        _require_project(root, searched)
    return lint_boundaries(
        root, options, extra_findings=contracts or (), require_capabilities=contracts is None
    )


def _require_project(root: Path, searched: bool) -> None:
    """Outside any mir project (no ``[tool.mir]``, no capabilities folder, no contracts)
    say what every other command says, not that a default folder is missing."""
    import tomllib

    from mir.boundaries import load_lint_project
    from mir.errors import ConfigError

    project, _ = load_lint_project(root)
    if (project.root / project.settings.capabilities).is_dir():
        return
    try:
        tool = tomllib.loads(project.pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        tool = {}
    if isinstance(tool, dict) and "mir" in tool:
        return  # a project whose capabilities folder is missing: lint says which
    where = f"{project.root} or any parent" if searched else str(project.root)
    raise ConfigError(
        f"no mir project found in {where} (no pyproject.toml with [tool.mir])",
        hint="run `mir init` there first, or pass the project's folder as ROOT",
    )


def cache_folder_for(root: Path, options: LintOptions) -> Path | None:
    """Where the boundaries cache lives (the import-linter cache sits next to it)."""
    if not options.use_cache:
        return None
    if options.cache_dir is not None:
        return options.cache_dir
    from mir.boundaries import load_lint_project

    project, settings = load_lint_project(root)
    return project.root / settings.cache_dir


def render_text(report: LintReport) -> None:
    from rich.markup import escape

    from mir.cli.output import console

    out = console()
    for finding in report.findings:
        out.print(
            f"[bold]{escape(finding.path)}[/]:{finding.line}:{finding.column + 1}: "
            f"[bold red]{finding.code}[/] {escape(finding.message)}",
            markup=True,
            highlight=False,
            emoji=False,
        )
    for entry in report.stale:
        out.print(
            f"[yellow]stale baseline entry[/] {entry.code} {escape(entry.path)} "
            f"({escape(entry.importer or '-')} -> {escape(entry.imported or '-')}): fixed, "
            "run with --update-baseline to drop it",
            markup=True,
            highlight=False,
            emoji=False,
        )
    for item in report.unchecked:
        entry = item.entry
        out.print(
            f"baseline entry {entry.code} {escape(entry.path)} "
            f"({escape(entry.importer or '-')} -> {escape(entry.imported or '-')}): not "
            f"checked, {escape(item.why)}; kept",
            markup=True,
            highlight=False,
            emoji=False,
        )
    stats = report.stats
    scope = f"{_count(stats.files, 'file')}, {_count(stats.capabilities, 'capability')}"
    extra = f", {len(report.baselined)} baselined" if report.baselined else ""
    if report.baseline_written:
        out.print(f"Baseline written: {report.baseline_path}")
    if report.findings:
        found = _count(len(report.findings), "finding")
        out.print(f"[bold red]Found {found}[/] ({scope}{extra}).", markup=True)
    else:
        out.print(f"[bold green]All checks passed[/] ({scope}{extra}).", markup=True)


def _count(number: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{number} {noun if number == 1 else plural}"
