"""The recognizer set: emails, phone numbers (libphonenumber's matcher), payment card
numbers (issuer prefix and Luhn), IBANs (country length and mod-97, python-stdnum) and
person names where the text says so (an honorific, "my name is", a JSON key such as
``"customer_name"``). All offline; no model.

Presidio's analyzer was the first choice; it needs a spaCy language model, and none is
on the package index this project installs from (``en_core_web_*`` ship as GitHub
downloads), so it cannot run offline here. Names in free text with no such cue are not
recognized: the README says so.
"""

from __future__ import annotations

import re

from mir.privacy.domain import Finding, settle

EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
)
# A run of digit groups split by single spaces or dashes; a card number is 13-19 of its
# digits from one group's start to another's end (a run may hold an amount after it).
DIGIT_RUN = re.compile(r"(?<![\w-])\d+(?:[ -]\d+)*(?![\w-])")
# Issuer prefixes: Visa, Mastercard, American Express, Discover, JCB, Diners, UnionPay,
# Maestro.
CARD_PREFIX = re.compile(
    r"^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|6(?:011|5|4[4-9])|35|3(?:0[0-5]|[689])|62"
    r"|50(?:18|20|38)|5893|6304|676[1-3]|6759)"
)
# Two letters, two check digits, then 11-30 letters or digits, in groups of up to four
# that a single space may separate (the printed form) or not (the compact one).
IBAN = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![\w])")
_TITLE = r"[A-Z][a-z]+(?:['-][A-Z]?[a-z]+)?"
_NAME = rf"{_TITLE}(?: {_TITLE}){{0,2}}"
PERSON_CUES = (
    re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.? ({_NAME})"),
    re.compile(rf"\b(?i:my name is|name:|signed,?|regards,?|sincerely,?)\s+({_NAME})"),
)
# A JSON string under a key that names a person (the rendered input of a prompt).
PERSON_KEY = re.compile(
    r'"(?i:name|full_?name|first_?name|last_?name|customer(?:_name)?|contact(?:_name)?|'
    r'recipient(?:_name)?|sender(?:_name)?|holder(?:_name)?|account_holder|person)"'
    r'\s*:\s*"((?:[^"\\\n]|\\.){1,120})"'
)


def find_pii(text: str, phone_region: str = "US") -> list[Finding]:
    """Every recognized value in ``text``, non-overlapping (``settle``)."""
    found: list[Finding] = [Finding("email", m.start(), m.end()) for m in EMAIL.finditer(text)]
    found += _ibans(text)
    # Digits inside an IBAN-shaped token (one whose check digits fail, too) are no card
    # and no phone number.
    shaped = [(m.start(), m.end()) for m in IBAN.finditer(text)]
    found += [
        f
        for f in (*_cards(text), *_phones(text, phone_region))
        if not any(a <= f.start and f.end <= b for a, b in shaped)
    ]
    for cue in PERSON_CUES:
        found += [Finding("person", m.start(1), m.end(1)) for m in cue.finditer(text)]
    found += [Finding("person", m.start(1), m.end(1)) for m in PERSON_KEY.finditer(text)]
    return settle(found)


def _cards(text: str) -> list[Finding]:
    from stdnum import luhn

    found = []
    for run in DIGIT_RUN.finditer(text):
        body = run.group(0)
        groups = [(m.start(), m.end()) for m in re.finditer(r"\d+", body)]
        i = 0
        while i < len(groups):
            windows, digits = [], ""
            for j in range(i, len(groups)):  # at most 19 digits: a few groups per start
                digits += body[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                if len(digits) >= 13:
                    windows.append((j, digits))
            for j, number in reversed(windows):  # the longest valid window wins
                if CARD_PREFIX.match(number) and luhn.is_valid(number):
                    found.append(
                        Finding("card", run.start() + groups[i][0], run.start() + groups[j][1])
                    )
                    i = j
                    break
            i += 1
    return found


def _ibans(text: str) -> list[Finding]:
    """IBANs; a candidate that swallowed a following word (``... 00 AND``) is shortened
    group by group until it is valid."""
    from stdnum import iban

    found = []
    for m in IBAN.finditer(text):
        candidate = m.group(0)
        while len(candidate.replace(" ", "")) >= 15:
            if _valid_iban(iban, candidate):
                found.append(Finding("iban", m.start(), m.start() + len(candidate)))
                break
            head, space, _ = candidate.rpartition(" ")
            candidate = head if space else candidate[:-1]
    return found


def _valid_iban(iban, candidate: str) -> bool:
    """The country's length and the mod-97 check digits; not the national check digits
    inside the account number (``check_country``), which not every bank's numbers pass."""
    try:
        iban.validate(candidate, check_country=False)
    except ValueError:  # stdnum's ValidationError is one
        return False
    return True


def _phones(text: str, region: str) -> list[Finding]:
    """libphonenumber's valid numbers, less those glued to a word (``A-2049889716`` is an
    order id)."""
    import phonenumbers

    matcher = phonenumbers.PhoneNumberMatcher(
        text, region, leniency=phonenumbers.Leniency.VALID, max_tries=1000
    )
    return [Finding("phone", m.start, m.end) for m in matcher if not _glued(text, m.start)]


def _glued(text: str, start: int) -> bool:
    before = text[max(0, start - 2) : start]
    return bool(re.search(r"[A-Za-z0-9_]-?$", before))
