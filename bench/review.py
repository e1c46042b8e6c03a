"""Human review, every speed target of one feature in one run.

    python bench/review.py [--quick]

Runs the four parts one after the other in this interpreter's environment, each
printing its own table of figures and ratios against a reference measured in the same
run, then a summary of the targets:

- ``review_rules.py``: review rules per decision (<= 0.2 ms);
- ``review_queue.py``: ``mir review list --json`` over 100,000 waiting flows (<= 1 s);
- ``review_inbox.py``: the inbox's first page of 10,000 waiting flows (<= 300 ms);
- ``review_signing.py``: ``mir traces verify`` over 100,000 signed approvals against the
  same store unsigned (<= 2 s beyond). Its exit code, and the summary's row, judge the
  routine verify (signatures checked before are not checked again); the first verify of
  a store and ``--full`` check every signature, and that line (met or MISSED) is printed
  in its own table above the summary.

``--quick`` runs each with a tenth of the data (a smoke run; its figures are not the
targets'). Exits 1 when any part reports a missed target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = [
    ("review rules per decision <= 0.2 ms", "review_rules.py", ["--decisions", "2000"]),
    ("review list --json, 100k flows <= 1 s", "review_queue.py",
     ["--pending", "10000", "--done", "10000", "--repeat", "1"]),
    ("inbox first page, 10k flows <= 300 ms", "review_inbox.py", ["--flows", "1000"]),
    ("verify 100k signed <= 2 s beyond (routine)", "review_signing.py", ["--approvals", "10000"]),
]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the data")
    args = parser.parse_args()
    summary: list[tuple[str, int, float]] = []
    for target, script, quick in PARTS:
        print(f"\n== {script} ({target})", flush=True)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(HERE / script), *(quick if args.quick else [])])
        summary.append((target, done.returncode, time.perf_counter() - started))
    print(f"\n{'target':<42} {'result':>8} {'bench s':>8}")
    for target, code, seconds in summary:
        print(f"{target:<42} {'met' if code == 0 else 'MISSED':>8} {seconds:>8.1f}")
    return 1 if any(code for _, code, _ in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
