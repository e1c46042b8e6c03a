"""The README's shell examples run as written, so an example that does not work fails CI.

README.md is parsed at test time (``readme_blocks.py``: sections, placeholder rules,
documented exit codes). Every line of every fenced shell block (and every ``run:`` step
of the CI workflow the README shows) is either run, through
the real installed ``mir`` in ``bash``, in the sandbox of its section, or listed in
``NOT_RUN`` with the reason. A line is matched to its handler by (section, the longest
command prefix), never by line number, so the rest of the README can change freely.

Lines of a scenario run in order, each in its own ``bash -c`` with ``set -e -o pipefail``
in the folder the previous line left (``cd`` carries over), and the first line whose exit
code is not the one the README documents (0 unless it says otherwise) stops the test,
naming itself. A flow id in the README (``3f9c2a1b``, ``3f9c``: 4-32 hex digits) is
replaced by a real flow id's prefix of the same length; each ``approve`` / ``reject``
line gets a pending flow of its own, made right before it with the scripted provider.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.functional.readme_blocks import (
    Block,
    Line,
    documented_exit,
    expand_synopsis,
    match_key,
    read_readme,
    shell_blocks,
)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FIXTURES = REPO / "tests" / "fixtures"
LINE_TIMEOUT_S = 600  # the embedded model on a busy 2-core machine: 0.5-20 s a call

# Lines of the README that are not run, and why. Keyed like HANDLERS. A line that fails
# because of a bug in mir (not in the README) goes here as "known failure: <the bug>"
# until it is fixed; a README line that is wrong is fixed in the README instead.
NOT_RUN: dict[tuple[str, str], str] = {
    ("doctor", "mir doctor"): "its verdict depends on the machine (chromium on PATH):"
    " tests/functional/test_doctor_cli.py runs both lines on a copy of the example, with"
    " chromium present and hidden",
    ("quick-start", "make test"): "CI runs `make test` itself (and it runs this test)",
    ("lint", "pip install"): "the CI workflow's install step: this venv already has mir",
    ("evals", "mir eval --provider llama"): "22 cases on the embedded model (~4 min on 2"
    " cores); the replayed lines above run the same suite, and the integration tests run"
    " the model",
    ("providers", "python bench/serving.py"): "builds llama-server on its first run (~14"
    " min) and runs callers in-process and against two model servers (minutes);"
    " tests/integration/test_models_serving.py runs the served registry entry",
    ("reviewers", "mir reviewers"): "keygen writes to the home folder and add needs the key"
    " it printed: tests/functional/test_reviewers_cli.py runs each command as shown",
    ("inbox", "mir reviewers password"): "asks for the password on a terminal:"
    " tests/support/inbox.py sets logins with mir.reviewers.set_password",
    ("inbox", "mir review serve"): "serves until stopped: tests/integration/"
    "test_inbox_browser.py starts it, logs in and reviews in Chromium",
    ("review-queue", "mir review"): "needs flows waiting for review and reviewed ones:"
    " tests/functional/test_review_queue_cli.py and test_review_export_cli.py run each"
    " command as shown",
    ("reviewers", "mir"): "needs declared reviewers with keys and an approvals rule:"
    " tests/functional/test_review_identity.py runs each of these",
    ("fleet", "export"): "the test sets $MIR_STORE_URL to the embedded Postgres it"
    " starts, and $MIR_STORE_DATA_PATH to a lake folder of its own"
    " (test_fleet_readme_block_runs_on_a_real_postgres)",
    ("evals", "mir eval calibrate"): "the embedded judge on 32 labels (~15 min on 2 cores);"
    " tests/unit/evals/test_judging.py and the calibrate tests run it on scripted judges",
}


@dataclass
class Sandbox:
    """A scenario's state: the folder the next line runs in, and the project root."""

    root: Path
    cwd: Path
    scratch: Path  # the harness's own files, outside the project the lines see
    env: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Sandbox, Line, str], object]


def shell_env() -> dict[str, str]:
    # PYTHONPATH is kept: it is how a worktree's mir runs through the shared venv.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100", NO_COLOR="1")
    return env


