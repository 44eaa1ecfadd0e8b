"""Reading tool results for the planner: where a key sits in a result, which field tells a listed
object apart, what an earlier result feeds a parameter.

    hits = find_key(result, "account_id")   # [Hit(value, path, item, siblings), ...]
    descriptor(hits[0].item, hits[0].siblings, hits[0].value)   # Descriptor("name", "Everyday")
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from prove.graph.chains import Edge
from prove.synth import phrasing as P

__all__ = ["Descriptor", "Fed", "Hit", "base_schema", "descriptor", "feeds_all", "fed_from",
           "field_name", "find_key", "strings", "value_type"]

_DESCRIPTORS = ("name", "full_name", "title", "subject", "display_name", "username", "handle",
                "label", "headline", "nickname", "city", "email", "code", "sku")
_ID_LIKE = re.compile(r"^[A-Z]{2,6}-\d+$|^[0-9a-f]{7,}$")
_WHEN = re.compile(r"^\d{4}-\d\d-\d\d|^\d\d:\d\d")  # a date or a time of day


def base_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema without its `null` option (`X | None` is an anyOf of X and null)."""
    options = [s for s in schema.get("anyOf", ()) if s.get("type") != "null"]
    return {**schema, **options[0]} if options else schema


def value_type(schema: dict[str, Any]) -> str | None:
    """The JSON type of one value of a (base) schema: an array's item type, else its own."""
    if schema.get("type") == "array":
        return base_schema(schema.get("items", {})).get("type")
    return schema.get("type")


@dataclass(frozen=True)
class Hit:
    """One leaf named like the key sought: its value, its path in the result, the object holding
    it and the list that object sits in (None for a value in a list of scalars or a lone object)."""

    value: Any
    path: str
    item: dict[str, Any] | None
    siblings: list[Any] | None


def find_key(node: Any, name: str, path: str = "", parent: list[Any] | None = None) -> list[Hit]:
    """Every scalar leaf under a key `name`, in document order (a list under it gives one per item)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            sub = f"{path}.{k}" if path else k
            if k == name:
                if isinstance(v, list):
                    out.extend(Hit(x, f"{sub}[{i}]", None, v) for i, x in enumerate(v)
                               if isinstance(x, (str, int, float)) and not isinstance(x, bool))
                elif isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    out.append(Hit(v, sub, node, parent))
            elif isinstance(v, (dict, list)):
                out.extend(find_key(v, name, sub, None))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(find_key(v, name, f"{path}[{i}]", node))
    return out


def strings(item: dict[str, Any] | None) -> set[str]:
    """A listed object's string values (ids among them), for telling which objects belong together."""
    return {v for v in item.values() if isinstance(v, str)} if item is not None else set()


@dataclass(frozen=True)
class Descriptor:
    """A field of a listed object and its value, by which a person picks the object out."""

    field: str
    text: str


def descriptor(item: dict[str, Any], siblings: list[Any], value: Any) -> Descriptor | None:
    """The field that tells `item` apart from its siblings, the way a person would pick it out: a
    name or title first, a date or time only when nothing else does (None: nothing does)."""
    others = [s for s in siblings if isinstance(s, dict) and s is not item]
    keys = [k for k in _DESCRIPTORS if k in item] + sorted(k for k in item if k not in _DESCRIPTORS)
    found = []
    for key in keys:
        v = item.get(key)
        if not isinstance(v, str) or v == value or not 3 <= len(v) <= 40 or _ID_LIKE.match(v):
            continue
        if "'" in v or any(o.get(key) == v for o in others):
            continue
        found.append(Descriptor(key, v))
    return next((f for f in found if not _WHEN.match(f.text)), found[0] if found else None)


def field_name(path: str) -> str:
    """The key a result field path ends in: 'accounts[].account_id' -> 'account_id'."""
    return path.split(".")[-1].replace("[]", "")


def feeds_all(result: Any, edges: Iterable[Edge]) -> bool:
    """Whether `result` holds a value for every edge out of its step (by the edge's field, or the
    argument it feeds)."""
    for e in edges:
        if not find_key(result, field_name(e.field or e.argument or "")) \
                and not find_key(result, e.argument or ""):
            return False
    return True


@dataclass(frozen=True)
class Fed:
    """A value an earlier result gives a parameter, and how the user refers to it: `kind` is
    'result-single' (the one value the result holds), 'result-item' (a listed object told apart by
    `info["descr_field"]`) or 'result-ordinal' (the first of several alike)."""

    value: Any
    kind: str
    info: dict[str, Any]


def fed_from(hits: list[Hit], name: str, rng: Any, naming: Mapping[str, str] | None = None,
             entity: str | None = None, owners: Mapping[str, str] | None = None) -> Fed:
    """Which of `hits` (non-empty; the leaves named `name` of one result) a later call uses: the
    one value when they agree, else one of the first eight, described by a field of its object.
    `naming` is what the result declares names its records (`prove.env.types.naming_fields`: the
    descriptor's `descr_how`), `entity` the kind the result declares the leaves are, `owners` the
    kind each listed object's own id declares, by the object's path (`Resolvers.own_kinds`): the
    `item` a described leaf belongs to ('' when its object declares no own id)."""
    naming = naming or {}
    source_entity = P.entity_of(entity) if entity else ""
    if len({repr(h.value) for h in hits}) == 1:
        return Fed(hits[0].value, "result-single", {"source_entity": source_entity})
    hit = hits[rng.randrange(min(len(hits), 8))]
    descr = descriptor(hit.item, hit.siblings or [], hit.value) if hit.item is not None else None
    if descr is None:
        return Fed(hits[0].value, "result-ordinal", {"source_entity": source_entity})
    parent = re.sub(r"\[\d+\]", "[]", hit.path).rsplit(".", 1)[0] if "." in hit.path else ""
    item = (owners or {}).get(parent)
    return Fed(hit.value, "result-item", {"descr_field": descr.field, "descr": descr.text,
                                          "descr_how": naming.get(descr.field),
                                          "source_entity": source_entity,
                                          "item": item.replace("_", " ") if item else ""})
