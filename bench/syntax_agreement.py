"""MIR301's two syntax checkers on every Python file of this interpreter's standard
library and site-packages: do they agree with CPython, and how fast is each?

For every file the lint pipeline would send to ruff (decodable, UTF-8, no NUL byte):

* ``ast.parse`` rejects it but ruff says nothing: a miss (must be 0);
* ruff flags it but ``compile`` accepts it: a false alarm (must be 0);

and the time of ruff (one process per chunk, its default threads, and one thread as
mir runs it beside the scan) against CPython's ``symtable`` check in this process.

    python bench/syntax_agreement.py [FOLDER ...]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import sysconfig
import time
import warnings
from pathlib import Path

from mir.boundaries.ruff_syntax import RuffSyntaxCheck, ruff_binary, ruff_can_check
from mir.boundaries.scan import check_syntax, decode_source


def _files(folders: list[Path]) -> list[tuple[Path, str]]:
    found = []
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            for name in names:
                if name.endswith(".py"):
                    path = Path(dirpath, name)
                    found.append((folder, path.relative_to(folder).as_posix()))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    binary = ruff_binary()
    if binary is None:
        print("ruff is not installed", file=sys.stderr)
        return 2
    folders = args.folders or [
        Path(sysconfig.get_paths()["stdlib"]),
        Path(sysconfig.get_paths()["purelib"]),
    ]
    files = _files(folders)
    sent: dict[Path, list[str]] = {}
    sources: dict[tuple[Path, str], bytes] = {}
    undecodable = other_encoding = 0
    for folder, path in files:
        source = (folder / path).read_bytes()
        try:
            decode_source(source)
        except SyntaxError:
            undecodable += 1
            continue
        if not ruff_can_check(source):
            other_encoding += 1
            continue
        sent.setdefault(folder, []).append(path)
        sources[folder, path] = source

    timings = {}
    flagged: dict[tuple[Path, str], tuple[int, int, str]] = {}
    for threads in (os.cpu_count() or 1, 1):
        started = time.perf_counter()
        for folder, paths in sent.items():
            check = RuffSyntaxCheck(binary, folder, paths, threads=threads).start()
            flagged.update({(folder, p): v for p, v in check.problems().items()})
        timings[f"ruff, {threads} thread(s)"] = time.perf_counter() - started
    started = time.perf_counter()
    by_symtable = sum(1 for key, source in sources.items() if check_syntax(source) is not None)
    timings["CPython symtable, this process"] = time.perf_counter() - started

    misses, false_alarms = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, source in sources.items():
            try:
                ast.parse(source)
            except (SyntaxError, ValueError):
                if key not in flagged:
                    misses.append(key)
                continue
            if key in flagged:
                try:
                    compile(source, str(key[1]), "exec", dont_inherit=True)
                except (SyntaxError, ValueError):
                    continue
                false_alarms.append(key)

    print(
        f"{len(files)} files: {len(sources)} checked by ruff, {other_encoding} left to "
        f"CPython (other encoding or NUL), {undecodable} undecodable (reported by mir)"
    )
    print(f"ruff flags {len(flagged)}, symtable flags {by_symtable}\n")
    print("| check | result |\n|---|---:|")
    print(f"| ast.parse rejects, ruff silent (misses) | {len(misses)} |")
    print(f"| ruff flags, compile accepts (false alarms) | {len(false_alarms)} |")
    for folder, path in [*misses, *false_alarms][:20]:
        print(f"  {folder / path}")
    reference = timings["CPython symtable, this process"]
    print("\n| checker | seconds | x symtable |\n|---|---:|---:|")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.2f} | {seconds / reference:.2f} |")
    return 1 if misses or false_alarms else 0


if __name__ == "__main__":
    sys.exit(main())