def shell(sandbox: Sandbox, text: str, *, timeout: float = LINE_TIMEOUT_S):
    """Run one README line in bash from ``sandbox.cwd``; follow any ``cd`` it makes."""
    where = sandbox.scratch / "cwd"
    script = f'set -e -o pipefail\n{text}\n__rc=$?\npwd > "{where}"\nexit $__rc\n'
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=sandbox.cwd,
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode == 0 and where.exists():
        sandbox.cwd = Path(where.read_text().strip())
    return result


def check_exit(line: Line, text: str, returncode: int, out: str = "", err: str = "") -> None:
    wanted = documented_exit(line.comment) or 0
    assert returncode == wanted, (
        f"{line.where()}\n  ran `{text}`: exit {returncode}, the README says {wanted}\n"
        f"--- stdout (end)\n{out[-3000:]}\n--- stderr (end)\n{err[-3000:]}"
    )


def run_as_written(sandbox: Sandbox, line: Line, text: str) -> subprocess.CompletedProcess[str]:
    """Run the line; a file it names after ``-o`` / ``--output`` / ``>`` must then hold data."""
    result = shell(sandbox, text)
    check_exit(line, text, result.returncode, result.stdout, result.stderr)
    for flag, target in itertools.pairwise(shlex.split(text)):
        if flag in ("-o", "--output", ">") and result.returncode == 0:
            written = sandbox.cwd / target
            assert written.is_file() and written.stat().st_size, f"{line.where()}: {target} empty"
    return result


def run_until_sigint(sandbox: Sandbox, line: Line, text: str) -> None:
    """``--watch``: wait for it to say it is watching, press Ctrl-C, expect exit 0."""
    log = sandbox.scratch / "watch.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            ["bash", "-c", text],
            cwd=sandbox.cwd,
            env=sandbox.env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "watching" not in log.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, f"{line.where()} exited early:\n{log.read_text()}"
            time.sleep(0.1)
        assert "watching" in log.read_text(), f"{line.where()} never said it was watching"
        os.killpg(process.pid, signal.SIGINT)
        returncode = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    check_exit(line, text, returncode, log.read_text())


def run_the_make_recipe(sandbox: Sandbox, line: Line, text: str) -> None:
    """``make demo``: the Makefile's recipe lines for that target, with ``$(BIN)`` = this
    venv. Its ``install`` prerequisite is not run: this venv is what it installs."""
    target = text.split()[1]
    makefile = (REPO / "Makefile").read_text().splitlines()
    start = makefile.index(next(m for m in makefile if m.startswith(f"{target}:")))
    recipe = []
    for row in makefile[start + 1 :]:
        if not row.startswith("\t"):
            break
        recipe.append(row.strip().replace("$(BIN)", str(BIN)))
    assert recipe, f"{line.where()}: no recipe for `{target}` in the Makefile"
    for command in recipe:
        # TMPDIR: the demo works in a temporary folder it keeps; keep it in tmp_path.
        result = subprocess.run(
            ["bash", "-c", f"set -e -o pipefail\n{command}"],
            cwd=REPO,
            env={**sandbox.env, "TMPDIR": str(sandbox.scratch)},
            capture_output=True,
            text=True,
            timeout=LINE_TIMEOUT_S,
            check=False,
        )
        check_exit(line, command, result.returncode, result.stdout, result.stderr)


# --- flow ids: `3f9c2a1b` / `3f9c` in the README stand for a real flow id prefix -------

_FLOW_PLACEHOLDER = re.compile(r"(?<![\w-])[0-9a-f]{4,32}(?![\w-])")


def _replace_flow_id(line: Line, text: str, flow_id: str) -> str:
    found = _FLOW_PLACEHOLDER.search(text)
    assert found, f"{line.where()}: no flow id placeholder (4-32 hex digits) to replace"
    return text[: found.start()] + flow_id[: len(found.group())] + text[found.end() :]


