"""What the classifiers read off a tool: its parameters and output fields with their declared entities.

    from prove.graph.features import server_features; feats = server_features(registry.server("flights"))

Entity facts come from the declarations only: an id parameter or result field names the entity kind
it refers to with ``"x-entity"`` in its JSON schema (`prove.env.types.entity_id`, read with
`declared_entity` through `$ref`, `anyOf` and array items). A parameter without a declaration
names no entity, whatever its name or description says. From the declarations:

- `joins(a, b)`: every (result field of A, parameter of B) pair that declare the same kind;
- `primary`: each result object's own id, the first declared id field of the object (records list
  their own id first; the others are references: a transaction's `account_id`), after a leading
  scope: when every tool taking an issue id also takes a repository id, an issue's `repo` before
  its `number` is the scope and `number` its own id;
- `created`: the kind a write makes, when the first id of its result is of a kind it did not take.

What a *tool* is about (`focus`, for implicit edges) is still read off its name: the nouns of the
name that are an entity kind of the server or shared by several tool names (`get_seat_map`,
`select_seat` -> seat), plus the kinds of its required parameters when no noun of the name is a
kind. `mentions` are the nouns of top-level result fields that declare no entity (`open_issues`,
`active_bookings`): counts a write can change. `removes` reads the verb (cancel, delete...).
These are facts about tools and state, not about what a parameter means.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.env.types import (
    EXAMPLE,
    declared_entity,
    declared_example,
    declared_listed,
    declared_text,
)

__all__ = [
    "Param", "OutField", "Join", "ToolFeatures", "server_features", "parameters", "output_fields",
    "joins", "join_for", "singular", "tokens", "PAGING", "VERBS",
]

PAGING = frozenset({"offset", "limit", "next_offset", "total", "page", "page_size", "cursor"})
"""Parameters/fields that only page through results: never a dependency."""

VERBS = frozenset({
    "get", "list", "search", "find", "view", "show", "create", "add", "remove", "delete", "update",
    "set", "cancel", "book", "make", "send", "edit", "apply", "checkout", "track", "write", "pay",
    "schedule", "transfer", "dispute", "close", "merge", "review", "label", "comment", "respond",
    "reschedule", "select", "check", "redeem", "change", "lock", "unlock", "activate", "publish",
    "archive", "move", "tag", "revert", "block", "pin", "react", "to", "from", "on", "in", "for",
    "of", "the", "and", "my", "new", "by", "with", "at", "into",
})
"""Tool-name tokens that are actions or glue words, not things."""

_REMOVE_VERBS = frozenset({"cancel", "delete", "remove", "close", "archive", "merge", "return"})


def tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_\W]+", name.lower()) if t]


def singular(word: str) -> str:
    """English singular, good enough for tool-name nouns (bookings -> booking, branches -> branch)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@dataclass(frozen=True)
class Param:
    """One input parameter of a tool."""

    name: str
    type: str  # JSON type; arrays are "array<item type>"
    required: bool
    sensitive: bool
    description: str
    enum: bool
    entity: str | None = None  # the declared entity kind (x-entity); None: names no entity
    text: str | None = None  # the declared kind of free text (x-text, prove.env.types.TEXT_KINDS)
    listed: str | None = None  # the listing field whose values it takes (x-listed)
    example: str | None = None  # the declared example value (x-example)

    @property
    def scalar_type(self) -> str:
        return self.type[6:-1] if self.type.startswith("array<") else self.type

    @property
    def identifier(self) -> bool:
        """Names one thing of a declared entity kind (not a filter, count or free text)."""
        return self.entity is not None


@dataclass(frozen=True)
class OutField:
    """One leaf of a tool's output schema, e.g. `flights[].flight_id`."""

    path: str
    name: str
    type: str
    in_list: bool  # inside a list of objects
    description: str
    entity: str | None = None  # the declared entity kind (x-entity)
    nullable: bool = False  # may be null (`X | None`)

    @property
    def scalar_type(self) -> str:
        return self.type[6:-1] if self.type.startswith("array<") else self.type

    @property
    def many(self) -> bool:
        """One of several values: inside a list of objects, or a list of ids (`free_seats`)."""
        return self.in_list or self.type.startswith("array<")

    @property
    def parent(self) -> str:
        """The path of the object this field belongs to ("" for the result itself)."""
        return self.path.rsplit(".", 1)[0] if "." in self.path else ""


@dataclass(frozen=True)
class Join:
    """A's result field `field` produces ids of `kind`; B's parameter `param` takes that kind."""

    field: str
    param: str
    kind: str


