"""A labelled set of strings holding personal data, generated (seeded): the values are
built by this module's own arithmetic (Luhn and mod-97 check digits computed here, not
by the recognizers' libraries), planted among look-alikes that are not personal data
(order ids, dates, amounts, numbers with a wrong check digit).

``labelled(n)`` gives ``n`` samples; ``score`` measures recall and precision per kind.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

FIRST = ["Ana", "Jane", "Omar", "Lena", "Kofi", "Mei", "Lucas", "Priya", "Sven", "Maria"]
LAST = ["Lopez", "Doe", "Haddad", "Fischer", "Mensah", "Chen", "Silva", "Patel", "Berg", "Rossi"]
US_AREAS = ["212", "415", "617", "312", "646", "202", "503", "206", "305", "713"]


@dataclass
class Sample:
    text: str
    labels: list[tuple[str, str]]  # (kind, the exact planted text)


def _luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:  # doubled: the check digit will be appended to the right
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def card(rng: random.Random, valid: bool = True) -> str:
    prefix, length = rng.choice(
        [("4", 16), ("51", 16), ("55", 16), ("37", 15), ("6011", 16), ("2221", 16), ("6759", 16)]
    )
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    check = _luhn_digit(body)
    if not valid:
        check = str((int(check) + rng.randint(1, 9)) % 10)
    digits = body + check
    style = rng.choice(["spaces", "dashes", "compact"])
    if style == "compact":
        return digits
    sep = " " if style == "spaces" else "-"
    groups = [4, 6, 5] if length == 15 else [4, 4, 4, 4]
    out, at = [], 0
    for g in groups:
        out.append(digits[at : at + g])
        at += g
    return sep.join(out)


def _iban_check(country: str, bban: str) -> str:
    moved = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in moved))
    return f"{98 - number % 97:02d}"


def iban(rng: random.Random, valid: bool = True) -> str:
    digits = lambda n: "".join(rng.choice(string.digits) for _ in range(n))  # noqa: E731
    letters = lambda n: "".join(rng.choice(string.ascii_uppercase) for _ in range(n))  # noqa: E731
    country, bban = rng.choice(
        [
            ("DE", lambda: digits(18)),
            ("GB", lambda: letters(4) + digits(14)),
            ("FR", lambda: digits(23)),
            ("NL", lambda: letters(4) + digits(10)),
            ("ES", lambda: digits(20)),
        ]
    )
    bban = bban()
    check = _iban_check(country, bban)
    if not valid:
        check = f"{(int(check) + rng.randint(1, 50)) % 97 + 2:02d}"
        if check == _iban_check(country, bban):
            check = f"{(int(check) + 1) % 97 + 2:02d}"
    compact = country + check + bban
    if rng.random() < 0.5:
        return compact
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def email(rng: random.Random) -> str:
    first, last = rng.choice(FIRST).lower(), rng.choice(LAST).lower()
    local = rng.choice(
        [f"{first}.{last}", f"{first}{rng.randint(1, 99)}", f"{first}+orders", f"{first}_{last}"]
    )
    domain = rng.choice(["example.com", "mail.example.co.uk", "shop.io", "post.example.de"])
    return f"{local}@{domain}"


def phone(rng: random.Random) -> str:
    area = rng.choice(US_AREAS)
    exchange = str(rng.randint(2, 9)) + f"{rng.randint(0, 99):02d}"
    if exchange[1:] == "11":
        exchange = exchange[0] + "23"
    line = f"{rng.randint(0, 9999):04d}"
    return rng.choice(
        [
            f"({area}) {exchange}-{line}",
            f"{area}-{exchange}-{line}",
            f"+1 {area} {exchange} {line}",
            f"+1-{area}-{exchange}-{line}",
            f"+44 20 7946 {rng.randint(0, 9999):04d}",
            f"+49 30 {rng.randint(2000000, 9999999)}",
            f"{area}.{exchange}.{line}",
            f"+1{area}{exchange}{line}",
        ]
    )


def person(rng: random.Random) -> tuple[str, str]:
    """(the text with its cue, the name)."""
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    cue = rng.choice(
        [
            "Regards, {}.",
            "my name is {} and",
            "Mr. {} wrote",
            '"customer_name": "{}"',
            "Dr. {}",
            "{} called about it",  # no cue: not recognized (the README says so)
        ]
    )
    return cue.format(name), name


def decoy(rng: random.Random) -> str:
    """Text that is not personal data, though it looks like some."""
    return rng.choice(
        [
            f"order ORD-{rng.randint(2020, 2026)}-{rng.randint(10000, 99999)}",
            f"order A-{rng.randint(10**9, 10**10 - 1)}",
            f"on {rng.randint(2020, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            f"amount ${rng.randint(1, 9)},{rng.randint(100, 999)}.{rng.randint(0, 99):02d}",
            f"card ending {rng.randint(1000, 9999)}",
            f"ref {card(rng, valid=False)}",
            f"account {iban(rng, valid=False)}",
            f"tracking 1Z{rng.randint(10**15, 10**16 - 1)}",
            f"version v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
            f"zip {rng.randint(10000, 99999)}, {rng.randint(1, 40)} items",
            "Dear Support Team, Thank You",
            '{"maximum": 500, "minimum": 0, "type": "number"}',
            f"at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} UTC",
        ]
    )


def labelled(n: int = 250, seed: int = 7) -> list[Sample]:
    """``n`` samples: four in five hold 1-3 planted values, the rest only decoys."""
    rng = random.Random(seed)
    makers = {"email": email, "phone": phone, "card": card, "iban": iban}
    samples = []
    for i in range(n):
        parts, labels = [decoy(rng)], []
        if i % 5:
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice([*makers, "person"])
                if kind == "person":
                    text, name = person(rng)
                    parts.append(text)
                    labels.append(("person", name))
                else:
                    value = makers[kind](rng)
                    parts.append(f"{rng.choice(['contact', 'use', 'pay to', 'see'])} {value}")
                    labels.append((kind, value))
        parts.append(decoy(rng))
        rng.shuffle(parts)
        samples.append(Sample(text=", ".join(parts) + ".", labels=labels))
    return samples


def score(samples: list[Sample], find) -> dict[str, dict[str, float]]:
    """Recall and precision per kind: a finding counts when its text is exactly a planted
    value of its kind (``find(text) -> [(kind, found_text)]``)."""
    tally: dict[str, dict[str, int]] = {}
    for sample in samples:
        expected = list(sample.labels)
        for kind, found in find(sample.text):
            t = tally.setdefault(kind, {"tp": 0, "fp": 0, "fn": 0})
            if (kind, found) in expected:
                expected.remove((kind, found))
                t["tp"] += 1
            else:
                t["fp"] += 1
        for kind, _ in expected:
            tally.setdefault(kind, {"tp": 0, "fp": 0, "fn": 0})["fn"] += 1
    return {
        kind: {
            "recall": t["tp"] / max(1, t["tp"] + t["fn"]),
            "precision": t["tp"] / max(1, t["tp"] + t["fp"]),
            **t,
        }
        for kind, t in sorted(tally.items())
    }
