"""What the infer event keeps of a prompt: bounded, writable, and its template's hash."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from mir.inference import Message
from mir.runtime.prompting import RenderedPrompt


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_the_traced_prompt_is_bounded_and_always_encodable(text, limit):
    prompt = RenderedPrompt(
        messages=(Message(role="user", content=text),), version="3+abc123def456"
    )
    traced = prompt.traced(limit)
    assert traced["template"] == "abc123def456"
    assert len(traced["text"]) <= limit
    traced["text"].encode("utf-8")  # lone surrogates escaped: every store can write it
    json.dumps(traced)
    escaped = text.encode("utf-8", "backslashreplace").decode("utf-8")
    assert ("text_chars" in traced) == (len(escaped) > limit)
    assert escaped.startswith(traced["text"])
