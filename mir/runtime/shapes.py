"""Hostile shapes, refused cheaply: nesting depth and number size, on raw text and on values.

A model (or a caller) can hand the runtime JSON that is valid yet poisonous: 400 levels
of ``[[[`` crash every recursive walk (``RecursionError``), a 310-digit integer overflows
``float()``, a 5,000-digit one makes ``json.loads`` itself raise ``ValueError``. Both
checks here are linear and non-recursive, so they run BEFORE any deep parsing or walking,
and every later step (schema check, limits, hashing, traces, templates) only ever sees
values within these bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mir.runtime.records import Problem, ReasonCode

# Decisions and tickets are a handful of flat fields; 32 levels is far beyond any real
# schema and far below Python's recursion limit (every walker stays safe).
MAX_DEPTH = 32
# Characters of one number token (sign, digits, point, exponent). 40 covers any float or
# 64-bit integer a real decision holds; a longer token is an attack, not an amount.
MAX_NUMBER_CHARS = 40
# Bits of an integer value (~ 10**38): as big as MAX_NUMBER_CHARS allows in digits.
# Floats need no bound of their own: they cannot overflow (1e400 parses as inf, which
# the integrity check refuses as non-finite).
MAX_INT_BITS = 128
# Characters of text (strings and keys) in one caller value (an input, a context). Every
# flow stores its input and context in one trace line, and the store's reader (DuckDB's
# read_json) refuses a line over 16 MB: one bigger input made `mir traces list` fail for
# every flow. 512 Ki characters stay under that even when each escapes to 6 bytes.
MAX_TEXT_CHARS = 512 * 1024

_NUMBER_CHARS = frozenset("0123456789+-.eE")


def scan_text(text: str, max_depth: int = MAX_DEPTH) -> Problem | None:
    """One pass over raw JSON text: the first nesting or number-size problem, or None.

    Brackets and digits inside strings do not count (escapes are skipped), so a reason
    like ``"[[[["`` or an order id ``"123456..."`` passes.
    """
    depth = 0
    in_string = escaped = False
    run = 0  # length of the current number token
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in _NUMBER_CHARS:
            run += 1
            if run > MAX_NUMBER_CHARS:
                return number_problem(f"a number longer than {MAX_NUMBER_CHARS} characters")
            continue
        run = 0
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return depth_problem(max_depth)
        elif char in "]}":
            depth -= 1
    return None


def shape_problem(value: Any, max_depth: int = MAX_DEPTH) -> Problem | None:
    """The same bounds on an already-built value (a caller's mapping, a rule's decision,
    a decision read back from a trace), walked with an explicit stack: never recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    chars = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping | list | tuple):
            if depth >= max_depth:
                return depth_problem(max_depth)
            if isinstance(node, Mapping):
                chars += sum(len(k) for k in node if isinstance(k, str))
                children = list(node.values())
            else:
                children = list(node)
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, str):
            chars += len(node)
        elif isinstance(node, int) and node.bit_length() > MAX_INT_BITS:
            return number_problem(f"an integer of {node.bit_length()} bits")
        if chars > MAX_TEXT_CHARS:
            return too_large_problem()
    return None


def too_large_problem() -> Problem:
    return Problem(
        code=ReasonCode.OUTPUT_TOO_LARGE,
        message=f"more than {MAX_TEXT_CHARS} characters of text",
    )


def stored_form(value: Any) -> Any:
    """What a trace may keep of a refused caller value: the value itself, or, when it is
    too large to store, a one-key stand-in saying so (never the bytes)."""
    problem = shape_problem(value)
    if problem is not None and problem.code == ReasonCode.OUTPUT_TOO_LARGE:
        return {"[omitted]": problem.message}
    return value


def depth_problem(max_depth: int) -> Problem:
    return Problem(
        code=ReasonCode.TOO_DEEP,
        message=f"nested deeper than {max_depth} levels; answer with a flat JSON object",
    )


def number_problem(what: str) -> Problem:
    return Problem(
        code=ReasonCode.NUMBER_TOO_LARGE,
        message=f"{what}: numbers must be ordinary amounts (at most {MAX_NUMBER_CHARS} characters)",
    )
