"""The documentation of the ``IL`` finding codes, in the fixed sections every mir rule
uses (``mir lint explain CODE``). One code per import-linter contract type."""

from __future__ import annotations

_FIX_IGNORE = (
    "Remove the import (or invert it: pass the value in, or move the shared code to a\n"
    "lower module). To accept it knowingly, add the first link of the reported chain to\n"
    "the contract's `ignore_imports`, e.g. `pkg.low.module -> pkg.high.module`."
)

RULE_DOCS: dict[str, str] = {
    "IL001": f"""IL001 importlinter-layers: a lower layer reaches a higher one.

## What it does
Checks a `layers` contract: each listed layer may import the layers below it, never the
ones above it, not even through a chain of other modules; `a | b` siblings may not
import each other (`a : b` may); with `containers`, every container is checked the same
way; with `exhaustive`, every child of a container must be a declared layer. One
finding per broken pair, at the first import of the shortest chain.

## Why it matters
The layer order is the direction dependencies may flow. One import the wrong way ties
the stable core to code that changes often, and indirect chains are how that usually
happens.

## Example
```ini
[importlinter:contract:layers]
name = Shop layers
type = layers
layers =
    shop.api
    shop.domain
```
`shop/domain/prices.py: from shop.api import views` -> IL001.

## How to fix
{_FIX_IGNORE}
""",
    "IL002": f"""IL002 importlinter-forbidden: a source module reaches a forbidden one.

## What it does
Checks a `forbidden` contract: no module of `source_modules` may import a module of
`forbidden_modules` (internal, or external top-level packages with
`include_external_packages = True`), directly or, unless `allow_indirect_imports`,
through a chain.

## Why it matters
Forbidden imports are the dependencies a part of the code must never take (a web
framework in the domain, an HTTP client in pure code); through a chain they arrive
unnoticed.

## Example
`source_modules = shop.domain`, `forbidden_modules = requests`, and
`shop/domain/rates.py: from shop.infra import http` where `shop.infra.http` imports
`requests` -> IL002 with the chain `shop.domain.rates -> shop.infra.http -> requests`.

## How to fix
{_FIX_IGNORE}
""",
    "IL003": f"""IL003 importlinter-independence: independent modules depend on each other.

## What it does
Checks an `independence` contract: no chain of imports may link any two of `modules`
in either direction (a chain through a third listed module is reported against that
module's pairs).

## Why it matters
Independent packages can be changed, tested, released or deleted one at a time; a
single import between them makes them one package in disguise.

## Example
`modules = shop.orders, shop.billing` and `shop/orders/checkout.py: from shop.billing
import invoice` -> IL003.

## How to fix
{_FIX_IGNORE}
""",
    "IL004": """IL004 importlinter-acyclic-siblings: sibling packages import each other in a cycle.

## What it does
Checks an `acyclic_siblings` contract: below each of `ancestors` (down to `depth`
levels, except `skip_descendants`), the children of a package, each standing for its
whole subtree, must not import each other in a cycle. One finding per package with a
cycle; the message spells the cycle out.

## Why it matters
Siblings in a cycle cannot be understood, tested or split apart one at a time, and the
cycle only grows.

## Example
`shop/orders/cart.py: from shop.orders import pricing` and
`shop/orders/pricing/rules.py: from shop.orders.cart import Cart` -> IL004
`No cycles are allowed in shop.orders: .cart -> .pricing -> .cart`.

## How to fix
Move what both siblings need into a third module they both import, or pass it in.
""",
    "IL005": """IL005 importlinter-protected: a protected module is imported by one not allowed to.

## What it does
Checks a `protected` contract: only `allowed_importers` (and, with `as_packages`, the
protected package's own modules) may *directly* import a module of `protected_modules`.

## Why it matters
A protected module is reachable through one door; every other direct import is a second
door nobody reviews.

## Example
`protected_modules = shop.db`, `allowed_importers = shop.repositories`, and
`shop/api/views.py: from shop.db import session` -> IL005.

## How to fix
Go through an allowed importer, or add the importer to `allowed_importers` (or the
import to `ignore_imports`) if the exception is intended.
""",
    "IL006": """IL006 importlinter-private-modules: a private module is imported from outside.

## What it does
Checks a `private_modules` contract: a module whose name, or an ancestor's, starts
with `_` (dunders excepted) may only be imported from inside the parent package of its
innermost private component (within `packages_with_private_modules`, or everywhere).

## Why it matters
The leading underscore is the package's promise that the module may change at any time;
an import from outside turns it into public API by accident.

## Example
`shop/api/views.py: from shop.orders._pricing import rules` -> IL006
(`shop.orders._pricing` is private to `shop.orders`).

## How to fix
Import what the package exports instead, or make the module public (drop the `_`).
""",
}
