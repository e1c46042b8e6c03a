"""Who may review: declared reviewers (``reviewers.toml``), their Ed25519 keys, signed
review statements, and web logins (public interface)."""

from mir.reviewers.batch import Check as SignatureCheck
from mir.reviewers.batch import verify_many, worth_workers
from mir.reviewers.domain import (
    Reviewer,
    Statement,
    canonical_json,
    decision_digest,
    make_statement,
)
from mir.reviewers.enrolment import Declared, NewKey, declare, make_key, roster_rows, set_login
from mir.reviewers.enrolment_words import ROSTER_COLUMNS, declared_line, key_lines, roster_cells
from mir.reviewers.keys import (
    KEY_ENV,
    KEY_FILE_ENV,
    SigningKey,
    default_key_path,
    generate_key,
    load_signing_key,
    verify_signature,
    write_private_key,
)
from mir.reviewers.logins import check_login, has_login, logins_path, set_password
from mir.reviewers.roster import (
    FILE_NAME,
    add_reviewer,
    declared_roles,
    describe,
    has_roster,
    load_reviewers,
    parse_reviewers,
    reviewer_named,
    roster_path,
)
from mir.reviewers.signing import Finding, SignedReview, judge_review, key_matches, sign_review

__all__ = [
    "FILE_NAME",
    "KEY_ENV",
    "KEY_FILE_ENV",
    "ROSTER_COLUMNS",
    "Declared",
    "Finding",
    "NewKey",
    "Reviewer",
    "SignatureCheck",
    "SignedReview",
    "SigningKey",
    "Statement",
    "add_reviewer",
    "canonical_json",
    "check_login",
    "decision_digest",
    "declare",
    "declared_line",
    "declared_roles",
    "default_key_path",
    "describe",
    "generate_key",
    "has_login",
    "has_roster",
    "judge_review",
    "key_lines",
    "key_matches",
    "load_reviewers",
    "load_signing_key",
    "logins_path",
    "make_key",
    "make_statement",
    "parse_reviewers",
    "reviewer_named",
    "roster_cells",
    "roster_path",
    "roster_rows",
    "set_login",
    "set_password",
    "sign_review",
    "verify_many",
    "verify_signature",
    "worth_workers",
    "write_private_key",
]
