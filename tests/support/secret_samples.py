"""Secret shapes as they show up in real text, for the redaction tests.

Each sample is (shape, text as a user, model or executor writes it, the secret inside
that text). A test passes the text through mir and greps for the secret: finding the
surrounding words is fine, finding the secret is a leak.

The environment-variable secrets are values with no recognisable shape: only their
variable's name says they are secret (``ENV_SECRETS`` is the environment to run with).
"""

from __future__ import annotations

GOOGLE_KEY = "AIza" + "SyB7x9Qm2Lp4Nc6Vd8Rf0Th3Jk5Wz1Ye7Ug"  # "AIza" + 35 characters
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0"
    ".dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk4"
)
PEM_BODY = "MIIEpAIBAAKCAQEA7bq9Zl3xkQw0vXr8Tn2Lm5Hs"

ENV_SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE",
    "API_KEY": "Zq8Lm3Np0Rs7Tv2Wx",
    "DB_PASS": "Mellon-Friend-42",
}
AWS_SECRET = ENV_SECRETS["AWS_SECRET_ACCESS_KEY"]
CUSTOM_PATTERN = "ACME-[0-9]{8}"

# (shape, text, secret)
SAMPLES: list[tuple[str, str, str]] = [
    ("bearer", "Authorization: Bearer abcDEF123456ghiJKL", "abcDEF123456ghiJKL"),
    ("bearer lowercase", "sent with bearer zyxwvu987654abc", "zyxwvu987654abc"),
    ("bearer mixed case", "header BeArEr mixedCase0987token", "mixedCase0987token"),
    ("openai key", "key sk-proj-A1b2C3d4E5f6G7h8I9j0K1", "sk-proj-A1b2C3d4E5f6G7h8I9j0K1"),
    ("anthropic key", "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0", "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0"),
    ("github token", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    ("slack token", "slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    ("aws access key id", "id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws session key id", "id ASIAIOSFODNN7SESSION", "ASIAIOSFODNN7SESSION"),
    ("stripe live key", "stripe sk_live_51HqLyjWDarjtT1zdp7dc", "sk_live_51HqLyjWDarjtT1zdp7dc"),
    ("stripe test key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe restricted key", "rk_live_9aB8cD7eF6gH5iJ4kL3m", "rk_live_9aB8cD7eF6gH5iJ4kL3m"),
    ("google api key", f"maps key {GOOGLE_KEY}", GOOGLE_KEY),
    ("jwt", f"session {JWT}", JWT),
    ("password colon", "password: Tr0ub4dor-horse", "Tr0ub4dor-horse"),
    ("password equals", "db_password=CorrectHorse9", "CorrectHorse9"),
    ("password json", '{"password": "s3cr3t pass phrase"}', "s3cr3t pass phrase"),
    ("pwd", "login pwd=letmein2024", "letmein2024"),
    ("api_key pair", "api_key: 9f8e7d6c5b4a3210", "9f8e7d6c5b4a3210"),
    ("token pair", "token=tok_abcdef123456", "tok_abcdef123456"),
    ("camelCase secret pair", "clientSecret: cs_zz9988776655", "cs_zz9988776655"),
    ("password in url", "postgres://admin:Pg-Passw0rd-77@db.internal:5432/shop", "Pg-Passw0rd-77"),
    ("basic auth", "Authorization: Basic YWRtaW46czNjcjN0LXBhc3M=", "YWRtaW46czNjcjN0LXBhc3M="),
    ("basic auth bare", "used basic YWRtaW46aHVudGVyMjAyNA== ok", "YWRtaW46aHVudGVyMjAyNA=="),
    (
        "pem private key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY,
    ),
    (
        "hugging face token",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    ),
    ("env AWS_SECRET_ACCESS_KEY", f"aws {AWS_SECRET}", AWS_SECRET),
    ("env API_KEY", f"value {ENV_SECRETS['API_KEY']} here", ENV_SECRETS["API_KEY"]),
    ("env DB_PASS", f"db {ENV_SECRETS['DB_PASS']}", ENV_SECRETS["DB_PASS"]),
    ("project pattern", "customer ref ACME-20261130", "ACME-20261130"),
]  # fmt: skip
