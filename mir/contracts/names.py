"""Names a user writes that become Python names (a capability, an agent, a rubric)."""

from __future__ import annotations

import keyword
from typing import Annotated

from pydantic import AfterValidator


def _identifier(value: str) -> str:
    if not value.isidentifier() or keyword.iskeyword(value):
        raise ValueError(f"{value!r} is not a valid Python identifier")
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]
