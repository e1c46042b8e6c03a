"""MIR105 capability-cycle: capabilities must not depend on each other in a circle.

## What it does
Builds the graph of imports between capabilities and reports each group of capabilities
that reach each other, with its shortest cycle (`a -> b -> a`), located at the first
import of that cycle.

## Why it matters
Capabilities in a cycle can no longer be understood, tested or extracted one at a time:
they are one capability with several names. Cycles also make import order fragile.

## Example
```python
# capabilities/billing/application.py
from capabilities.refunds import RefundService
# capabilities/refunds/application.py
from capabilities.billing import Invoice  # MIR105: billing -> refunds -> billing
```

## How to fix
Pick the direction that matches the business (who knows about whom), and invert the
other import: the lower capability declares a `typing.Protocol` port, the higher one
implements it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import Edge, LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR105"
NAME = "capability-cycle"


def _components(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components (iterative Tarjan: capability graphs are small,
    but recursion limits are not a thing a linter should trip over)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                result.append(component)
    return result


def shortest_cycle(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """Shortest cycle inside ``members`` (ties broken by name), as ``[a, b, ..., a]``."""
    best: list[str] | None = None
    for start in sorted(members):
        parents: dict[str, str] = {}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    cycle = [*reversed(path), start]
                    if best is None or len(cycle) < len(best):
                        best = cycle
                    queue.clear()
                    break
                if child not in parents and child != start:
                    parents[child] = node
                    queue.append(child)
    assert best is not None
    return best


def check(model: LintModel) -> Iterator[Finding]:
    graph: dict[str, set[str]] = {name: set() for name in model.capabilities}
    first_edge: dict[tuple[str, str], Edge] = {}
    for edge, source, target in model.cross_capability_edges():
        if source is None:
            continue
        graph[source].add(target)
        key = (source, target)
        if key not in first_edge or (edge.importer.path, edge.ref.line) < (
            first_edge[key].importer.path,
            first_edge[key].ref.line,
        ):
            first_edge[key] = edge
    for component in _components(graph):
        if len(component) < 2:
            continue
        cycle = shortest_cycle(graph, component)
        edge = first_edge[(cycle[0], cycle[1])]
        yield import_finding(
            CODE,
            NAME,
            edge,
            f"capability cycle: {' -> '.join(cycle)}",
            cycle[0],
        )
