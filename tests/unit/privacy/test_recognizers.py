"""The recognizer set against a labelled, generated set (tests/support/pii_samples.py),
and the masking's own guarantees: no planted value survives, the original comes back."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mir.privacy import Masking, find_pii
from tests.support import pii_samples as ps


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in find_pii(text)]


def test_recall_and_precision_on_a_labelled_set_of_250_strings():
    samples = ps.labelled(250, seed=7)
    assert len(samples) == 250 and sum(len(s.labels) for s in samples) >= 300
    scores = ps.score(samples, _found)
    for kind in ("email", "phone", "card", "iban"):
        assert scores[kind]["recall"] >= 0.98, (kind, scores[kind])
        assert scores[kind]["precision"] >= 0.98, (kind, scores[kind])
    # A name is recognized only where the text cues one (an honorific, "my name is", a
    # closing, a JSON key); a sixth of the planted names have no cue and are missed.
    assert scores["person"]["precision"] >= 0.98
    assert 0.75 <= scores["person"]["recall"] < 1.0, scores["person"]


def test_look_alikes_are_left_alone():
    rng = random.Random(3)
    text = " ".join(
        [
            "order A-4155552671 and ORD-2024-88123, on 2024-05-12 at 10:30,",
            f"ref {ps.card(rng, valid=False)}, account {ps.iban(rng, valid=False)},",
            "version v2.13.1, zip 94107, $1,234.56, tracking 1Z999AA10123456784",
            '{"maximum": 500, "minimum": 0}, Dear Support Team',
        ]
    )
    assert _found(text) == []


def test_an_iban_followed_by_a_capitalised_word_is_cut_at_the_iban():
    text = "pay DE89 3704 0044 0532 0130 00 AND thanks"
    assert _found(text) == [("iban", "DE89 3704 0044 0532 0130 00")]


def test_a_name_under_a_json_key_keeps_its_escapes():
    text = '{"customer_name": "Jos\\u00e9 O\\u0027Brien", "order_id": "A1"}'
    assert _found(text) == [("person", "Jos\\u00e9 O\\u0027Brien")]


_filler = st.text(alphabet="abc xyz,.:;-()0123456789\n", max_size=40)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), fillers=st.lists(_filler, min_size=4, max_size=4))
def test_masking_leaves_no_planted_value_and_restores_the_original(seed, fillers):
    rng = random.Random(seed)
    values = [ps.email(rng), ps.card(rng), ps.iban(rng)]
    text = (
        fillers[0] + " " + " ; ".join(f"{v} {f}" for v, f in zip(values, fillers[1:], strict=True))
    )
    masking = Masking(taken=text)
    masked = masking.mask(text, find_pii(text))
    for value in values:
        assert value not in masked
        assert value.replace(" ", "").replace("-", "") not in masked.replace(" ", "")
    assert masking.restore(masked) == (text, len(_found(text)))


def test_a_planted_placeholder_is_never_restored_into_a_value():
    text = "my mail <EMAIL_1> is really jane@example.com"
    masking = Masking(taken=text)
    masked = masking.mask(text, find_pii(text))
    assert masked == "my mail <EMAIL_1> is really <EMAIL_2>"
    assert masking.restore('{"to": "<EMAIL_1>", "cc": "<EMAIL_2>", "x": "<IBAN_9>"}') == (
        '{"to": "<EMAIL_1>", "cc": "jane@example.com", "x": "<IBAN_9>"}',
        1,
    )


def test_the_same_value_gets_the_same_placeholder():
    text = "jane@example.com, again jane@example.com, and omar@shop.io"
    masking = Masking(taken=text)
    assert masking.mask(text, find_pii(text)) == "<EMAIL_1>, again <EMAIL_1>, and <EMAIL_2>"
    assert masking.counts() == {"email": 2}


def test_huge_and_hostile_text_is_scanned_and_restored_whole():
    # 512 Ki characters (the runtime's bound on a caller's text) of digit groups and
    # near-emails: nothing is found, and the scan ends (pytest-timeout would say if not).
    soup = " ".join("1" for _ in range(1000)) + " a@b " + "-".join("12" * 3 for _ in range(99))
    text = (soup * (512 * 1024 // len(soup) + 1))[: 512 * 1024]
    assert [kind for kind, _ in _found(text)] == []
    # An answer that repeats one placeholder 100,000 times, among unknown ones.
    masking = Masking(taken="x")
    token = masking.placeholder("email", "jane@example.com")
    restored, n = masking.restore((token + " <EMAIL_99> ") * 100_000)
    assert n == 100_000 and restored.count("jane@example.com") == 100_000
    assert restored.count("<EMAIL_99>") == 100_000
