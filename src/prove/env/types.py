"""What a tool parameter or result field means, declared once in its type: entity ids, dates, pages.

    from prove.env.types import entity_id, day, Page, Offset, Limit, DEFAULT_LIMIT, parse_day
    AccountId = entity_id("account", "Account id, e.g. 'ACC-0003'.", example="ACC-0003")  # in and out

An id parameter names the entity kind it refers to; the kind is written into the JSON schema as
``"x-entity": "<kind>"`` (on the string, or on the array of ids). The same alias used on a result
field says the tool *produces* ids of that kind. Kinds are local to a server ("customer" in banking
is not "customer" in the shop). The graph, the state sampler, the synthesis planner and the fuzzer
read these declarations (`declared_entity`); nothing infers meaning from names or prose. A string
parameter that is not an id declares what it takes with `text`: the kind of text (``"x-text"``,
one of `TEXT_KINDS`), the field of a listing whose values it takes (``"x-listed"``: a city filter
takes what a result's `city` shows) and an example value (``"x-example"``); `clock` declares a
time of day (``"x-format": "time"``). A number parameter declares what it measures with `measure`
(``"x-number"``, one of `NUMBER_KINDS`; a money parameter's ``"x-money"`` reads as money), and a
date that ends a span or is an expiry says so with `day`/`moment`'s `role` (``"x-date"``, one of
`DATE_ROLES`). A result or state field that names its record (a name, a title, a subject) says so
with `naming` (``"x-naming"``, one of `NAMING_KINDS`), and one that is money with ``"x-money"``. Synthesis reads these (`declared_text`, `declared_listed`,
`declared_example`, `declared_format`, `declared_number`, `declared_date_role`, `naming_fields`),
never the parameter's name or description. Dates
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
    "model_facing", "MONEY", "money_amount", "TEXT", "TEXT_KINDS", "LISTED", "EXAMPLE", "text",
    "clock", "declared_text", "declared_listed", "declared_example", "NUMBER", "NUMBER_KINDS",
    "measure", "declared_number", "DATE_ROLE", "DATE_ROLES", "declared_date_role", "NAMING", "NAMING_KINDS", "naming",
    "naming_fields", "money_fields",
]

ENTITY = "x-entity"
"""JSON-schema key naming the entity kind an id parameter or result field refers to."""

MONEY = "x-money"
"""JSON-schema key marking a money parameter: rounded to cents before it is validated."""

TEXT = "x-text"
"""JSON-schema key naming the kind of text a free-text string parameter takes (`TEXT_KINDS`)."""

TEXT_KINDS: dict[str, str] = {
    "query": "search words (a word of a listed name or title)",
    "title": "a short title, subject or label",
    "person_name": "a person's full name",
    "reason": "why something is done",
    "body": "a message, note, comment or other running text",
    "word": "a short value: a word, a code, an address",
}
"""The kinds of text `text` declares, with what each takes."""

LISTED = "x-listed"
"""JSON-schema key naming the field of a listing whose values a parameter takes (a city filter:
``"city"``): the sampler fills it with values that field showed in a live result."""

EXAMPLE = "x-example"
"""JSON-schema key holding one example value of a parameter (written as data, not in prose)."""

NUMBER = "x-number"
"""JSON-schema key naming what a number parameter measures (`NUMBER_KINDS`)."""

NUMBER_KINDS: dict[str, str] = {
    "money": "an amount of money: a price, a limit, a budget (an ``x-money`` parameter is one too)",
    "percent": "a percentage, e.g. a charge limit",
    "temperature": "a temperature in degrees Celsius",
    "level": "a setting on a 1-100 scale, e.g. brightness",
    "rating": "a rating on a small scale, e.g. 1-5 stars",
    "score": "a score on a 0-100 scale, e.g. a lead's score",
    "reading": "a meter reading, e.g. an odometer in km",
}
"""The kinds of number `measure` declares; a number that declares none is a small count."""

DATE_ROLE = "x-date"
"""JSON-schema key naming the role of a date parameter among the call's dates (`DATE_ROLES`)."""

DATE_ROLES: dict[str, str] = {
    "end": "ends a span another date of the call starts, hours later (a date: days later)",
    "return": "ends a stay, rental or window another date of the call starts, days later",
    "expiry": "an expiry date, years ahead",
}
"""The roles `day` and `moment` declare with `role`; a date without one is a day of its own."""

NAMING = "x-naming"
"""JSON-schema key marking the result or state field that names its record (`NAMING_KINDS`)."""

NAMING_KINDS: dict[str, str] = {
    "name": "a name said with what it names: 'the Everyday account'",
    "alone": "a name said on its own: a person's full name, a handle, a repository's owner/name",
    "title": "a title or subject, said in quotes: 'the task \"Set up onboarding\"'",
}
"""How the field a record is named by is said (`naming`)."""

