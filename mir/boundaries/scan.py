"""The fast import extractor: one compiled regex over the source, no ``ast``.

Why not ``ast.parse``: building Python AST objects for every file of a 4,000-module
project costs ~15 s on this class of machine, ~40x a regex pass. The scan below runs in
the regex engine (C) and touches Python only once per string literal, comment and
import statement.

Why it is exact for code that parses: ``import`` is a hard keyword that can only appear
in an import statement, so every ``import`` token outside strings and comments *is* one
(``from X import`` is matched as a whole first). Strings (every prefix, triple quotes,
escapes) and comments are consumed as skip tokens, so imports in docstrings are never
seen. ``if TYPE_CHECKING:`` blocks are tracked by indentation, checked against real
logical line starts (not inside brackets, strings or backslash continuations).
``tests/unit/boundaries/test_scan_differential.py`` holds it to ``extract_imports_ast``.

Columns are UTF-8 byte offsets, like ``ast``'s ``col_offset``.
"""

from __future__ import annotations

import codecs
import re
import symtable
from functools import cache

from mir.boundaries.imports import ImportRef, resolve_relative

# whitespace inside one logical line: blanks, tabs, form feeds, backslash continuations
_WS = r"(?:[ \t\f]|\\\r?\n)"
_STRINGS = (
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)
# One match = everything boring (code without the three keywords, strings, comments)
# up to the next keyword. Possessive, so a file without more keywords fails in one pass;
# a lone quote (unterminated string in a broken file) is skipped rather than stopping.
_BORING = rf"[^\"'#ifT]+|{_STRINGS}|\#[^\n]*|(?!(?<!\w)(?:import|from|TYPE_CHECKING)\b)[ifT]|[\"']"
_REST_PATTERN = rf"(?:{_WS}|[^\n;#\\])*"
# One match per keyword: the boring stretch before it, then the whole statement when it
# is one (``from`` can also be ``yield from`` / ``raise ... from``), so each import
# costs one regex call and no Python-level tokenising.
_NEXT_KEYWORD_PATTERN = (
    rf"(?:{_BORING})*+(?:"
    rf"(?P<from>from)(?=[\s.\\]){_WS}*(?P<fmod>[\w.](?:[\w.]|{_WS})*?){_WS}*(?<![\w])import\b"
    rf"{_WS}*(?:\((?P<paren>(?:\#[^\n]*|[^)#])*)\)|(?P<frest>{_REST_PATTERN}))"
    rf"|(?P<import>import)\b(?P<irest>{_REST_PATTERN})"
    rf"|(?P<tc>TYPE_CHECKING)\b"
    rf"|from\b)"
)
# ``match.lastgroup`` (the branch taken) -> the group where its keyword starts
_KEYWORD_GROUP = {"paren": "from", "frest": "from", "irest": "import", "tc": "tc"}
_TC_PREFIX = re.compile(r"([ \t\f]*)(?:el)?if(?:[ \t\f(])[ \t\f(]*(?:\w+[ \t\f]*\.[ \t\f]*)*")
_TC_SUFFIX = re.compile(r"[ \t\f)]*:")
_COMMENT = re.compile(r"#[^\n]*")
_SPACE = re.compile(r"[\s\\]+")
_BRACKETS_PATTERN = rf"\#[^\n]*|{_STRINGS}|[()\[\]{{}}]"
_LINE_START = re.compile(r"^([ \t\f]*)[^ \t\f\n#]", re.MULTILINE)
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
# An ignore comment: the marker, then the codes in brackets, then an optional reason; a
# marker without brackets is reported (MIR304). Searched for in comment tokens only.
_IGNORE = re.compile(r"#[ \t]*mir:[ \t]*ignore\b(?:\[([^\]\n]*)\])?")
_STRING_OR_COMMENT_PATTERN = rf"{_STRINGS}|\#[^\n]*"

IgnoreRow = tuple[int, tuple[str, ...]]  # (line, codes); no codes: a malformed directive


@cache
def _next_keyword() -> re.Pattern[str]:
    """Compiled on first use: a cached lint run never scans, so never pays for it."""
    return re.compile(_NEXT_KEYWORD_PATTERN, re.DOTALL)


