"""Measure the embedded model on this desk's tickets: load time, speed, validity.

    python measure_model.py                # 10 decisions: the 5 sample tickets + 5 variants
    python measure_model.py --threads 1    # llama.cpp threads (default: all cores, max 8)

Renders the real prompt (agents/triage.j2) with the real schema (TriageDecision) and
calls mir's llama provider directly, so no ledger or trace is written. "valid" means
what mir's integrity check would accept: strict JSON, the schema, the 200 EUR limit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import jinja2
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import ValidationError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mir.inference import LlamaProvider, Message, ModelRequest  # noqa: E402
from mir.inference.llama import ModelCache  # noqa: E402

from capabilities.refunds.adapters import load_ticket_context  # noqa: E402
from capabilities.refunds.domain import TriageDecision  # noqa: E402

VARIANTS = [
    ("A-1001", "C-001", "wrong_item", 24.9, "You sent me a blue mug, I ordered a red one."),
    ("A-1002", "C-002", "not_delivered", 149.0, "The parcel never came."),
    ("A-1003", "C-003", "damaged", 20.0, "The lid was cracked when I opened the box."),
    ("A-1004", "C-004", "changed_mind", 899.0, "I found it cheaper elsewhere."),
    ("A-1003", "C-003", "other", 10.0, "Can I get a discount for next time?"),
]


def tickets() -> list[dict]:
    samples = [json.loads(p.read_text()) for p in sorted((HERE / "inputs").glob("*.json"))]
    extra = [
        dict(
            zip(
                ("order_id", "customer_id", "category", "requested_amount", "message"),
                v,
                strict=True,
            )
        )
        for v in VARIANTS
    ]
    return samples + [{**t, "ticket_id": f"T-9{i}"} for i, t in enumerate(extra)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    contract = yaml.safe_load((HERE / "capabilities/refunds/agents/triage.yaml").read_text())
    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    template = env.from_string((HERE / "capabilities/refunds/agents/triage.j2").read_text())
    schema = TriageDecision.model_json_schema()
    route = contract["routes"][0]
    cache = ModelCache()
    provider = LlamaProvider(route["model"], n_ctx=1024, n_threads=args.threads, cache=cache)
    started = time.perf_counter()
    model = provider.loaded()
    print(f"model {model.path.name}, chat format {model.chat_format}, threads {provider.n_threads}")
    print(f"load: {(time.perf_counter() - started) * 1000:.0f} ms")

    rows = []
    for ticket in tickets():
        context = load_ticket_context(ticket)
        scope = contract["scope"]["input"]
        prompt = template.render(
            mission=contract["mission"],
            input={k: v for k, v in ticket.items() if k in scope},
            context=context,
            actions=contract["actions"],
            schema=schema,
            errors=[],
        ).strip()
        messages = (Message(role="user", content=prompt),)
        # Prompt-only pass (1 token) to split prompt processing from generation speed.
        # reset() empties llama.cpp's prefix cache, so each call pays the full prompt.
        model.llama.reset()
        warm = provider.complete(ModelRequest(messages=messages, max_tokens=1))
        model.llama.reset()
        response = provider.complete(
            ModelRequest(messages=messages, json_schema=schema, max_tokens=route["max_tokens"])
        )
        try:
            decision = TriageDecision.model_validate(json.loads(response.text))
        except (json.JSONDecodeError, ValidationError):
            shaped, valid, action = False, False, "-"
        else:
            shaped, action = True, decision.action
            valid = action != "refund" or decision.amount <= 200
        gen_s = max(response.latency_ms - warm.latency_ms, 1.0) / 1000
        rows.append((ticket["ticket_id"], response, warm, valid, action, gen_s, shaped))
        print(
            f"{ticket['ticket_id']:7} {ticket['category']:14} {ticket['requested_amount']:>6} -> "
            f"{action:8} valid={valid!s:5} finish={response.finish_reason} "
            f"tokens={response.prompt_tokens}+{response.completion_tokens} "
            f"{response.latency_ms:.0f} ms"
        )

    prompt_rate = statistics.median(w.prompt_tokens / (w.latency_ms / 1000) for _, _, w, *_ in rows)
    gen_rate = statistics.median(r.completion_tokens / g for _, r, _, _, _, g, _ in rows)
    latency = statistics.median(r.latency_ms for _, r, *_ in rows)
    fastest = min(r.latency_ms for _, r, *_ in rows)
    valid = sum(1 for row in rows if row[3])
    shaped = sum(1 for row in rows if row[6])
    print(f"schema-valid JSON: {shaped}/{len(rows)}; also within the 200 EUR limit: {valid}")
    print(f"model loads: {cache.loads}")
    print(
        f"decision: fastest {fastest:.0f} ms, median {latency:.0f} ms; median rates: "
        f"prompt {prompt_rate:.0f} tok/s, generation {gen_rate:.0f} tok/s (constrained)"
    )


if __name__ == "__main__":
    main()
