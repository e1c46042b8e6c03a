"""Reported vs token-probability confidence on the support_desk example.

Copies examples/support_desk to a temporary folder, then decides each of its sample
tickets on the embedded SmolLM2 twice: with the contract as written
(``confidence_source: reported``, the number the model writes) and with
``confidence_source: logprobs`` (the probability of the chosen action). Prints one row per
ticket: the action, both confidences, the raw (unrenormalised) action probability, the
status, and whether the review threshold would send it to a human.

    python bench/confidence_sources.py [--threads 2]

Needs ``mir[local]`` (llama-cpp-python and the embedded model). Executors run inside the
temporary copy only.

Measured 2026-11-30 (SmolLM2-135M, two identical runs): reported confidence 1.0 on 5 of 6
tickets (0.6 on one); logprobs 0.52 / 0.75 / 0.76 / 0.54 / 0.63 on the five the model
decided (the sixth fell back to a rule), raw products 0.47-0.62; below the 0.7 review
threshold: 1 of 6 reported, 3 of 6 logprobs. A logprobs decision took ~2.5x as long.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from mir.runtime import load_agent

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "support_desk"
CONTRACT = Path("capabilities/refunds/agents/triage.yaml")


def _copy(target: Path, source: str) -> Path:
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    path = target / CONTRACT
    contract = yaml.safe_load(path.read_text())
    contract["decision"]["confidence_source"] = source
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return path


def _validated(events: list) -> dict:
    """The last validate event's confidence note (what the runtime recorded)."""
    for event in reversed(events):
        if event.step == "validate" and event.data.get("confidence"):
            return event.data["confidence"]
    return {}


def run(source: str, tickets: list[tuple[str, dict]], workdir: Path) -> list[dict]:
    contract = _copy(workdir / source, source)
    sys.path.insert(0, str(workdir / source))
    rows = []
    with load_agent(contract, project=workdir / source) as agent:
        threshold = agent.contract.review.confidence_threshold
        for name, ticket in tickets:
            started = time.perf_counter()
            record = agent.decide(ticket)
            seconds = time.perf_counter() - started
            decision = record.decision or {}
            note = _validated(agent.trace(record.flow_id))
            confidence = decision.get("confidence")
            rows.append(
                {
                    "ticket": name,
                    "action": decision.get("action"),
                    "confidence": confidence,
                    "reported": note.get("reported", confidence),
                    "raw": note.get("raw"),
                    "status": record.status,
                    "review": confidence is not None and confidence < threshold,
                    "seconds": seconds,
                }
            )
    sys.path.remove(str(workdir / source))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        os.environ["MIR_LLAMA_THREADS"] = str(args.threads)
    tickets = [
        (p.stem, json.loads(p.read_text())) for p in sorted((EXAMPLE / "inputs").glob("*.json"))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        results = {s: run(s, tickets, Path(tmp)) for s in ("reported", "logprobs")}
    print(f"{'ticket':22} {'action':9} {'reported':>9} {'logprobs':>9} {'raw':>9}  status / review")
    for plain, scored in zip(results["reported"], results["logprobs"], strict=True):

        def fmt(value: object) -> str:
            return f"{value:9.4f}" if isinstance(value, float | int) else f"{'-':>9}"

        print(
            f"{plain['ticket']:22} {plain['action'] or '-':9} {fmt(plain['confidence'])} "
            f"{fmt(scored['confidence'])} {fmt(scored['raw'])}  "
            f"{plain['status']}/{scored['status']}"
            + (
                f" (logprobs action: {scored['action']})"
                if scored["action"] != plain["action"]
                else ""
            )
        )
    for source, rows in results.items():
        seconds = sum(r["seconds"] for r in rows) / len(rows)
        review = sum(r["review"] for r in rows)
        print(
            f"{source}: {seconds:.2f} s a decision, {review}/{len(rows)} below the review threshold"
        )


if __name__ == "__main__":
    main()
