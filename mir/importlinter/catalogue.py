"""Every lint rule a project can meet: mir's own boundary rules, then the import-linter
contract codes (``mir lint rules``, ``mir lint explain``)."""

from __future__ import annotations

Row = tuple[str, str, str]  # (code, name, summary)


def contract_rules() -> list[Row]:
    """(code, name, summary) of the import-linter contract codes, from their docs'
    first line ("IL001 importlinter-layers: a lower layer reaches a higher one.")."""
    from mir.importlinter.domain.rules import RULE_DOCS

    rows = []
    for code, doc in RULE_DOCS.items():
        head = doc.split("\n", 1)[0]
        name, _, summary = head.removeprefix(f"{code} ").partition(": ")
        rows.append((code, name, summary.rstrip(".")))
    return rows


def rule_catalogue() -> list[Row]:
    """mir's rules (``mir.boundaries.all_rules``), then the contract codes."""
    from mir.boundaries import all_rules

    own = [(rule.code, rule.name, rule.summary) for rule in all_rules()]
    return own + contract_rules()


def rule_catalogue_json() -> list[dict[str, str]]:
    """The catalogue as ``mir lint rules --json`` prints it: code, name and summary."""
    return [dict(zip(("code", "name", "summary"), row, strict=True)) for row in rule_catalogue()]


def rule_doc(code: str) -> str:
    """The documentation of a mir rule or an import-linter contract code, by code or
    name (any case); an unknown one is a usage error with the closest code or name."""
    from mir.boundaries import rule_for

    rule = rule_for(code)
    if rule is not None:
        return rule.doc
    from mir.importlinter.domain.rules import RULE_DOCS

    wanted = code.strip().upper()
    for il_code, name, _ in contract_rules():
        if wanted in (il_code, name.upper()):
            return RULE_DOCS[il_code]
    from mir.errors import UsageError, did_you_mean

    known = [word for row in rule_catalogue() for word in row[:2]]
    close = did_you_mean(code.upper() if code[:1].isalpha() else code, known)
    close = close or did_you_mean(code.replace("_", "-"), known)
    hint = f"did you mean `{close}`? " if close else ""
    raise UsageError(f"no rule '{code}'", hint=f"{hint}`mir lint rules` lists them")
