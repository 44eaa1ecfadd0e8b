"""Helpers for tool bodies: lookups that fail helpfully (`find` reads the entity and the parameter
from the declaration of the argument it was given) and preconditions (pages: `Page.of`).

    account = find(state.accounts, account_id)          # or a not_found ToolError
    require(amount > 0, f"amount must be positive, got {amount}", params=("amount",))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from functools import cache
from typing import Any, TypeVar

from prove.env.errors import ToolError
from prove.env.types import declared_entity, paginate

__all__ = ["find", "lookup", "require", "paginate", "known", "shown", "CURRENT_CALL"]

T = TypeVar("T")

CURRENT_CALL: ContextVar[tuple[Mapping[str, Any], Mapping[str, Any]] | None] = ContextVar(
    "prove_tool_call", default=None)
"""(input schema, arguments) of the tool call being served: `ToolSpec.fn` sets it around every
body, so `find` can read which argument held a missing id and what that parameter declares."""


def _holder(key: Any, kind: str | None) -> tuple[str | None, str | None]:
    """The parameter of the call being served that holds `key` (directly or in a list), preferring
    one that declares entity `kind`, and the entity it declares (x-entity); (None, None) outside a
    call or for a derived key."""
    call = CURRENT_CALL.get()
    if call is None:
        return None, None
    schema, arguments = call
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    holders = [(name, declared_entity(props.get(name, {}), defs)) for name, value in arguments.items()
               if value == key or (isinstance(value, list) and key in value)]
    return next((h for h in holders if h[1] == kind), holders[0] if holders else (None, None))


@cache
def _record_kind(model: type) -> str:
    """The entity a record model's first field declares (its own id), else its class name."""
    schema = model.model_json_schema()
    first = next(iter(schema.get("properties", {}).values()), {})
    return declared_entity(first, schema.get("$defs", {})) or model.__name__.lower()


def find(table: Mapping[str, T], key: str, *, hint: str | None = None) -> T:
    """table[key], or a not_found ToolError naming the entity (the table's records declare it on
    their id) and the parameter (the argument of the call that held `key`, one declaring that
    entity first), and some valid ids as message and as `choices`.

    `hint` replaces the ids where listing them would leak secrets (coupon codes) or where a search
    tool is the better pointer ("use search_products to find a sku").
    """
    item = table.get(key)
    if item is not None:
        return item
    first = next(iter(table.values()), None)
    own = _record_kind(type(first)) if hasattr(first, "model_json_schema") else None
    param, declared = _holder(key, own)
    raise _not_found(table, key, param, (own or declared or "record").replace("_", " "), hint)


def _not_found(table: Mapping[str, Any], key: str, param: str | None, kind: str,
               hint: str | None) -> ToolError:
    """The not_found error of `find` and `lookup`: the entity, the parameter when known, and
    `hint` or some valid ids (as message and as `choices`)."""
    where = f" (parameter '{param}')" if param else ""
    tail = hint if hint is not None else f"known: {known(table)}"
    return ToolError(f"{kind} '{key}' not found{where}; {tail}", reason="not_found",
                     params=(param,) if param else (), rejected=(key,),
                     choices=shown(table) if hint is None else ())


def shown(ids: Iterable[str], limit: int = 8) -> tuple[str, ...]:
    """The ids `known` lists (the first `limit`), as data for a ToolError's `choices`."""
    return tuple(ids)[:limit]


def known(ids: Iterable[str], limit: int = 8) -> str:
    """A short list of existing ids for an error message (`shown` gives the same ids as data)."""
    ids = list(ids)
    shown = ", ".join(ids[:limit])
    more = len(ids) - limit
    return shown + (f" (and {more} more)" if more > 0 else "") if ids else "(none)"


def lookup(table: Mapping[str, T], key: str, param: str, kind: str, hint: str | None = None) -> T:
    """table[key], or a ToolError naming the parameter and some valid ids, both given by hand
    (for a key the call did not pass as it is; otherwise `find` reads them from the declaration).

    `hint` replaces the list of known ids where listing them would leak secrets (coupon codes)
    or where a search tool is the better pointer ("use search_products to find a sku").
    """
    item = table.get(key)
    if item is None:
        raise _not_found(table, key, param, kind, hint)
    return item


def require(condition: bool, message: str, *, reason: str = "invalid", params: Iterable[str] = (),
            rejected: Iterable[Any] = (), choices: Iterable[Any] = (),
            wanted: Iterable[str] = ()) -> None:
    """Raise a model-facing ToolError with `message` and its facts as data (prove.env.errors)
    unless `condition` holds."""
    if not condition:
        raise ToolError(message, reason=reason, params=params, rejected=rejected, choices=choices,
                        wanted=wanted)

