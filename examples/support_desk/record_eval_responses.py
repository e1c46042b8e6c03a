"""Record the embedded model's answers to the eval suite, for offline replay.

    python record_eval_responses.py            # writes responses/eval-triage.jsonl

Runs every case of ``capabilities/refunds/evals/triage.yaml`` once through the real
decision pipeline on SmolLM2 (temperature 0), in a temporary copy of this project so no
trace or ledger entry lands here, and writes the model's LAST raw answer of each case
(the one the pipeline decided on, or the last it refused), one line per case in case
order, with its token counts: the file ``mir eval --provider scripted --responses``
replays. A replayed case gets that one answer, so the replay reaches the decision the
real model reached, without the retries that led there (a refused answer falls through
to the contract's fallback rules). A case the pipeline refuses before any model call
still gets a line, so lines stay in case order.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from mir.contracts import load_eval_suite
from mir.runtime import load_agent

HERE = Path(__file__).resolve().parent
SUITE = HERE / "capabilities" / "refunds" / "evals" / "triage.yaml"
OUT = HERE / "responses" / "eval-triage.jsonl"
NOT_ASKED = "(not asked: the pipeline refused this case before any model call)"


def main() -> int:
    suite = load_eval_suite(SUITE)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "support_desk"
        shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
        os.environ["SUPPORT_DESK_LEDGER"] = str(Path(tmp) / "ledger.sqlite3")
        lines = []
        with load_agent("refunds.triage", project=copy) as agent:
            for case in suite.cases:
                record = agent.decide(case.input, case.context, role=case.role)
                infers = [
                    e for e in agent.trace(record.flow_id) if e.step == "infer" and "raw" in e.data
                ]
                if infers:
                    last = infers[-1]
                    line = {
                        "text": last.data["raw"],
                        "finish_reason": last.data.get("finish_reason"),
                        "prompt_tokens": last.prompt_tokens,
                        "completion_tokens": last.completion_tokens,
                    }
                else:
                    line = {"text": NOT_ASKED}
                lines.append(json.dumps(line, ensure_ascii=False))
                print(
                    f"{case.id:48} {record.status:15} {record.action or '-':9} "
                    f"asked {len(infers)}x {','.join(record.reasons)}",
                    flush=True,
                )
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} lines to {OUT.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