@cache
def _brackets() -> re.Pattern[str]:
    return re.compile(_BRACKETS_PATTERN, re.DOTALL)


def decode_source(source: bytes) -> str:
    """Text of a Python source file, honouring a BOM and a PEP 263 coding cookie.

    Raises ``SyntaxError`` when the bytes cannot be decoded, as ``ast.parse`` does.
    """
    encoding = "utf-8"
    bom = source.startswith(codecs.BOM_UTF8)
    if bom:
        source = source[3:]
    for line in source.split(b"\n", 2)[:2]:
        match = _CODING.match(line)
        if match:
            encoding = match.group(1).decode("ascii")
            break
        if line.strip() and not line.lstrip().startswith(b"#"):
            break  # the cookie may only be on line 1 or 2, and only in comments
    if bom and encoding != "utf-8":
        # CPython's tokenizer: with a BOM the cookie must name utf-8 (normalised its way)
        normal = encoding.lower().replace("_", "-")
        if normal != "utf-8" and not normal.startswith("utf-8-"):
            error = SyntaxError(f"encoding problem: {encoding} with BOM")
            error.lineno = 1
            raise error
        encoding = "utf-8"
    try:
        return source.decode(encoding)
    except LookupError as exc:
        raise SyntaxError(f"unknown encoding: {encoding}") from exc
    except UnicodeDecodeError as exc:
        error = SyntaxError(f"cannot decode source as {encoding}: {exc.reason}")
        error.lineno = source.count(b"\n", 0, exc.start) + 1
        raise error from exc


def extract_imports(source: bytes | str, importer: str, is_package: bool) -> list[ImportRef]:
    """Every import in ``source`` (module ``importer``), in source order.

    Same result as ``extract_imports_ast`` on any source that parses; on a source that
    does not (newer syntax, a typo) it still returns the imports it can see, so their
    boundaries are checked. Raises ``SyntaxError`` only when bytes cannot be decoded;
    whether a file *parses* is a separate, cached question (``check_syntax``).
    """
    return [ImportRef(*row) for row in scan_imports(source, importer, is_package)]


ImportRow = tuple[str, tuple[str, ...], int, int, bool, bool]


def scan_imports(source: bytes | str, importer: str, is_package: bool) -> list[ImportRow]:
    """``extract_imports`` as plain tuples in ``ImportRef`` field order (the lint
    pipeline caches and ships these between processes; tuples are cheaper)."""
    text = decode_source(source) if isinstance(source, bytes) else source
    if "import" not in text:
        return []
    text = _unix_newlines(text)
    rows: list[ImportRow] = []
    append = rows.append
    blocks: list[tuple[int, int]] = []  # TYPE_CHECKING bodies as (start, end) offsets
    line, counted_to, position = 1, 0, 0
    match_next = _next_keyword().match
    count, rfind = text.count, text.rfind
    while (match := match_next(text, position)) is not None:
        position = match.end()
        kind = match.lastgroup  # the last group that took part names the branch
        if kind is None:  # ``yield from`` / ``raise ... from``
            continue
        start = match.start(_KEYWORD_GROUP[kind])
        line += count("\n", counted_to, start)
        counted_to = start
        line_start = rfind("\n", 0, start) + 1
        prefix = text[line_start:start]
        if kind == "tc":
            header = _TC_PREFIX.fullmatch(prefix)
            colon = _TC_SUFFIX.match(text, position)
            if header is not None and colon is not None:
                blocks.append(_type_checking_body(text, colon.end(), header.group(1)))
            continue
        column = len(prefix) if prefix.isascii() else len(prefix.encode("utf-8"))
        in_tc = False
        if blocks:
            for begin, stop in blocks:
                if begin <= start < stop:
                    in_tc = True
                    break
        if kind == "irest":
            for alias in match.group("irest").split(","):
                append((_strip_as(alias), (), line, column, in_tc, False))
            continue
        raw = match.group("fmod")
        if " " in raw or "\\" in raw or "\t" in raw or "\f" in raw:
            raw = _SPACE.sub("", raw)
        if raw[0] == ".":
            module = raw.lstrip(".")
            name, beyond = resolve_relative(
                module or None, len(raw) - len(module), importer, is_package
            )
        else:
            name, beyond = raw, False
        if kind == "paren":
            body = match.group("paren")
            if "#" in body:
                body = _COMMENT.sub("", body)
        else:
            body = match.group("frest")
        names = tuple(
            [_strip_as(alias) for alias in body.split(",") if alias and not alias.isspace()]
        )
        append((name, names, line, column, in_tc, beyond))
    return rows


