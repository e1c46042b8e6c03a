"""Checking the hash chain: every line re-hashed, every link and position checked."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mir.traces.domain import ChainBreak, IntegrityReport
from mir.traces.records import genesis, link


@dataclass(frozen=True)
class ChainLine:
    """One stored line: where it sits, its hash, and its event's canonical body."""

    segment: str
    n: int
    digest: str | None
    body: str
    event_id: str | None = None


def check_chain(
    lines: Iterable[ChainLine], recorded: Mapping[str, tuple[int, str]] | None = None
) -> IntegrityReport:
    """Verify lines sorted by (segment, n). ``recorded`` maps segment -> (lines, head hash)
    as noted at compaction, so removing a segment's *last* lines is detected too."""
    breaks: list[ChainBreak] = []
    heads: dict[str, str] = {}
    counts: dict[str, int] = {}
    expected_n, prev = 0, ""
    current: str | None = None
    total = 0

    def broken(line: ChainLine, problem: str) -> None:
        breaks.append(
            ChainBreak(
                segment=line.segment,
                line=line.n,
                event_id=line.event_id,
                problem=problem,
            )
        )

    for line in lines:
        total += 1
        if line.segment != current:
            current, expected_n, prev = line.segment, 0, genesis(line.segment)
        if line.n != expected_n:
            what = "line(s) missing before this one" if line.n > expected_n else "line repeated"
            broken(line, what)
        elif line.digest != link(prev, line.body):
            broken(line, "content or link does not match its hash (edited after writing)")
        expected_n, prev = line.n + 1, line.digest or ""
        heads[line.segment], counts[line.segment] = prev, expected_n
    for segment, (count, head) in (recorded or {}).items():
        if counts.get(segment, 0) != count or heads.get(segment) != head:
            breaks.append(
                ChainBreak(
                    segment=segment,
                    line=counts.get(segment, 0),
                    event_id=None,
                    problem=f"segment recorded {count} lines at compaction; lines were removed",
                )
            )
    digest = hashlib.sha256(
        "\n".join(f"{s}:{heads[s]}" for s in sorted(heads)).encode()
    ).hexdigest()
    return IntegrityReport(segments=len(heads), lines=total, breaks=tuple(breaks), digest=digest)
