"""What a tool parameter or result field means, declared once in its type: entity ids, dates, pages.

    from prove.env.types import entity_id, day, Page, Offset, Limit, DEFAULT_LIMIT, parse_day
    AccountId = entity_id("account", "Account id, e.g. 'ACC-0003'.")   # input *and* output fields

An id parameter names the entity kind it refers to; the kind is written into the JSON schema as
``"x-entity": "<kind>"`` (on the string, or on the array of ids). The same alias used on a result
field says the tool *produces* ids of that kind. Kinds are local to a server ("customer" in banking
is not "customer" in the shop). The graph, the state sampler, the synthesis planner and the fuzzer
read these declarations (`declared_entity`); nothing infers meaning from names or prose. Dates
and datetimes have one schema format and one parser with one error message; every list/search
tool takes `offset`/`limit` and returns a `Page` (`total`, `next_offset`). Model-facing schemas
(`ToolSpec.openai_schema`) drop the ``x-`` keys; the MCP input schema keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from datetime import date, datetime
from functools import cache
from typing import Annotated, Any, TypeVar, get_origin

from pydantic import BaseModel, Field

from prove.env.errors import ToolError

__all__ = [
    "ENTITY", "entity_id", "entity_ids", "day", "moment", "parse_day", "parse_moment",
    "Page", "paginate", "Offset", "Limit", "MAX_PAGE", "DEFAULT_LIMIT",
    "declared_entity", "declared_format", "entity_values", "state_schema",
    "model_facing", "MONEY", "money_amount",
]

ENTITY = "x-entity"
"""JSON-schema key naming the entity kind an id parameter or result field refers to."""

MONEY = "x-money"
"""JSON-schema key marking a money parameter: rounded to cents before it is validated."""

MAX_PAGE = 50
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?")
DEFAULT_LIMIT = 20
"""Default page size of every list/search tool."""

Offset = Annotated[int, Field(ge=0, description="Index of the first result to return.")]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Maximum number of results (1-{MAX_PAGE}).")]


def entity_id(kind: str, description: str, *, type_: type = str, **constraints: Any) -> Any:
    """An id of entity `kind` (str unless `type_` says so, e.g. int for a pull-request number)."""
    _check_kind(kind)
    return Annotated[type_, Field(description=description, json_schema_extra={ENTITY: kind}, **constraints)]


def entity_ids(kind: str, description: str, **constraints: Any) -> Any:
    """A list of ids of entity `kind`."""
    _check_kind(kind)
    return Annotated[list[str], Field(description=description, json_schema_extra={ENTITY: kind},
                                      **constraints)]


def _check_kind(kind: str) -> None:
    if not kind or not kind.replace("_", "").isalnum() or kind != kind.lower():
        raise ValueError(f"entity kind must be lower_snake_case letters/digits, got {kind!r}")


def money_amount(description: str, *, optional: bool = False, **constraints: Any) -> Any:
    """A money amount (float, or None when `optional`): rounded to cents before its constraints
    are checked, so `gt=0` refuses 0.004 instead of recording a 0.00 transfer."""
    kind: Any = float | None if optional else float
    return Annotated[kind, Field(description=description, json_schema_extra={MONEY: True}, **constraints)]


def day(description: str, **constraints: Any) -> Any:
    """A calendar date, YYYY-MM-DD (parse it in the tool with `parse_day`)."""
    return Annotated[str, Field(description=description, json_schema_extra={"format": "date"}, **constraints)]


def moment(description: str, **constraints: Any) -> Any:
    """A date and time, YYYY-MM-DDTHH:MM[:SS] (parse it in the tool with `parse_moment`)."""
    return Annotated[str, Field(description=description, json_schema_extra={"format": "date-time"},
                                **constraints)]


def parse_day(value: str, param: str) -> date:
    """`value` as a date, or a ToolError naming `param` and the one accepted format."""
    try:
        parsed = date.fromisoformat(value) if _DAY.fullmatch(value) else None
    except (TypeError, ValueError):
        parsed = None
    if parsed is None or not 2000 <= parsed.year <= 2100:
        raise ToolError(f"{param} must be a date YYYY-MM-DD between 2000 and 2100, e.g. 2026-04-02; "
                        f"got '{value}'", params=(param,), rejected=(value,))
    return parsed


def parse_moment(value: str, param: str) -> datetime:
    """`value` as a naive datetime (minutes or seconds), or a ToolError naming `param`."""
    try:
        parsed = datetime.fromisoformat(value) if _MOMENT.fullmatch(value) else None
    except (TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.tzinfo is not None or not 2000 <= parsed.year <= 2100:
        raise ToolError(f"{param} must be a date and time YYYY-MM-DDTHH:MM[:SS] between 2000 and "
                        f"2100, e.g. 2026-04-02T09:30; got '{value}'", params=(param,),
                        rejected=(value,))
    return parsed


T = TypeVar("T")
P = TypeVar("P", bound="Page")


def paginate(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], int | None]:
    """Slice a page; return it with the next offset (None on the last page).

    Tools build their result with `Page.of`, which calls this; an offset below 0 or a limit
    outside 1..MAX_PAGE is a ToolError (the schema refuses both before a tool runs).
    """
    if offset < 0:
        raise ToolError(f"offset must be >= 0, got {offset}", params=("offset",))
    if not 1 <= limit <= MAX_PAGE:
        raise ToolError(f"limit must be between 1 and {MAX_PAGE}, got {limit}", reason="limit",
                        params=("limit",))
    page = list(items[offset : offset + limit])
    nxt = offset + limit
    return page, (nxt if nxt < len(items) else None)


class Page(BaseModel):
    """What every list/search result carries besides its items: built by `Page.of`.

        class CustomerList(Page):
            customers: list[Customer]

        return CustomerList.of(found, offset, limit)        # customers, total, next_offset
        return BranchList.of(found, offset, limit, view=_info, repo=repo)  # items viewed, extras
    """

    total: int = Field(description="How many results match in all, across pages.")
    next_offset: int | None = Field(description="Offset of the next page; null on the last page.")

    @classmethod
    def of(cls: type[P], found: Sequence[Any], offset: int, limit: int, *,
           view: Callable[[Any], Any] | None = None, **fields: Any) -> P:
        """The page of `found` at `offset`/`limit` (`paginate`), with `total=len(found)` and
        `next_offset`. The page goes into the subclass's one list field not given in `fields`,
        each item through `view` when given (only the page's items are viewed); `fields` fills
        the subclass's other fields."""
        name = cls.items_field(fields)
        page, nxt = paginate(found, offset, limit)
        items = page if view is None else [view(item) for item in page]
        return cls(**{name: items}, total=len(found), next_offset=nxt, **fields)

    @classmethod
    def items_field(cls, given: Collection[str] = ()) -> str:
        """The name of the one `list[...]` field not in `given`; TypeError if none or several."""
        names = [n for n, info in cls.model_fields.items()
                 if get_origin(info.annotation) is list and n not in given]
        if len(names) != 1:
            found = f"several ({', '.join(names)})" if names else "none"
            raise TypeError(f"{cls.__name__}.of fills the one list field not passed by keyword; "
                            f"{cls.__name__} has {found}")
        return names[0]


def declared_entity(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> str | None:
    """The entity kind a property schema declares (through `$ref`, `anyOf` and array items)."""
    defs = defs or {}
    seen = 0
    while "$ref" in schema and seen < 16:
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        seen += 1
    if ENTITY in schema:
        return str(schema[ENTITY])
    for option in schema.get("anyOf", ()):
        found = declared_entity(option, defs)
        if found:
            return found
    items = schema.get("items")
    return declared_entity(items, defs) if isinstance(items, Mapping) else None


def entity_values(node: Any, schema: Mapping[str, Any],
                  defs: Mapping[str, Any] | None = None) -> Iterator[tuple[str, Any]]:
    """(kind, value) of every id in a JSON value, read with the schema that describes it
    (a tool's output schema, a state model's schema): the leaves under an ``x-entity``."""
    defs = schema.get("$defs", {}) if defs is None else defs
    for _ in range(16):
        if "$ref" not in schema:
            break
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    options = [o for o in schema.get("anyOf", ()) if o.get("type") != "null"]
    if len(options) == 1 and ENTITY not in schema:
        schema = {**schema, **options[0]}
        schema.pop("anyOf", None)
        yield from entity_values(node, schema, defs)
        return
    if isinstance(node, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, value in node.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else {})
            yield from entity_values(value, sub, defs)
    elif isinstance(node, list):
        kind = schema.get(ENTITY)
        items = schema.get("items", {})
        for value in node:
            if kind is not None and isinstance(value, (str, int)) and not isinstance(value, bool):
                yield str(kind), value
            elif isinstance(items, Mapping):
                yield from entity_values(value, items, defs)
    elif isinstance(node, (str, int)) and not isinstance(node, bool):
        kind = declared_entity(schema, defs)
        if kind is not None:
            yield kind, node


@cache
def state_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A state model's JSON schema (memoised: pydantic builds it afresh on every call)."""
    return model.model_json_schema()


def declared_format(schema: Mapping[str, Any]) -> str | None:
    """'date' or 'date-time' when a property schema declares one."""
    if "format" in schema:
        return str(schema["format"])
    for option in schema.get("anyOf", ()):
        if "format" in option:
            return str(option["format"])
    return None


def model_facing(schema: Any) -> Any:
    """A schema without the ``x-`` declarations (what a policy is offered)."""
    if isinstance(schema, Mapping):
        return {k: model_facing(v) for k, v in schema.items() if not str(k).startswith("x-")}
    if isinstance(schema, list):
        return [model_facing(v) for v in schema]
    return schema
