"""A drift run's decision fields: which keys an agent's decisions carry and their kind
(numeric or categorical), found from a sample; and the parsed shapes DuckDB holds them in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

_NUMERIC_TYPES = "('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')"
# A categorical field with more distinct values than this is free text, not a category.
MAX_CATEGORIES = 50
# A field is numeric (categorical) when this share of its non-null values are numbers
# (strings / booleans); the rest parse to NULL (numeric) or count as categories.
TYPED_SHARE = 0.8
SHAPES = {"numeric": "DOUBLE", "categorical": "VARCHAR"}
# Decisions per agent whose JSON keys and types are read to find its fields: the kinds
# are a majority vote (TYPED_SHARE), which 2,000 decide as well as 5,000 did, at 40 % of
# the cost (the vote's JSON work was 0.32 s of a 20-agent check).
DISCOVERY_SAMPLE = 2000
# Decision fields measured per agent at most, those most sampled decisions have: a few
# hostile decisions of 10,000 keys each made 10,000 fields, a struct of 10,000 members
# parsed for every flow (`mir drift` ran out of memory).
MAX_FIELDS = 64
# Bounds on the field sample's work, applied before any value is parsed: a decision's
# JSON text longer than this is left out of the sample (its fields still count where
# other decisions carry them; a contract's bounded strings stay far below it), at most
# KEYS_READ keys of each are read, and the CANDIDATES keys most decisions have are typed.
MAX_DECISION_TEXT = 64 * 1024
KEYS_READ = 256
CANDIDATES = 4 * MAX_FIELDS


def decision_shapes(
    agent_kinds: dict[str, dict[str, str]],
) -> tuple[list[dict[str, str]], dict[Any, int]]:
    """The decision's parsed shapes: every agent's (field, type) in one, unless DuckDB
    cannot hold them together (struct members ignore case: ``Amount`` and ``amount``;
    one agent's numeric ``priority`` and another's categorical one): the next shape
    then. Returns the shapes and the one each (field, type) is in."""
    shapes: list[dict[str, str]] = []
    where: dict[Any, int] = {}
    for kinds in agent_kinds.values():
        for name, kind in kinds.items():
            member = (name, SHAPES[kind])
            if member in where:
                continue
            index = next(
                (i for i, shape in enumerate(shapes) if name.lower() not in map(str.lower, shape)),
                len(shapes),
            )
            if index == len(shapes):
                shapes.append({})
            shapes[index][name] = member[1]
            where[member] = index
    # (a struct needs a member: no decision fields found at all still parses)
    return shapes or [{"(none)": "VARCHAR"}], where


def discover(
    con: duckdb.DuckDBPyConnection, parsed_rows: str, params: dict[str, Any]
) -> dict[str, dict[str, str]]:
    """Decision fields per agent (name -> 'numeric' | 'categorical'), from a sample of
    the parsed rows ``parsed_rows`` (``rows.py``) of ``params["agents"]``."""
    # The newest DISCOVERY_SAMPLE finals of each agent in the scan, not the first ones
    # scanned (a LIMIT per agent, 0.03 s faster over 270k flows): with a longer
    # history, a field the decisions gained since was never found, and the sample
    # depended on the scan order of kept or parsed rows.
    if not params["agents"]:
        return {}
    newest = 'ORDER BY "at" DESC, flow_id DESC'
    if len(params["agents"]) <= 4:  # a top-N per agent: 8 ms, not 47 ms, for one agent
        sample = " UNION ALL ".join(
            f"(SELECT agent, decision AS d FROM ({parsed_rows}) "
            f"WHERE agent = {sql_literal(agent)} {newest} LIMIT {DISCOVERY_SAMPLE})"
            for agent in params["agents"]
        )
    else:  # one sort for all (72 ms for 20 agents; 20 top-Ns took 122 ms)
        sample = (
            f"SELECT agent, decision AS d FROM ({parsed_rows}) QUALIFY row_number() "
            f"OVER (PARTITION BY agent {newest}) <= {DISCOVERY_SAMPLE}"
        )
    # Work and memory are bounded before the members are parsed: a decision whose JSON
    # text is over MAX_DECISION_TEXT is left out of the sample, the keys of each are read
    # without their values (at most KEYS_READ), and only the CANDIDATES keys most sampled
    # decisions have are typed. Ten decisions of 10,000 distinct keys each made 100,000
    # groups of a distinct count: 48 s and 12.9 GB, then DuckDB ran out of memory.
    con.execute(
        "CREATE OR REPLACE TEMP TABLE drift_sample AS SELECT agent, d "
        f"FROM ({sample}) WHERE strlen(d) <= {MAX_DECISION_TEXT}",
        params,
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE drift_candidates AS SELECT agent, k FROM ("
        "SELECT agent, k, count(*) AS seen FROM (SELECT agent, "
        f"unnest(list_slice(json_keys(d), 1, {KEYS_READ})) AS k FROM drift_sample "
        "WHERE json_type(d) = 'OBJECT') "
        # a key a JSON path cannot spell (empty, a quote, a backslash) is no field, nor
        # one with a NUL (DuckDB 1.5's parser ends a string literal there)
        "WHERE k <> '' AND NOT regexp_matches(k, '[\"\\\\]') AND strpos(k, chr(0)) = 0 "
        "GROUP BY agent, k) "
        f"QUALIFY row_number() OVER (PARTITION BY agent ORDER BY seen DESC, k) <= {CANDIDATES}"
    )
    found = con.execute(
        "SELECT agent, k, count(*) FILTER (WHERE t IN " + _NUMERIC_TYPES + ") AS num, "
        "count(*) FILTER (WHERE t IN ('VARCHAR', 'BOOLEAN')) AS cat, "
        "count(DISTINCT s) FILTER (WHERE t IN ('VARCHAR', 'BOOLEAN')) AS card, "
        "count(*) FILTER (WHERE t <> 'NULL') AS total FROM ("
        # each decision's members in one pass (json_each, streamed and filtered to the
        # candidates): a lookup per key re-read the whole decision, 12 s for five
        # decisions of 10,000 keys
        "SELECT agent, e.key AS k, e.type AS t, json_extract_string(e.value, '$') AS s "
        "FROM drift_sample x, json_each(x.d) e WHERE json_type(x.d) = 'OBJECT') "
        "SEMI JOIN drift_candidates USING (agent, k) GROUP BY agent, k"
    ).fetchall()
    con.execute("DROP TABLE drift_candidates; DROP TABLE drift_sample")
    kinds: dict[str, dict[str, str]] = {}
    # The type most values have wins: a few hostile or malformed decisions (a string
    # where a number belongs, an object, null) must not hide the field's drift.
    found.sort(key=lambda row: (row[0], -row[5], row[1]))
    for agent, name, num, cat, card, total in found:
        if len(kinds.get(agent, {})) >= MAX_FIELDS:
            continue
        if num and num >= TYPED_SHARE * total:
            kinds.setdefault(agent, {})[name] = "numeric"
        elif cat and cat >= TYPED_SHARE * total and card <= MAX_CATEGORIES:
            kinds.setdefault(agent, {})[name] = "categorical"
    return kinds


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