def _mir_json(sandbox: Sandbox, *args: str):
    result = subprocess.run(
        [str(BIN / "mir"), *args, "--json"],
        cwd=sandbox.root,
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=LINE_TIMEOUT_S,
        check=False,
    )
    assert result.stdout, f"mir {' '.join(args)}: exit {result.returncode}\n{result.stderr}"
    return json.loads(result.stdout)


def new_pending_flow(sandbox: Sandbox) -> str:
    record = _mir_json(
        sandbox,
        "run",
        "agent",
        "refunds.triage",
        "--input",
        (sandbox.root / "case.json").read_text(),
        "--provider",
        "scripted",
        "--responses",
        "pending.jsonl",  # low confidence on every route: a human decides
    )
    assert record["status"] == "pending_review", record
    return str(record["flow_id"])


def on_a_new_pending_flow(sandbox: Sandbox, line: Line, text: str) -> None:
    """approve / reject: a flow has one outcome, so each line gets its own pending flow."""
    run_as_written(sandbox, line, _replace_flow_id(line, text, new_pending_flow(sandbox)))


def listing_finds_flows(sandbox: Sandbox, line: Line, text: str) -> None:
    """``traces list [filters]``: the example must find something (`--agent
    triage` once found nothing, exit 0). The approvals used up the pending flows, so
    a ``--status pending_review`` example gets one first."""
    if "pending_review" in line.words:
        new_pending_flow(sandbox)
    result = run_as_written(sandbox, line, text)
    if "--json" in line.words:
        assert json.loads(result.stdout), f"{line.where()}: found no flows"
    else:
        assert len(result.stdout.strip().splitlines()) > 1, f"{line.where()}: found no flows"


def on_a_real_flow_prefix(sandbox: Sandbox, line: Line, text: str) -> None:
    """``traces show 3f9c``: the newest flow whose prefix of that length is unique."""
    ids = [flow["flow_id"] for flow in _mir_json(sandbox, "traces", "list", "--limit", "1000")]
    assert ids, f"{line.where()}: no flows to show (the runtime block should have made some)"
    width = len(_FLOW_PLACEHOLDER.search(text).group())
    prefixes = [flow_id[:width] for flow_id in ids]
    unique = [flow_id for flow_id in ids if prefixes.count(flow_id[:width]) == 1]
    shown = unique[0] if unique else ids[0]
    result = run_as_written(sandbox, line, _replace_flow_id(line, text, shown))
    assert shown in result.stdout, f"{line.where()}: flow {shown} is not in the output"


HANDLERS: dict[tuple[str, str], Handler] = {
    ("quick-start", "make demo"): run_the_make_recipe,
    ("scaffold", "mir"): run_as_written,
    ("scaffold", "ruff"): run_as_written,  # `ruff check . && pytest`
    ("lint", "mir"): run_as_written,
    ("lint", "mir lint boundaries --watch"): run_until_sigint,
    ("runtime", "mir"): run_as_written,
    ("runtime", "mir approve"): on_a_new_pending_flow,
    ("runtime", "mir reject"): on_a_new_pending_flow,
    ("traces", "mir"): run_as_written,
    ("traces", "mir traces list"): listing_finds_flows,
    ("traces", "mir traces show"): on_a_real_flow_prefix,
    ("evals", "mir"): run_as_written,
    ("evals", "perl"): run_as_written,
    ("drift", "cd"): run_as_written,
    ("drift", "python"): run_as_written,
    ("drift", "mir"): run_as_written,
    ("models", "cp"): run_as_written,
    ("models", "perl"): run_as_written,
    ("models", "mir"): run_as_written,
    # After the walkthrough's registry (its traces: none yet, so compare shows empty arms;
    # tests/functional/test_models_compare.py runs both on planted traces).
    ("models-canary", "mir"): run_as_written,
    ("fleet", "mir"): run_as_written,
    ("fleet", "mir worker"): run_until_sigint,
}


# --- sandboxes: where each section's lines run -----------------------------------------