@dataclass
class ToolFeatures:
    """A tool seen by the schema classifier."""

    spec: ToolSpec
    params: dict[str, Param]
    fields: list[OutField]
    primary: frozenset[str] = frozenset()  # paths of each object's own id (others are references)
    focus: frozenset[str] = frozenset()  # what the tool is about: entity kinds and name nouns
    created: frozenset[str] = frozenset()  # the entity kind a write makes (a new id in its result)
    mentions: frozenset[str] = frozenset()  # nouns of its top-level non-id fields (counts it reports)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def write(self) -> bool:
        return self.spec.write

    @property
    def param_entity(self) -> dict[str, str]:
        """Declared parameter -> its entity kind."""
        return {p.name: p.entity for p in self.params.values() if p.entity}

    @property
    def field_entity(self) -> dict[str, str]:
        """Declared output field path -> its entity kind."""
        return {o.path: o.entity for o in self.fields if o.entity}

    @property
    def pages(self) -> bool:
        """A listing: its result is a `prove.env.types.Page` (`total`, `next_offset`)."""
        props = (self.spec.output_schema or {}).get("properties", {})
        return "total" in props and "next_offset" in props

    @property
    def kinds_in(self) -> frozenset[str]:
        """The entity kinds this tool takes."""
        return frozenset(self.param_entity.values())

    @property
    def required_entities(self) -> frozenset[str]:
        return frozenset(p.entity for p in self.params.values() if p.entity and p.required)

    @property
    def removes(self) -> bool:
        """A write named for ending something (cancel, delete, close...): counts of it drop."""
        return self.write and bool(set(tokens(self.name)) & _REMOVE_VERBS)

    def echoes(self, out: OutField) -> bool:
        """True when `out` only repeats this tool's own input: the tool takes the same kind, and the
        field is the one result's id or the tool's required input (`transactions[].account_id` of
        `list_bank_transactions(account_id)`); a list under an optional filter is new information."""
        takes = [p for p in self.params.values() if out.entity and p.entity == out.entity]
        return any(p.required or not out.many for p in takes)


