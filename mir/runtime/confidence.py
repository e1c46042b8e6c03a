"""Confidence from token probabilities (``decision.confidence_source: logprobs``).

A small model's self-reported confidence carries no signal (SmolLM2-135M wrote 1.0 on 9
of 9 inputs, FACTS.md), so review never triggers. With ``logprobs`` the runtime asks the
provider for token log probabilities and replaces the decision's confidence field with
the probability the model gave to the action it chose.

The rule, exactly:

1. The output text is spelled by the returned tokens (their texts, concatenated, give
   the text up to the end of the action value); each token's offset is the length of
   the tokens before it.
2. The action value's span is found by walking the top-level JSON object to the
   ``action_field`` key; the value must be a JSON string without escapes. The span runs
   from its first character through its closing quote (the quote is part of the choice:
   it is what makes ``ref`` differ from ``refund``).
3. Every token overlapping that span is a step of the choice. At each step the
   provider's alternatives (``top_logprobs``, plus the chosen token) are kept when they
   are *consistent*: they reproduce the text before the value that the token covers
   (e.g. `` "``), and what they add to the value read so far is a prefix of some
   allowed action followed by ``"``, or extends past such an action's closing quote.
   The step's probability is the chosen token's probability divided by the sum over
   the consistent alternatives: renormalised over the allowed actions, because the
   providers' numbers (llama.cpp's at least) are the raw distribution before the JSON
   grammar masks it, where tokens no allowed action could start carry most of the mass.
   A step with no alternatives returned keeps the chosen token's raw probability.
4. The confidence is the product of the steps' probabilities, in (0, 1].

Known approximation: an allowed continuation outside the provider's top-K is missing
from the denominator, which makes the confidence too high, never too low; the raw
(unrenormalised) product is recorded beside it so the two can be compared.

The model's own number does not count under this source: a proposal whose only problems
are on the confidence field (missing, 7777) is taken with the computed number instead.

When the provider returned no logprobs, or they cannot be mapped onto the action, the
model's reported number stays, and the event says why; the flow never fails for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mir.inference import ModelResponse, TokenLogprob
from mir.runtime.integrity import MAX_OUTPUT_BYTES, Verdict, parse_output

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


@dataclass(frozen=True)
class ActionProbability:
    """The chosen action's probability (``value``), or why there is none (``note``)."""

    value: float | None
    raw: float | None = None
    steps: tuple[float, ...] = ()
    note: str | None = None


def string_value_span(text: str, key: str) -> tuple[int, int] | None:
    """``(first, close)``: the offsets of the first character of the top-level string
    value of ``key`` and of its closing quote; None when there is no such plain string."""
    index = _skip(text, 0)
    if index >= len(text) or text[index] != "{":
        return None
    index += 1
    try:
        while True:
            index = _skip(text, index)
            if index >= len(text) or text[index] == "}":
                return None
            name, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index)
            if index >= len(text) or text[index] != ":":
                return None
            start = _skip(text, index + 1)
            value, end = _DECODER.raw_decode(text, start)
            if name == key:
                plain = isinstance(value, str) and text[start + 1 : end - 1] == value
                return (start + 1, end - 1) if plain else None
            index = _skip(text, end)
            if index < len(text) and text[index] == ",":
                index += 1
    except (json.JSONDecodeError, TypeError):
        return None


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def action_probability(
    text: str, tokens: Sequence[TokenLogprob] | None, action_field: str, actions: Iterable[str]
) -> ActionProbability:
    """The rule of this module's docstring, applied to one output."""
    if not tokens:
        return ActionProbability(None, note="the provider returned no token probabilities")
    span = string_value_span(text, action_field)
    if span is None:
        return ActionProbability(None, note=f"no plain string {action_field!r} in the output")
    first, close = span
    spelled = "".join(t.token for t in tokens)
    if spelled[: close + 1] != text[: close + 1]:
        return ActionProbability(None, note="the returned tokens do not spell the output")
    endings = tuple(f'{a}"' for a in actions)
    steps: list[float] = []
    raw = 0.0
    offset = 0
    for token in tokens:
        start, offset = offset, offset + len(token.token)
        if offset <= first or start > close or not token.token:
            continue
        raw += token.logprob
        before = text[start:first] if start < first else ""
        read = text[first:start] if start > first else ""
        steps.append(_step(token, before, read, endings))
    if not steps:
        return ActionProbability(None, note="no token covers the action")
    value = math.prod(steps)
    return ActionProbability(
        value=min(1.0, max(value, 0.0)), raw=min(1.0, math.exp(raw)), steps=tuple(steps)
    )


def _step(token: TokenLogprob, before: str, read: str, endings: tuple[str, ...]) -> float:
    alternatives = dict(token.top)
    alternatives[token.token] = token.logprob
    if len(alternatives) == 1:  # nothing to renormalise over: the raw probability
        return math.exp(token.logprob)
    total = 0.0
    for alt, logprob in alternatives.items():
        if len(alt) < len(before) or not alt.startswith(before):
            continue
        candidate = read + alt[len(before) :]
        if any(end.startswith(candidate) or candidate.startswith(end) for end in endings):
            total += math.exp(logprob)
    return math.exp(token.logprob) / total if total > 0 else math.exp(token.logprob)


def with_logprob_confidence(
    verdict: Verdict,
    response: ModelResponse,
    *,
    action_field: str,
    confidence_field: str,
    actions: Iterable[str],
    recheck: Callable[[Mapping[str, Any]], Verdict],
) -> tuple[Verdict, dict[str, Any] | None]:
    """The verdict on the proposal with the computed confidence (re-checked, so the
    integrity check and review routing judge the number that is used), and what to
    record about it in the validate event (None: nothing was computed, the proposal is
    invalid for other reasons)."""
    proposal = _proposal(verdict, response.text, confidence_field)
    if proposal is None:
        return verdict, None
    reported = proposal.get(confidence_field)
    found = action_probability(response.text, response.logprobs, action_field, actions)
    note: dict[str, Any] = {"requested": "logprobs", "reported": reported}
    if found.value is None:
        return verdict, {**note, "used": "reported", "note": found.note}
    computed = round(found.value, 6)
    decision = {**proposal, confidence_field: computed}
    note |= {
        "used": "logprobs",
        "logprobs": computed,
        "raw": round(found.raw or 0.0, 6),
        "steps": [round(p, 6) for p in found.steps],
    }
    return recheck(decision), note


def _proposal(verdict: Verdict, text: str, confidence_field: str) -> dict[str, Any] | None:
    """The decision the model proposed, if it is valid or wrong only in its confidence."""
    if verdict.ok:
        return dict(verdict.decision or {})
    if not verdict.problems or any(p.field != confidence_field for p in verdict.problems):
        return None
    parsed = parse_output(text, None, MAX_OUTPUT_BYTES)  # check_output parsed it already
    return parsed if isinstance(parsed, dict) else None
