"""Many signatures verified at once: over forked workers the answers are the same, in the
same order, as one after the other, bad ones included."""

from __future__ import annotations

import pytest

from mir.reviewers import batch, generate_key, make_statement


def checks(count: int) -> tuple[list[batch.Check], list[bool]]:
    ana, mallory = generate_key(), generate_key()
    made: list[batch.Check] = []
    expected: list[bool] = []
    for i in range(count):
        statement = make_statement(f"{i:032x}", {"i": i}, "approve", "ana", "now")
        signer = mallory if i % 7 == 3 else ana
        signature = signer.sign(statement)
        if i % 11 == 5:
            signature = signature[:-4] + "AAA="  # edited
        made.append((ana.public_key, statement.canonical(), signature))
        expected.append(signer is ana and i % 11 != 5)
    made.append(("ed25519:not-a-key", b"x", "AAAA"))
    made.append((ana.public_key, b"x", "not base64!"))
    return made, [*expected, False, False]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_answer_as_one_after_the_other_would(monkeypatch, workers):
    monkeypatch.setattr(batch, "PARALLEL_MIN", 10)
    monkeypatch.setattr(batch, "workers", lambda: workers)
    made, expected = checks(40)
    assert batch.worth_workers(len(made)) is (workers > 1)
    assert batch.verify_many(made) == expected
    assert batch._CHECKS == ()  # nothing left behind for the next call


def test_a_busy_machine_gets_no_workers(monkeypatch):
    monkeypatch.setattr(batch.os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    assert batch.workers() == 1 and not batch.worth_workers(10**6)