def empty_folder(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


def scaffolded_project_with_contracts(tmp_path: Path) -> Path:
    """What the scaffold block makes, plus an import-linter contract in the root."""
    env = shell_env()
    for args in (
        ("init", "shop"),
        ("new", "capability", "support-desk"),
        ("new", "agent", "support_desk", "triage", "--action", "reply"),
    ):
        cwd = tmp_path if args[0] == "init" else tmp_path / "shop"
        done = subprocess.run(
            [str(BIN / "mir"), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"mir {' '.join(args)}: {done.stderr}"
    shutil.copy(FIXTURES / "readme" / "lint" / ".importlinter", tmp_path / "shop")
    return tmp_path / "shop"


def runtime_project(tmp_path: Path) -> Path:
    """tests/fixtures/runtime/project plus the files the runtime block reads."""
    root = tmp_path / "app"
    shutil.copytree(FIXTURES / "runtime" / "project", root)
    shutil.copytree(FIXTURES / "readme" / "runtime", root, dirs_exist_ok=True)
    return root


def support_desk_copy(tmp_path: Path) -> Path:
    """examples/support_desk as committed (suite, recorded answers, baseline), no state."""
    root = tmp_path / "support_desk"
    shutil.copytree(
        REPO / "examples" / "support_desk",
        root,
        ignore=shutil.ignore_patterns(".mir", "__pycache__", ".*_cache"),
    )
    return root


def repository_with_the_example(tmp_path: Path) -> Path:
    """The support desk example at its place in a copy of the repository layout."""
    target = tmp_path / "repo" / "examples" / "support_desk"
    shutil.copytree(
        REPO / "examples" / "support_desk",
        target,
        ignore=shutil.ignore_patterns(".mir", "__pycache__", ".pytest_cache"),
    )
    return tmp_path / "repo"


@dataclass(frozen=True)
class Scenario:
    sections: tuple[str, ...]  # run in this order, in one sandbox
    make: Callable[[Path], Path]


SCENARIOS = {
    "quick-start": Scenario(("quick-start",), empty_folder),
    "scaffold": Scenario(("scaffold",), empty_folder),
    "lint": Scenario(("lint",), scaffolded_project_with_contracts),
    "runtime-traces": Scenario(("runtime", "traces"), runtime_project),
    "evals": Scenario(("evals",), support_desk_copy),
    "drift": Scenario(("drift",), repository_with_the_example),
    # From the repository root: the walkthrough copies examples/support_desk first.
    "models": Scenario(("models", "models-canary"), repository_with_the_example),
}
# Run by test_fleet_readme_block_runs_on_a_real_postgres, with $MIR_STORE_URL set.
FLEET = Scenario(("fleet",), lambda tmp_path: decided_locally(runtime_project(tmp_path)))
# These call the embedded SmolLM2 model (`mir run agent` on a `llama` route).
SLOW = {"quick-start", "scaffold", "runtime-traces"}


def unhandled(blocks: list[Block]) -> list[str]:
    """Lines with no handler and no NOT_RUN reason, and run lines no scenario runs."""
    keys = [*HANDLERS, *NOT_RUN]
    scenarios = [*SCENARIOS.values(), FLEET]
    scenario_sections = {s for scenario in scenarios for s in scenario.sections}
    problems = []
    for block in blocks:
        for line in block.lines:
            key = match_key(line, keys)
            if key is None:
                problems.append(
                    f"{line.where()}: no handler. Add ({line.section!r}, "
                    f"{' '.join(line.words[:3])!r}) to HANDLERS (e.g. run_as_written) or to "
                    "NOT_RUN with the reason, in tests/functional/test_readme_examples.py"
                )
            elif key in HANDLERS and line.section not in scenario_sections:
                problems.append(
                    f"{line.where()}: section {line.section!r} has no sandbox: add a "
                    "Scenario for it to SCENARIOS in tests/functional/test_readme_examples.py"
                )
    return problems


def test_every_readme_shell_line_is_run_or_has_a_reason():
    blocks = read_readme(REPO)
    assert blocks, "README.md has no shell blocks: the parser lost them"
    assert not unhandled(blocks), "\n".join(unhandled(blocks))
    lines = [line for block in blocks for line in block.lines]
    stale = [key for key in NOT_RUN if not any(match_key(li, [key]) for li in lines)]
    assert not stale, f"NOT_RUN entries that match no README line (remove them): {stale}"


def test_a_new_block_without_a_handler_fails_with_how_to_add_one():
    readme = "## Deploying\n\n```bash\nmir deploy --now   # ship it\n```\n"
    (problem,) = unhandled(shell_blocks(readme))
    assert "README.md:4 [deploying] `mir deploy --now`" in problem
    assert "Add ('deploying', 'mir deploy --now') to HANDLERS" in problem


def test_placeholders_and_documented_exits_follow_the_stated_rules():
    assert expand_synopsis("mir lint boundaries [ROOT]") == [
        "mir lint boundaries",
        "mir lint boundaries .",
    ]
    assert expand_synopsis("mir lint boundaries --baseline b.json [--update-baseline]") == [
        "mir lint boundaries --baseline b.json --update-baseline",
        "mir lint boundaries --baseline b.json",
    ]
    assert documented_exit("exit 2: no such agent") == 2
    assert documented_exit("exit 0 clean, 1 findings, 2 usage/config error") is None
    assert documented_exit("re-hash everything: exit 1 if tampered") is None


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in SCENARIOS],
)
def test_readme_block_runs_as_written(name: str, tmp_path: Path):
    run_scenario(SCENARIOS[name], tmp_path, shell_env())


@pytest.mark.fleet
def test_fleet_readme_block_runs_on_a_real_postgres(pg_url: str, tmp_path: Path):
    lake = str(tmp_path / "lake")
    env = {**shell_env(), "MIR_STORE_URL": pg_url, "MIR_STORE_DATA_PATH": lake}
    run_scenario(FLEET, tmp_path, env)


def decided_locally(root: Path) -> Path:
    """A project with local history, before any fleet store: a refund executed (its
    ledger) and a flow waiting for review (published by the migration)."""
    env = {k: v for k, v in shell_env().items() if k != "MIR_STORE_URL"}
    sandbox = Sandbox(root=root, cwd=root, scratch=root, env=env)
    record = _mir_json(
        sandbox, "run", "agent", "refunds.triage", "--input", "@case.json",
        "--provider", "scripted", "--responses", "replies.jsonl",
    )  # fmt: skip
    assert record["status"] == "executed", record
    new_pending_flow(sandbox)
    return root


def run_scenario(scenario: Scenario, tmp_path: Path, env: dict[str, str]) -> None:
    blocks = [b for b in read_readme(REPO) if b.section in scenario.sections]
    blocks.sort(key=lambda b: (scenario.sections.index(b.section), b.number))
    root = scenario.make(tmp_path)
    (tmp_path / "scratch").mkdir()
    sandbox = Sandbox(root=root, cwd=root, scratch=tmp_path / "scratch", env=env)
    assert shell(sandbox, "command -v mir").stdout.strip() == str(BIN / "mir")
    ran = 0
    for block in blocks:
        for line in block.lines:
            key = match_key(line, [*HANDLERS, *NOT_RUN])
            assert key is not None, "\n".join(unhandled([block]))
            if key in NOT_RUN:
                continue
            for text in expand_synopsis(line.text):
                HANDLERS[key](sandbox, line, text)
                ran += 1
    assert ran, f"no README line ran for {scenario.sections}: were the sections renamed?"


def test_a_workflows_run_steps_are_shell_lines():
    readme = (
        "## CI\n\n```yaml\njobs:\n  a:\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: mir lint boundaries --format github  # exit 1: findings\n"
        "      - name: two\n        run: |\n          mir lint rules\n          mir schema\n```\n"
    )
    (block,) = shell_blocks(readme)
    assert [(li.number, li.text) for li in block.lines] == [
        (8, "mir lint boundaries --format github"),
        (11, "mir lint rules"),
        (12, "mir schema"),
    ]
    assert documented_exit(block.lines[0].comment) == 1
