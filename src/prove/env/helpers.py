"""Helpers for tool bodies: lookups that fail helpfully and preconditions (pages: `Page.of`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from prove.env.types import paginate

__all__ = ["lookup", "require", "paginate", "known"]

T = TypeVar("T")


def known(ids: Iterable[str], limit: int = 8) -> str:
    """A short list of existing ids for an error message."""
    ids = list(ids)
    shown = ", ".join(ids[:limit])
    more = len(ids) - limit
    return shown + (f" (and {more} more)" if more > 0 else "") if ids else "(none)"


def lookup(table: Mapping[str, T], key: str, param: str, kind: str, hint: str | None = None) -> T:
    """table[key], or a ToolError naming the parameter and some valid ids.

    `hint` replaces the list of known ids where listing them would leak secrets (coupon codes)
    or where a search tool is the better pointer ("use search_products to find a sku").
    """
    item = table.get(key)
    if item is None:
        tail = hint if hint is not None else f"known: {known(table)}"
        raise ToolError(f"{kind} '{key}' not found (parameter '{param}'); {tail}")
    return item


def require(condition: bool, message: str) -> None:
    """Raise a model-facing ToolError with `message` unless `condition` holds."""
    if not condition:
        raise ToolError(message)