def _json_type(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        options = [_resolve(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        schema = options[0] if options else {}
    kind = schema.get("type", "object" if "properties" in schema else "any")
    if kind == "array":
        inner, _ = _json_type(schema.get("items", {}), defs)
        return f"array<{inner}>", schema
    return str(kind), schema


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema


def _walk(schema: Mapping[str, Any], defs: Mapping[str, Any], prefix: str, in_list: bool,
          depth: int) -> Iterator[OutField]:
    kind, resolved = _json_type(schema, defs)
    if kind.startswith("array<") and kind.endswith("object>") and depth < 3:
        yield from _walk(resolved.get("items", {}), defs, prefix + "[]", True, depth)
        return
    props = resolved.get("properties")
    if kind == "object" and props and depth < 3:
        for key, sub in props.items():
            yield from _walk(sub, defs, f"{prefix}.{key}" if prefix else key, in_list, depth + 1)
        return
    name = prefix.rsplit(".", 1)[-1].removesuffix("[]")
    desc = str(schema.get("description") or resolved.get("description") or "")
    nullable = any(s.get("type") == "null" for s in _resolve(schema, defs).get("anyOf", ()))
    yield OutField(prefix, name, kind, in_list, desc, declared_entity(schema, defs), nullable)


def parameters(spec: ToolSpec) -> dict[str, Param]:
    """The tool's input parameters, in signature order, with their declared entity kinds, kinds of
    text, listing fields and examples."""
    schema = spec.input_schema
    defs = schema.get("$defs", {})
    out: dict[str, Param] = {}
    for name, sub in schema.get("properties", {}).items():
        kind, resolved = _json_type(sub, defs)
        desc = str(sub.get("description") or resolved.get("description") or "")
        enum = "enum" in resolved or "enum" in _resolve(resolved.get("items", {}), defs)
        # a role's own description (Annotated[AccountId | None, Field(description=...)]) replaces
        # the alias's, and its example with it: the example is declared where the description is
        example = sub.get(EXAMPLE) if "description" in sub else declared_example(sub)
        out[name] = Param(name, kind, name in spec.required, name in spec.sensitive, desc, enum,
                          declared_entity(sub, defs), declared_text(sub), declared_listed(sub),
                          None if example is None else str(example))
    return out


def output_fields(spec: ToolSpec) -> list[OutField]:
    """The leaves of the tool's output schema (paging fields dropped), in schema order."""
    schema = spec.output_schema or {}
    if not schema:
        return []
    fields = list(_walk(schema, schema.get("$defs", {}), "", False, 0))
    return [f for f in fields if f.name and f.name not in PAGING]


def joins(a: ToolFeatures, b: ToolFeatures) -> list[Join]:
    """Every (result field of A, parameter of B) that declare the same entity kind, in B's parameter
    order then A's field order. Same-server pairs only: kinds are local to a server."""
    if a.spec.server != b.spec.server:
        return []
    return [Join(o.path, p.name, p.entity) for p in b.params.values() if p.entity
            for o in a.fields if o.entity == p.entity]


def join_for(a: ToolSpec, b: ToolSpec, param: str) -> Join | None:
    """The declared join feeding B's `param` from A's result, for an edge that names only the
    parameter (an LLM's answer, a hand-written edge): A's first field of the parameter's kind that
    is not A's input echoed back, else its first field of that kind; None when the parameter
    declares no kind, A returns none of it, or the tools are on different servers."""
    p = parameters(b).get(param)
    if a.server != b.server or p is None or p.entity is None:
        return None
    fa = ToolFeatures(a, parameters(a), output_fields(a))
    same = [o for o in fa.fields if o.entity == p.entity]
    fresh = [o for o in same if not fa.echoes(o)]
    return Join((fresh or same)[0].path, param, p.entity) if same else None


def server_features(server: ServerSpec) -> dict[str, ToolFeatures]:
    """Features of every tool of one server (focus and mentions need the whole server's names)."""
    feats = {t.name: ToolFeatures(t, parameters(t), output_fields(t)) for t in server.tools}
    kinds = _kinds(feats.values())
    scopes = _scopes(feats.values())
    names = _name_vocabulary(feats.values(), kinds) - ({server.name, singular(server.name)} - kinds)
    for f in feats.values():
        f.primary = _primary_fields(f, scopes)
        f.created = _created(f)
        f.focus = _focus(f, names, kinds)
        f.mentions = frozenset(
            singular(t) for o in f.fields if not o.many and "." not in o.path and o.entity is None
            for t in tokens(o.name)[1:] if singular(t) in names
        )
    return feats


def _kinds(feats: Iterable[ToolFeatures]) -> frozenset[str]:
    """Every entity kind a tool of the server declares (taken or returned)."""
    return frozenset(e for f in feats for e in (*f.param_entity.values(), *f.field_entity.values()))


def _name_vocabulary(feats: Iterable[ToolFeatures], kinds: frozenset[str]) -> set[str]:
    """Entity kinds plus nouns used by 2+ tool names but not by most (drops 'chat', 'wiki' prefixes)."""
    feats = list(feats)
    counts = Counter(t for f in feats for t in {singular(x) for x in tokens(f.name)} - VERBS)
    limit = max(2, int(0.4 * len(feats)))
    return set(kinds) | {t for t, n in counts.items() if 2 <= n <= limit}


def _scopes(feats: Iterable[ToolFeatures]) -> frozenset[tuple[str, str]]:
    """(S, K): every tool of the server that takes a K id also takes an S id, so K ids are only
    unique within an S (an issue number within a repository)."""
    takers: dict[str, list[frozenset[str]]] = {}
    for f in feats:
        for k in f.kinds_in:
            takers.setdefault(k, []).append(f.kinds_in)
    return frozenset((s, k) for k, sets in takers.items() for s in frozenset.intersection(*sets)
                     if s != k)


def _primary_fields(f: ToolFeatures, scopes: frozenset[tuple[str, str]] = frozenset()
                    ) -> frozenset[str]:
    """Each object's own id: the first declared id field of the result and of each nested object,
    after a leading scope (an issue's `repo` before its `number`, a non-null id the scope keys)."""
    objects: dict[str, list[OutField]] = {}
    for o in f.fields:
        if o.entity is not None and not o.type.startswith("array<"):
            objects.setdefault(o.parent, []).append(o)
    own = []
    for ids in objects.values():
        for i, o in enumerate(ids):
            if not any((o.entity, q.entity) in scopes and not q.nullable for q in ids[i + 1:]):
                own.append(o.path)
                break
    return frozenset(own)


def _created(f: ToolFeatures) -> frozenset[str]:
    """For a write: the kind of its result's own id when it took no id of that kind (a transfer
    makes a transaction; cancelling a payment returns the payment it was given)."""
    if not f.write:
        return frozenset()
    own = next((o for o in f.fields if o.path in f.primary and o.parent == ""), None)
    if own is not None and own.entity not in f.kinds_in:
        return frozenset({own.entity})  # type: ignore[arg-type]
    return frozenset()


def _focus(f: ToolFeatures, names: set[str], kinds: frozenset[str]) -> frozenset[str]:
    """What the tool is about: the nouns of its name that are kinds or shared name nouns (an
    n-gram with its last word singular; a noun names the kinds it ends: `schedule_payment` ->
    scheduled_payment), the kind of the record its result is when that is one of its inputs
    (`select_seat` changes a booking, `get_seat_map` reads a flight), and its required kinds when
    no noun of the name is a kind (`transfer_funds` is about accounts); else its result's own id."""
    words = tokens(f.name)
    found = {"_".join([*words[i:j - 1], singular(words[j - 1])]) for i in range(len(words))
             for j in range(i + 1, len(words) + 1)}
    found &= names
    found |= {k for k in kinds for g in found if k.endswith("_" + g)}
    own = next((o.entity for o in f.fields if o.path in f.primary and o.parent == ""), None)
    if own in f.required_entities:
        found.add(own)  # type: ignore[arg-type]
    if not found & kinds:
        found |= f.required_entities
    if found:
        return frozenset(found)
    return frozenset([own] if own else [])
