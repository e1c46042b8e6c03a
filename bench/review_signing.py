"""Signed approvals: what checking their signatures adds to `mir traces verify`.

Two stores of N reviewed decisions each (snapshot, route to ``pending_review``, review,
final ``executed``: 4 events a decision, written with ``TraceStore.append`` in batches
and compacted), in copies of examples/support_desk:

* signed: the refund action requires signed approvals, and every review event holds an
  Ed25519-signed statement by a declared support lead;
* unsigned: the same flows, whose contract asks for one unsigned approval, and whose
  review events hold no statement.

    python bench/review_signing.py [--approvals 100000] [--repeat 3]

Times (best of ``repeat``) ``mir traces verify --full`` and a plain ``mir traces verify``
after it (the CLI, start included: what was checked before is not checked again) on
each store, and in process the chain check alone (``verify_traces``: today's verify)
and the review audit alone (``mir.audit.audit_reviews``, full). Exits 1 when the
signed store's plain verify takes more than 2 s beyond the unsigned one's (the target);
the ``--full`` difference is reported (one Ed25519 verification per approval).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mir.audit import audit_reviews
from mir.project import load_project_at
from mir.reviewers import Reviewer, add_reviewer, generate_key, sign_review
from mir.traces import TraceEvent, TraceStore, verify_traces

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_desk"
CONTRACT = "capabilities/refunds/agents/triage.yaml"
TARGET_S = 2.0
BATCH = 500
MIR = Path(sys.executable).parent / "mir"


def make_project(root: Path, signed: bool) -> tuple[Path, object]:
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    if not signed:
        contract = root / CONTRACT
        contract.write_text(
            contract.read_text().replace(
                "approvals: {roles: [support_lead], count: 1, signed: true}",
                "approvals: {roles: [support_lead], count: 1}",
            )
        )
    key = generate_key()
    add_reviewer(root, Reviewer(name="ana", roles=("support_lead",), public_key=key.public_key))
    return root, key


def flow_events(i: int, key: object, signed: bool, start: datetime) -> list[TraceEvent]:
    flow_id = f"{i:032x}"
    at = start + timedelta(seconds=i)
    decision = {
        "category": "damaged", "action": "refund", "order_id": f"A-{i % 9000 + 1000}",
        "amount": float(10 + i % 150), "confidence": 0.6, "reason": "arrived broken",
    }  # fmt: skip
    review_at = (at + timedelta(minutes=5)).isoformat()
    review = {"verdict": "approve", "by": "ana", "at": review_at, "reason": None,
              "contract_changed": False, "correction": None}  # fmt: skip
    if signed:
        signature = sign_review(
            key, flow_id=flow_id, decision=decision, verdict="approve",  # type: ignore[arg-type]
            reviewer="ana", at=review_at,
        )  # fmt: skip
        review.update(signature.data(), approvals={"have": 1, "need": 1})
    base = {"flow_id": flow_id, "agent": "refunds.triage"}
    snapshot = {
        "input": {"order_id": decision["order_id"], "category": "damaged"},
        "context": {"refund_allowance": 200.0}, "source": "production",
        "contract": CONTRACT, "requested_by": "sam", "created_at": at.isoformat(),
    }  # fmt: skip
    rule = {"roles": ["support_lead"], "count": 1, "signed": signed}
    routed = {"decision": decision, "reasons": ["low_confidence"], "approvals": {"refund": rule}}
    return [
        TraceEvent(**base, seq=0, step="snapshot", at=at, data=snapshot),
        TraceEvent(
            **base,
            seq=1,
            step="route",
            at=at,
            status="pending_review",
            reasons=["low_confidence"],
            data=routed,
        ),
        TraceEvent(**base, seq=2, step="review", at=at, data=review),
        TraceEvent(
            **base, seq=3, step="final", at=at, status="executed", data={"source": "production"}
        ),
    ]


def fill(root: Path, key: object, approvals: int, signed: bool) -> float:
    started = time.perf_counter()
    start = datetime.now(UTC) - timedelta(days=30)
    with TraceStore(root / ".mir" / "traces") as store:
        for first in range(0, approvals, BATCH):
            events = [
                e
                for i in range(first, min(first + BATCH, approvals))
                for e in flow_events(i, key, signed, start)
            ]
            store.append(events)
        store.compact()
    return time.perf_counter() - started


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def cli_verify(root: Path, *flags: str) -> None:
    done = subprocess.run(
        [str(MIR), "traces", "verify", *flags], cwd=root, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"verify failed in {root}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def signature_floor(count: int = 5000) -> float:
    """Seconds per raw Ed25519 verification through ``cryptography`` (no mir code): the
    floor a first or ``--full`` verify of signed reviews cannot go under on one core."""
    from mir.reviewers import make_statement
    from mir.reviewers.batch import verify_one

    key = generate_key()
    checks = []
    for i in range(count):
        statement = make_statement(f"{i:032x}", {"i": i}, "approve", "ana", "now")
        checks.append((key.public_key, statement.canonical(), key.sign(statement)))
    started = time.perf_counter()
    assert all(verify_one(*check) for check in checks)
    return (time.perf_counter() - started) / count


def in_process(root: Path, repeat: int) -> tuple[float, float]:
    project = load_project_at(root)
    with TraceStore.for_project(project) as store:
        chain = best(repeat, lambda: verify_traces(store, full=True))
        audit = best(repeat, lambda: audit_reviews(project, store, full=True))
    return chain, audit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--approvals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mir-bench-signing-") as tmp:
        # verify's review cache keys its tags with a secret in the user's state folder
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        rows = {}
        for signed in (False, True):
            name = "signed" if signed else "unsigned"
            root, key = make_project(Path(tmp) / name, signed)
            written = fill(root, key, args.approvals, signed)
            wall = best(args.repeat, lambda root=root: cli_verify(root, "--full"))
            again = best(args.repeat, lambda root=root: cli_verify(root))
            chain, audit = in_process(root, args.repeat)
            rows[name] = (written, wall, again, chain, audit)
    n = args.approvals
    print(f"mir traces verify over {n:,} reviewed decisions (4 events each), best of "
          f"{args.repeat}; CLI wall times, start included")  # fmt: skip
    print(f"{'store':<10}{'write s':>9}{'--full s':>10}{'verify s':>10}{'chain s':>9}"
          f"{'reviews s':>11}{'us/review':>11}")  # fmt: skip
    for name, (written, wall, again, chain, audit) in rows.items():
        print(f"{name:<10}{written:>9.1f}{wall:>10.2f}{again:>10.2f}{chain:>9.2f}"
              f"{audit:>11.2f}{audit / n * 1e6:>11.1f}")  # fmt: skip
    print(
        "(--full: every line re-hashed, every signature verified; verify: what was checked"
        " before is not checked again; chain / reviews: in process, --full)"
    )
    floor = signature_floor()
    from mir.reviewers.batch import workers

    print(
        f"raw Ed25519 verify: {floor * 1e3:.3f} ms each, {floor * n:.1f} s for {n:,} on one "
        f"core (load {os.getloadavg()[0]:.1f}; verify would use {workers()} worker(s) now)"
    )
    extra = rows["signed"][1] - rows["unsigned"][1]
    print(f"--full beyond the unsigned store: {extra:+.2f} s = {extra / (floor * n):.2f}x the "
          "one-core floor")  # fmt: skip
    met = True
    for label, column in (("--full", 1), ("verify", 2)):
        beyond = rows["signed"][column] - rows["unsigned"][column]
        ratio = rows["signed"][column] / rows["unsigned"][column]
        ok = beyond <= TARGET_S
        met = met and (ok or column == 1)
        print(f"{label}: signed / unsigned {ratio:.2f}x, {beyond:+.2f} s beyond "
              f"(target <= {TARGET_S:.1f} s): {'met' if ok else 'MISSED'}")  # fmt: skip
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