_CLOCK = r"^([01]\d|2[0-3]):[0-5]\d$"
MAX_PAGE = 50
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?")
DEFAULT_LIMIT = 20
"""Default page size of every list/search tool."""

Offset = Annotated[int, Field(ge=0, description="Index of the first result to return.")]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Maximum number of results (1-{MAX_PAGE}).")]


def entity_id(kind: str, description: str, *, type_: type = str, example: str | None = None,
              **constraints: Any) -> Any:
    """An id of entity `kind` (str unless `type_` says so, e.g. int for a pull-request number);
    `example` is an id a user may know without any tool showing it (a promo code from an ad)."""
    _check_kind(kind)
    return Annotated[type_, Field(description=description, json_schema_extra=_ided(kind, example),
                                  **constraints)]


def entity_ids(kind: str, description: str, *, example: str | None = None, **constraints: Any) -> Any:
    """A list of ids of entity `kind` (`example` as for `entity_id`)."""
    _check_kind(kind)
    return Annotated[list[str], Field(description=description, json_schema_extra=_ided(kind, example),
                                      **constraints)]


def _ided(kind: str, example: str | None) -> dict[str, Any]:
    return {ENTITY: kind} if example is None else {ENTITY: kind, EXAMPLE: example}


def _check_kind(kind: str) -> None:
    if not kind or not kind.replace("_", "").isalnum() or kind != kind.lower():
        raise ValueError(f"entity kind must be lower_snake_case letters/digits, got {kind!r}")


def money_amount(description: str, *, optional: bool = False, **constraints: Any) -> Any:
    """A money amount (float, or None when `optional`): rounded to cents before its constraints
    are checked, so `gt=0` refuses 0.004 instead of recording a 0.00 transfer."""
    kind: Any = float | None if optional else float
    return Annotated[kind, Field(description=description, json_schema_extra={MONEY: True}, **constraints)]


def text(kind: str, description: str, *, listed: str | None = None, example: str | None = None,
         many: bool = False, optional: bool = False, **constraints: Any) -> Any:
    """A string (a list of strings with `many`; None allowed with `optional`) taking text of `kind`
    (`TEXT_KINDS`); `listed` names the listing field whose values fit it, `example` is one value.

        city: text("word", "Only customers living in this city.", listed="city") | None = None
        memo: text("body", "Note shown on both statements.", max_length=140) = ""
    """
    if kind not in TEXT_KINDS:
        raise ValueError(f"text kind must be one of {', '.join(TEXT_KINDS)}; got {kind!r}")
    if listed is not None and not listed.replace("_", "").isalnum():
        raise ValueError(f"listed must name a result field (letters, digits, _), got {listed!r}")
    extra: dict[str, Any] = {TEXT: kind}
    if listed is not None:
        extra[LISTED] = listed
    if example is not None:
        extra[EXAMPLE] = example
    base: Any = list[str] if many else str
    if optional:
        base = base | None
    return Annotated[base, Field(description=description, json_schema_extra=extra, **constraints)]


def clock(description: str, *, optional: bool = False, **constraints: Any) -> Any:
    """A time of day, HH:MM (24-hour; None allowed with `optional`): the schema carries the pattern
    and ``"x-format": "time"``."""
    base: Any = str | None if optional else str
    return Annotated[base, Field(description=description, pattern=_CLOCK,
                                 json_schema_extra={"x-format": "time"}, **constraints)]


def measure(kind: str) -> dict[str, str]:
    """The declaration of what a number parameter measures, for its ``Field``:

        stars: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description=...)]
    """
    if kind not in NUMBER_KINDS:
        raise ValueError(f"number kind must be one of {', '.join(NUMBER_KINDS)}; got {kind!r}")
    return {NUMBER: kind}


def day(description: str, *, listed: str | None = None, role: str | None = None,
        **constraints: Any) -> Any:
    """A calendar date, YYYY-MM-DD (parse it in the tool with `parse_day`); `listed` names the
    listing field whose dates fit it (see `text`), `role` what it is among the call's dates
    (`DATE_ROLES`: a check-out date ends the stay its check-in starts)."""
    return Annotated[str, Field(description=description, json_schema_extra=_dated("date", listed, role),
                                **constraints)]


def moment(description: str, *, listed: str | None = None, role: str | None = None,
           **constraints: Any) -> Any:
    """A date and time, YYYY-MM-DDTHH:MM[:SS] (parse it in the tool with `parse_moment`); `listed`
    and `role` as for `day`."""
    return Annotated[str, Field(description=description,
                                json_schema_extra=_dated("date-time", listed, role), **constraints)]


