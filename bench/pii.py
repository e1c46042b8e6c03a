"""Personal data masking: what ``mask`` costs per prompt, before it leaves for a model.

    python bench/pii.py [--prompts 300] [--rounds 5]

Over seeded prompts of about 2 kB shaped like a rendered support prompt (mission,
actions, the input as JSON with a message holding 0-4 personal values among look-alikes,
the decision schema), best of ``--rounds``:

- ``mask_request`` (every recognizer over every message, placeholders minted) and the
  answer's ``restore``;
- references measured in the same run: the trace store's secret redactor over the same
  text (``Redactor.text``: 30 secret shapes in one regex, what every stored event pays),
  and the email pattern alone (the cheapest recognizer).

Prints one table (ms per prompt and the ratio to each reference). Exits 1 when masking
takes more than 5 ms per 2 kB prompt.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mir.inference import Message, ModelRequest  # noqa: E402
from mir.privacy import PiiSettings, mask_request  # noqa: E402
from mir.privacy.recognizers import EMAIL  # noqa: E402
from mir.traces.redaction import Redactor  # noqa: E402
from tests.support import pii_samples as ps  # noqa: E402

TARGET_MS = 5.0
SCHEMA = {
    "type": "object",
    "required": ["action", "confidence", "amount", "reason"],
    "properties": {
        "action": {"enum": ["refund", "deny", "escalate"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "amount": {"type": "number", "minimum": 0, "maximum": 500},
        "reason": {"type": "string", "maxLength": 80},
    },
}


def prompt(rng: random.Random) -> ModelRequest:
    sample = ps.labelled(2, seed=rng.randint(0, 10**9))[1].text  # the second holds values
    filler = " ".join(ps.decoy(rng) for _ in range(12))
    message = f"{sample} {filler}"
    user = (
        "Decide what to do with one refund request: refund it, deny it, or escalate it.\n"
        "- refund: Refund the amount.\n- deny: Deny the request.\n- escalate: A human.\n"
        f"Request:\n{json.dumps({'order_id': 'ORD-1', 'amount': 40, 'message': message})}\n"
        f"Answer with one JSON object matching this schema:\n{json.dumps(SCHEMA)}\n"
    )
    while len(user) < 2000:
        user += f"Note: {ps.decoy(rng)}.\n"
    return ModelRequest(
        messages=(
            Message(role="system", content="You are a careful support agent."),
            Message(role="user", content=user[:2048]),
        )
    )


def best(fn, items, rounds: int) -> float:
    """Best mean ms per item over ``rounds``."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for item in items:
            fn(item)
        times.append((time.perf_counter() - start) * 1000 / len(items))
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(11)
    requests = [prompt(rng) for _ in range(args.prompts)]
    settings = PiiSettings()
    mask_request(requests[0], settings)  # imports phonenumbers and stdnum once
    texts = ["\n".join(m.content for m in r.messages) for r in requests]
    redactor = Redactor()

    def mask_and_restore(request: ModelRequest) -> None:
        masked, masking = mask_request(request, settings)
        masking.restore(masked.messages[-1].content)

    masked_values = sum(sum(mask_request(r, settings)[1].counts().values()) for r in requests)
    mask_ms = best(mask_and_restore, requests, args.rounds)
    redact_ms = best(redactor.text, texts, args.rounds)
    email_ms = best(lambda t: list(EMAIL.finditer(t)), texts, args.rounds)
    size = sum(len(t) for t in texts) / len(texts)
    print(f"{args.prompts} prompts of {size:,.0f} characters, {masked_values} values masked")
    print(f"{'measure':<44} {'ms/prompt':>10} {'x redactor':>11} {'x email re':>11}")
    for name, ms in [
        ("mask_request + restore (mir.privacy)", mask_ms),
        ("reference: secret redactor (Redactor.text)", redact_ms),
        ("reference: email pattern alone", email_ms),
    ]:
        print(f"{name:<44} {ms:>10.3f} {ms / redact_ms:>10.2f}x {ms / email_ms:>10.1f}x")
    ok = mask_ms <= TARGET_MS
    print(f"target: masking <= {TARGET_MS} ms per 2 kB prompt: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