def scan_ignores(text: str) -> tuple[IgnoreRow, ...]:
    """Every ``mir: ignore[CODE, ...]`` comment as ``(line, codes)``, in source order.

    Only real comments count: strings and docstrings are skipped as tokens, so a
    docstring that shows the syntax is not a directive.
    """
    if "mir:" not in text:
        return ()
    text = _unix_newlines(text)
    rows: list[IgnoreRow] = []
    line, counted_to = 1, 0
    for token in _string_or_comment().finditer(text):
        comment = token.group()
        if comment[0] != "#" or "mir:" not in comment:
            continue
        match = _IGNORE.search(comment)
        if match is None:
            continue
        line += text.count("\n", counted_to, token.start())
        counted_to = token.start()
        listed = match.group(1) or ""
        codes = tuple(code.strip().upper() for code in listed.split(",") if code.strip())
        rows.append((line, codes))
    return tuple(rows)


@cache
def _string_or_comment() -> re.Pattern[str]:
    return re.compile(_STRING_OR_COMMENT_PATTERN, re.DOTALL)


def _unix_newlines(text: str) -> str:
    """``\\r\\n`` and lone ``\\r`` as ``\\n``, so line numbers count the way CPython's do."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _strip_as(alias: str) -> str:
    """``a . b  as c`` -> ``a.b``: the name as ``ast`` normalises it."""
    stripped = alias.strip(" \t\f\n\\")
    if " " not in stripped and "\\" not in stripped and "\t" not in stripped:
        return stripped
    parts = _SPACE.split(stripped)
    if "as" in parts[1:]:
        parts = parts[: parts.index("as", 1)]
    return "".join(parts)


def _indent_width(indent: str) -> int:
    return len(indent.expandtabs(8))


def _type_checking_body(text: str, after: int, indent: str) -> tuple[int, int]:
    """(start, end) offsets of the statements governed by an ``if TYPE_CHECKING:`` header.

    A body on the header's own line ends at the newline; an indented block ends at the
    first real logical line (outside brackets, strings and continuations) indented no
    deeper than the header.
    """
    newline = text.find("\n", after)
    newline = len(text) if newline == -1 else newline
    if text[after:newline].strip(" \t\f") and not text[after:newline].lstrip().startswith("#"):
        return after, newline
    width = _indent_width(indent)
    for found in _LINE_START.finditer(text, newline):
        if _indent_width(found.group(1)) > width:
            continue
        if _is_logical_line_start(text, newline, found.start()):
            return after, found.start()
    return after, len(text) + 1


def _is_logical_line_start(text: str, block_start: int, position: int) -> bool:
    """True when ``position`` (a line start) is outside brackets, strings and continuations."""
    depth = 0
    for token in _brackets().finditer(text, block_start):
        if token.start() >= position:
            break
        if token.end() > position:
            return False  # a string spanning the line start
        char = token.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
    if depth > 0:
        return False
    previous = text[block_start:position].rstrip("\n")
    return not previous.endswith("\\")


def check_syntax(source: bytes | str, filename: str = "<source>") -> SyntaxError | None:
    """The ``SyntaxError`` this interpreter raises for ``source``, or None when it parses.

    ``symtable`` parses in C and builds no Python AST objects and no bytecode: measured
    ~25% cheaper than ``compile`` and on par with ``ast.parse``, and it also catches the
    scope errors ``compile`` would (``nonlocal`` at module level, duplicate arguments).
    Callers run it only on cache misses.
    """
    try:
        text = decode_source(source) if isinstance(source, bytes) else source
        symtable.symtable(text, filename, "exec")
    except SyntaxError as exc:  # includes IndentationError, TabError
        return exc
    except ValueError as exc:  # source code string cannot contain null bytes
        error = SyntaxError(str(exc))
        error.lineno = 1
        return error
    return None