def _dated(fmt: str, listed: str | None, role: str | None) -> dict[str, Any]:
    if role is not None and role not in DATE_ROLES:
        raise ValueError(f"date role must be one of {', '.join(DATE_ROLES)}; got {role!r}")
    extra: dict[str, Any] = {"format": fmt}
    if listed is not None:
        extra[LISTED] = listed
    if role is not None:
        extra[DATE_ROLE] = role
    return extra


def naming(kind: str) -> dict[str, str]:
    """The declaration, for a result or state model field's ``Field``, that the field names its
    record, and how a person says it (`NAMING_KINDS`):

        class Account(BaseModel):
            nickname: str = Field(json_schema_extra=naming("name"))   # "my Everyday account"
    """
    if kind not in NAMING_KINDS:
        raise ValueError(f"naming kind must be one of {', '.join(NAMING_KINDS)}; got {kind!r}")
    return {NAMING: kind}


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
    """'date', 'date-time' or 'time' (`clock`) when a property schema declares one (on itself or
    an `anyOf` option; a list of dates declares none)."""
    for key in ("format", "x-format"):
        if key in schema:
            return str(schema[key])
        for option in schema.get("anyOf", ()):
            if key in option:
                return str(option[key])
    return None


def _declared(schema: Mapping[str, Any], key: str) -> Any:
    """The value of declaration `key` on a property schema, its non-null `anyOf` options or its
    array items; None when nothing declares it."""
    if key in schema:
        return schema[key]
    for option in schema.get("anyOf", ()):
        if isinstance(option, Mapping) and key in option:
            return option[key]
    items = schema.get("items")
    if isinstance(items, Mapping) and key in items:
        return items[key]
    return None


def declared_text(schema: Mapping[str, Any]) -> str | None:
    """The kind of text (`TEXT_KINDS`) a parameter schema declares, or None."""
    found = _declared(schema, TEXT)
    return None if found is None else str(found)


def declared_listed(schema: Mapping[str, Any]) -> str | None:
    """The listing field whose values a parameter takes, or None."""
    found = _declared(schema, LISTED)
    return None if found is None else str(found)


def declared_example(schema: Mapping[str, Any]) -> str | None:
    """The example value a parameter schema declares, or None."""
    found = _declared(schema, EXAMPLE)
    return None if found is None else str(found)


def declared_number(schema: Mapping[str, Any]) -> str | None:
    """What a number parameter schema declares it measures (`NUMBER_KINDS`; ``x-money``: 'money'),
    or None (a small count)."""
    found = _declared(schema, NUMBER)
    if found is not None:
        return str(found)
    return "money" if _declared(schema, MONEY) else None


def declared_date_role(schema: Mapping[str, Any]) -> str | None:
    """The role (`DATE_ROLES`) a date parameter schema declares, or None."""
    found = _declared(schema, DATE_ROLE)
    return None if found is None else str(found)


def _fields_declaring(schema: Mapping[str, Any], key: str,
                      defs: Mapping[str, Any] | None) -> dict[str, Any]:
    """field -> the value of declaration `key`, for every property anywhere in a result or state
    model's schema (through ``$ref``, ``anyOf``, array items and maps) that declares it; the first
    declaration of a field name wins, in the order the schema shows them."""
    defs = schema.get("$defs", {}) if defs is None else defs
    found: dict[str, Any] = {}
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if not isinstance(node, Mapping):
            return
        ref = node.get("$ref")
        if ref is not None:
            name = str(ref).rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                walk(defs.get(name))
        for field, sub in node.get("properties", {}).items():
            if isinstance(sub, Mapping):
                value = _declared(sub, key)
                if value is not None and field not in found:
                    found[field] = value
                walk(sub)
        for option in node.get("anyOf", ()):
            walk(option)
        walk(node.get("items"))
        walk(node.get("additionalProperties"))

    walk(schema)
    return found


def naming_fields(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> dict[str, str]:
    """field -> how it is said (`NAMING_KINDS`), for the fields a result or state model's schema
    declares `naming`."""
    return {k: str(v) for k, v in _fields_declaring(schema, NAMING, defs).items()}


def money_fields(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The fields a result or state model's schema declares money (``x-money``)."""
    return frozenset(k for k, v in _fields_declaring(schema, MONEY, defs).items() if v)


def model_facing(schema: Any) -> Any:
    """A schema without the ``x-`` declarations (what a policy is offered)."""
    if isinstance(schema, Mapping):
        return {k: model_facing(v) for k, v in schema.items() if not str(k).startswith("x-")}
    if isinstance(schema, list):
        return [model_facing(v) for v in schema]
    return schema
