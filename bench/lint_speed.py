"""Speed of ``mir lint boundaries`` against ``lint-imports`` on a generated project.

Generates a deterministic capability-first tree (default: 40 capabilities x 100 modules
= ~4,000 modules, realistic imports, a handful of violations) with an equivalent
import-linter config, then times, as medians of N runs (subprocesses, interleaved):

* mir cold (no cache), mir warm (cache), mir after touching every file (a fresh CI
  checkout: every mtime changed, content did not);
* lint-imports cold (``--no-cache``) and warm (its cache);

and peak RSS of each (max over the measured process and its children) and its CPU time
(user + system, children included: steadier than wall time on a shared machine). Prints
ratios against the targets: mir cold <= 0.5x lint-imports cold, mir warm <= 0.25x
lint-imports warm, mir peak memory <= lint-imports'.

Both tools run with their bytecode compiled, as after ``pip install`` (this environment
sets ``PYTHONDONTWRITEBYTECODE=1``, and mir is an editable install without ``.pyc``
files, which would charge mir ~15 ms of compiling per run and lint-imports nothing): the
measured commands get a private ``PYTHONPYCACHEPREFIX`` filled by one untimed run each.

    python bench/lint_speed.py [--runs 5] [--capabilities 40] [--modules 100] [--keep DIR]
                               [--case all|rules|contracts]

The *contracts* case runs the same three import-linter contracts (layers, forbidden,
independence) through ``mir lint boundaries --config`` and ``lint-imports`` on the tree
generated as an ordinary package (no ``[tool.mir]``), cold, warm and after one edit:
targets mir warm <= 0.25x lint-imports warm, mir cold <= 1.0x.

``generate_tree`` is also used by the differential test of the import extractor.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

BIN = Path(sys.executable).parent
MIR = str(BIN / "mir")
LINT_IMPORTS = str(BIN / "lint-imports")
LAYERS = ("domain", "application", "adapters")
STDLIB = ["json", "dataclasses", "datetime", "decimal", "enum", "typing", "collections", "re"]
ADAPTER_LIBS = ["duckdb", "httpx", "sqlalchemy", "requests"]

# Peak RSS of a child: run it under a tiny parent that reports RUSAGE_CHILDREN.
_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL).returncode\n"
    "elapsed = time.perf_counter() - t\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, code)\n"
)


def _module_text(rng: random.Random, cap: str, layer: str, index: int, imports: list[str]) -> str:
    """A plausible module: docstring, imports (some conditional or function-level),
    classes and functions with strings that mention imports (they must not count)."""
    lines = [f'"""{cap}.{layer} module {index}: import rules live in the intent doc."""', ""]
    lines.append("from __future__ import annotations")
    lines.append("")
    lines += imports
    lines.append("")
    if rng.random() < 0.2:
        lines += ["from typing import TYPE_CHECKING", "", "if TYPE_CHECKING:"]
        lines.append("    from collections.abc import Iterator")
        lines.append("")
    for k in range(rng.randint(2, 5)):
        lines += [
            "",
            f"class Thing{index}_{k}:",
            f'    """Holds state {k}. Example: ``from x import y`` is not an import here."""',
            "",
            "    def __init__(self, value: int = 0) -> None:",
            "        self.value = value",
            f'        self.label = "import {cap} as text"',
            "",
            "    def describe(self) -> str:",
            '        return f"{self.value} -> {self.label!r}"  # import in a comment',
            "",
        ]
    if rng.random() < 0.3:
        lines += ["", "def lazy():", "    import json", "", "    return json.dumps({})", ""]
    return "\n".join(lines) + "\n"


def generate_tree(
    root: Path,
    capabilities: int = 40,
    modules: int = 100,
    seed: int = 7,
    package: str = "capabilities",
) -> dict:
    """Write the tree under ``root``; returns what was planted (violations per rule).
    With another ``package`` name the tree is an ordinary package (no ``[tool.mir]``),
    like a Django project that adopts mir only for its import-linter contracts."""
    rng = random.Random(seed)
    caps = [f"cap{i:02d}" for i in range(capabilities)]
    pkg = root / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Capabilities of the generated shop."""\n')
    deps = {cap: sorted(rng.sample(caps[:i], min(i, 3))) if i else [] for i, cap in enumerate(caps)}
    per_layer = {"domain": modules * 3 // 10, "application": modules * 3 // 10}
    per_layer["adapters"] = modules - 1 - per_layer["domain"] - per_layer["application"]
    planted = {"MIR101": 0, "MIR102": 0, "MIR103": 0, "MIR104": 0}
    for ci, cap in enumerate(caps):
        base = pkg / cap
        names = {
            layer: [f"{layer[:3]}_{n:03d}" for n in range(per_layer[layer])] for layer in LAYERS
        }
        for layer in LAYERS:
            (base / layer).mkdir(parents=True)
            (base / layer / "__init__.py").write_text(f'"""{cap} {layer}."""\n')
        public = [f"Thing0_{k}" for k in range(2)]
        init = [f"from {package}.{cap}.domain.dom_000 import {', '.join(public)}", ""]
        init.append(f"__all__ = {public!r}")
        (base / "__init__.py").write_text("\n".join(init) + "\n")
        doc = f"""\
            ---
            capability: {cap}
            depends_on: [{", ".join(deps[cap])}]
            public: [{", ".join(public)}]
            ---
            # {cap}: a generated capability
            """
        (base / "CLAUDE.md").write_text(textwrap.dedent(doc))
        for li, layer in enumerate(LAYERS):
            for n, name in enumerate(names[layer]):
                imports = [f"import {m}" for m in rng.sample(STDLIB, 3)]
                if layer == "domain":
                    imports.append("from pydantic import BaseModel")
                for inner in LAYERS[: li + 1]:
                    choices = [m for m in names[inner] if m != name]
                    for target in rng.sample(choices, min(2, len(choices))):
                        if inner == layer and target >= name:
                            continue  # keep intra-layer imports acyclic
                        imports.append(f"from {package}.{cap}.{inner}.{target} import Thing0_0")
                if layer != "domain" and deps[cap] and rng.random() < 0.5:
                    other = rng.choice(deps[cap])
                    imports.append(f"from {package}.{other} import Thing0_1")
                if layer == "adapters":
                    imports.append(f"import {rng.choice(ADAPTER_LIBS)}")
                if n == 1 and ci % 10 == 3:  # the handful of violations
                    if layer == "domain":
                        adapter = names["adapters"][0]
                        imports.append(f"from {package}.{cap}.adapters.{adapter} import Thing0_0")
                        imports.append("import litellm")
                        planted["MIR101"] += 1
                        planted["MIR104"] += 1
                    elif layer == "application" and deps[cap]:
                        imports.append(
                            f"from {package}.{deps[cap][0]}.domain.dom_000 import Thing0_0"
                        )
                        imports.append(f"from {package}.{caps[-1]} import Thing0_0")
                        planted["MIR102"] += 1
                        planted["MIR103"] += 1
                text = _module_text(rng, cap, layer, n, imports)
                (base / layer / f"{name}.py").write_text(text)
    project = '[project]\nname = "shop"\nversion = "0"\n'
    if package == "capabilities":
        project += '\n[tool.mir]\ncapabilities = "capabilities"\n'
    (root / "pyproject.toml").write_text(project)
    return planted


def write_contracts(
    path: Path, capabilities: int = 40, package: str = "capabilities", independence: int = 0
) -> None:
    """import-linter contracts equivalent to mir's layer and forbidden-import rules
    (kept outside the tree, so ``mir`` does not pick them up and run them as well);
    with ``independence``, a third contract: the domains of that many capabilities
    are independent of each other."""
    caps = [f"cap{i:02d}" for i in range(capabilities)]
    containers = "\n".join(f"    {package}.{cap}" for cap in caps)
    domains = "\n".join(f"    {package}.{cap}.domain" for cap in caps)
    applications = "\n".join(f"    {package}.{cap}.application" for cap in caps)
    third = ""
    if independence:
        independent = "\n".join(f"    {package}.{cap}.domain" for cap in caps[:independence])
        third = (
            "\n[importlinter:contract:independent]\nname = Domains are independent\n"
            f"type = independence\nmodules =\n{independent}\n"
        )
    path.write_text(
        f"[importlinter]\nroot_package = {package}\ninclude_external_packages = True\n\n"
        "[importlinter:contract:layers]\nname = Layers inside every capability\ntype = layers\n"
        f"containers =\n{containers}\nlayers =\n    adapters\n    application\n    domain\n\n"
        "[importlinter:contract:domain-pure]\nname = Domain stays pure\ntype = forbidden\n"
        f"source_modules =\n{domains}\n{applications}\nforbidden_modules =\n"
        "    litellm\n    llama_cpp\n    duckdb\n    requests\n    httpx\n    sqlalchemy\n" + third
    )


def _measure(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, float]:
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed, rss, cpu, _code = out.stdout.split()
    return float(elapsed), int(rss), float(cpu)


def _touch_all(root: Path) -> None:
    now = time.time_ns()
    for path in root.rglob("*.py"):
        os.utime(path, ns=(now, now))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--capabilities", type=int, default=40)
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument(
        "--case",
        choices=("all", "rules", "contracts"),
        default="all",
        help="rules: mir's rules vs equivalent contracts; contracts: the same "
        "import-linter contracts run by both (default: all)",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mir-lint-bench-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "bytecode")
    if args.case in ("all", "rules"):
        bench_rules(args, workdir, env)
    if args.case in ("all", "contracts"):
        bench_contracts(args, workdir, env)
    if args.keep is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


Stats = dict[str, float]


def _table(samples: dict[str, list[tuple[float, int, float]]]) -> tuple[Stats, Stats, Stats]:
    """Print the table; return median wall times, median CPU times, peak RSS."""
    medians = {name: statistics.median(t for t, _, _ in runs) for name, runs in samples.items()}
    peaks = {name: max(rss for _, rss, _ in runs) for name, runs in samples.items()}
    cpus = {name: statistics.median(c for _, _, c in runs) for name, runs in samples.items()}
    print("| run | median s | median CPU s | peak RSS MB |\n|---|---:|---:|---:|")
    for name in samples:
        print(f"| {name} | {medians[name]:.2f} | {cpus[name]:.2f} | {peaks[name] / 1024:.0f} |")
    return medians, cpus, {name: float(peak) for name, peak in peaks.items()}


def bench_contracts(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> None:
    """The same three import-linter contracts (layers, forbidden, independence) run by
    ``mir lint boundaries --config`` and by ``lint-imports``, on the generated tree as
    an ordinary package (no ``[tool.mir]``: mir checks the contracts only), cold and
    warm, interleaved in the same run."""
    root = workdir / "django"
    if root.exists():
        shutil.rmtree(root)
    generate_tree(root, args.capabilities, args.modules, package="shop")
    count = sum(1 for _ in root.rglob("*.py"))
    config = workdir / "config" / "contracts.ini"  # outside the tree, as with --config
    config.parent.mkdir()
    write_contracts(config, args.capabilities, package="shop", independence=args.capabilities)
    print(f"\ncontracts case: {root} ({count} modules; layers, forbidden, independence)")
    mir_cache, li_cache = workdir / "mir-contracts-cache", workdir / "li-contracts-cache"
    mir = [MIR, "lint", "boundaries", str(root), "--config", str(config), "--format", "json"]
    lint_imports = [LINT_IMPORTS, "--no-logo", str(config)]
    for command in ([*mir, "--no-cache"], [*lint_imports, "--no-cache"]):  # compile once
        _measure(command, root, env)
    samples: dict[str, list[tuple[float, int, float]]] = {}

    def record(name: str, command: list[str]) -> None:
        samples.setdefault(name, []).append(_measure(command, root, env))

    edited = root / "shop" / "cap05" / "domain" / "dom_003.py"
    original = edited.read_text()
    for run in range(args.runs):
        shutil.rmtree(mir_cache, ignore_errors=True)
        record("mir cold", [*mir, "--cache-dir", str(mir_cache)])
        record("mir warm", [*mir, "--cache-dir", str(mir_cache)])
        edited.write_text(original + f"\nimport json  # edit {run}\n")
        record("mir after one edit", [*mir, "--cache-dir", str(mir_cache)])
        edited.write_text(original)
        record("mir no cache", [*mir, "--no-cache"])
        record("lint-imports cold", [*lint_imports, "--no-cache"])
        shutil.rmtree(li_cache, ignore_errors=True)
        record("lint-imports (fill cache)", [*lint_imports, "--cache-dir", str(li_cache)])
        record("lint-imports warm", [*lint_imports, "--cache-dir", str(li_cache)])
        edited.write_text(original + f"\nimport json  # edit {run}\n")
        record("lint-imports after one edit", [*lint_imports, "--cache-dir", str(li_cache)])
        edited.write_text(original)
    mine = subprocess.run([*mir, "--no-cache"], capture_output=True, text=True, cwd=root)
    theirs = subprocess.run([*lint_imports, "--no-cache"], capture_output=True, text=True, cwd=root)
    found = mine.stdout.count('"code": "IL')
    broken = theirs.stdout.count(" BROKEN")
    print(f"mir IL findings: {found}; lint-imports broken contracts: {broken}\n")
    medians, cpus, _ = _table(samples)
    cold = medians["mir cold"] / medians["lint-imports cold"]
    warm = medians["mir warm"] / medians["lint-imports warm"]
    edit = medians["mir after one edit"] / medians["lint-imports after one edit"]
    print(f"\ncontracts: mir cold / lint-imports cold: {cold:.2f}x (target <= 1.0x)")
    print(f"contracts: mir warm / lint-imports warm: {warm:.2f}x (target <= 0.25x)")
    print(f"contracts: mir after one edit / lint-imports after one edit: {edit:.2f}x")
    cpu_cold = cpus["mir cold"] / cpus["lint-imports cold"]
    cpu_warm = cpus["mir warm"] / cpus["lint-imports warm"]
    print(f"contracts CPU time: mir cold / lint-imports cold {cpu_cold:.2f}x, warm {cpu_warm:.2f}x")


def bench_rules(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> None:
    """mir's own rules against equivalent import-linter contracts (the first table)."""
    root = args.keep or workdir / "shop"
    if root.exists():
        shutil.rmtree(root)
    planted = generate_tree(root, args.capabilities, args.modules)
    count = sum(1 for _ in root.rglob("*.py"))
    print(f"tree: {root} ({count} modules; planted {planted})")
    contracts = workdir / "contracts.ini"
    write_contracts(contracts, args.capabilities)
    mir_cache = workdir / "mir-cache"
    li_cache = workdir / "li-cache"
    mir = [MIR, "lint", "boundaries", str(root), "--format", "json"]
    lint_imports = [LINT_IMPORTS, "--no-logo", str(contracts)]
    pyproject = root / "pyproject.toml"
    with_syntax = pyproject.read_text()
    without_syntax = with_syntax + "\n[tool.mir.lint]\nsyntax_errors = false\n"
    samples: dict[str, list[tuple[float, int, float]]] = {}
    for command in ([*mir, "--no-cache"], [*lint_imports, "--no-cache"]):  # compile once
        _measure(command, root, env)

    def record(name: str, command: list[str]) -> None:
        samples.setdefault(name, []).append(_measure(command, root, env))

    for _ in range(args.runs):
        shutil.rmtree(mir_cache, ignore_errors=True)
        record("mir cold", [*mir, "--cache-dir", str(mir_cache)])
        record("mir warm", [*mir, "--cache-dir", str(mir_cache)])
        _touch_all(root)
        record("mir touched", [*mir, "--cache-dir", str(mir_cache)])
        pyproject.write_text(without_syntax)
        record("mir cold, syntax check off", [*mir, "--no-cache"])
        pyproject.write_text(with_syntax)
        record("lint-imports cold", [*lint_imports, "--no-cache"])
        shutil.rmtree(li_cache, ignore_errors=True)
        record("lint-imports (fill cache)", [*lint_imports, "--cache-dir", str(li_cache)])
        record("lint-imports warm", [*lint_imports, "--cache-dir", str(li_cache)])
        _touch_all(root)
        record("lint-imports touched", [*lint_imports, "--cache-dir", str(li_cache)])

    check = subprocess.run([*mir, "--no-cache"], capture_output=True, text=True)
    found = check.stdout.count('"code": "MIR')
    print(f"mir findings on the tree: {found}\n")
    medians, cpus, peaks = _table(samples)
    cold = medians["mir cold"] / medians["lint-imports cold"]
    warm = medians["mir warm"] / medians["lint-imports warm"]
    touched = medians["mir touched"] / medians["lint-imports touched"]
    memory = max(peaks["mir cold"], peaks["mir warm"]) / max(
        peaks["lint-imports cold"], peaks["lint-imports warm"]
    )
    print(f"\nmir cold / lint-imports cold: {cold:.2f}x (target <= 0.5x)")
    print(f"mir warm / lint-imports warm: {warm:.2f}x (target <= 0.25x)")
    print(f"mir touched / lint-imports touched: {touched:.2f}x")
    print(f"mir peak RSS / lint-imports peak RSS: {memory:.2f}x (target <= 1.0x)")
    cpu_cold = cpus["mir cold"] / cpus["lint-imports cold"]
    cpu_warm = cpus["mir warm"] / cpus["lint-imports warm"]
    print(f"CPU time: mir cold / lint-imports cold {cpu_cold:.2f}x, warm {cpu_warm:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
