"""Start-up time of the ``mir`` CLI against the libraries it cannot avoid.

``mir --help`` should cost about what ``import typer, rich`` costs: every command module
imports its capability code lazily, inside the command. This prints the median wall time
of each command over N runs (subprocesses, interleaved so drift hits all of them alike)
and the ratio to the ``import typer, rich`` baseline.

    python bench/startup.py [--runs 15] [--target 1.5]

Exits 1 when ``mir --help`` is slower than ``target`` x the baseline, and then prints
the slowest modules ``mir --help`` imports (``python -X importtime``), so the culprit
is named rather than guessed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
MIR = str(Path(PYTHON).parent / "mir")
BASELINE = "import typer, rich"

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [PYTHON, "-c", "pass"],
    f'python -c "{BASELINE}"': [PYTHON, "-c", BASELINE],
    "mir --version": [MIR, "--version"],
    "mir --help": [MIR, "--help"],
    # typer's rich help imports rich.markdown (markdown_it) and rich.traceback just to
    # format help; this row shows what plain click help would cost.
    "mir --help (TYPER_USE_RICH=0)": ["env", "TYPER_USE_RICH=0", MIR, "--help"],
}


def wall_time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    env = {**os.environ, "COLUMNS": "100"}
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm the OS file cache once, unmeasured
        wall_time(argv, env)
    for _ in range(runs):
        for name, argv in COMMANDS.items():
            samples[name].append(wall_time(argv, env))
    return {name: statistics.median(times) for name, times in samples.items()}


def slowest_imports(argv: list[str], top: int = 12) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the slowest imports, from ``-X importtime``."""
    script = argv[0]
    result = subprocess.run(
        [PYTHON, "-X", "importtime", script, *argv[1:]], capture_output=True, text=True
    )
    rows = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, module = (part.strip() for part in line[12:].split("|"))
        rows.append((int(cumulative), module))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--target", type=float, default=1.5)
    args = parser.parse_args()

    medians = measure(args.runs)
    baseline = medians[f'python -c "{BASELINE}"']
    print(f"median of {args.runs} runs, {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print(f"| {'command':<30} | {'median ms':>9} | {'x typer+rich':>12} |")
    print(f"|{'-' * 32}|{'-' * 11}|{'-' * 14}|")
    for name, median in medians.items():
        print(f"| {name:<30} | {median * 1000:>9.1f} | {median / baseline:>12.2f} |")
    ratio = medians["mir --help"] / baseline
    verdict = "ok" if ratio <= args.target else "SLOW"
    print(f"\nmir --help = {ratio:.2f}x import typer, rich (target <= {args.target}x): {verdict}")
    if ratio <= args.target:
        return 0
    print("\nslowest imports of `mir --help` (cumulative ms):")
    for micros, module in slowest_imports(COMMANDS["mir --help"]):
        print(f"  {micros / 1000:8.1f}  {module}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
