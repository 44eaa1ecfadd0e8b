"""What the classifiers read off a tool: its parameters, flattened output fields and entities.

    from prove.graph.features import server_features; feats = server_features(registry.server("flights"))

Everything here is derived from the ToolSpec (input/output JSON schemas, descriptions, read/write
and sensitive marks); nothing is hand-listed per server. An *entity* is the thing an identifier
names ("flight" for `flight_id`, `new_flight_id` or a description mentioning 'FLT-0012').
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec

__all__ = [
    "Param", "OutField", "ToolFeatures", "server_features", "parameters", "output_fields",
    "singular", "tokens", "PAGING", "VERBS",
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
_EXAMPLE_ID = re.compile(r"'([A-Z]{2,5})-\d{2,}'")
_ENTITY_ID_DESC = re.compile(r"(?:the |an? )?([a-z][a-z ]*?)(?:'s)? id\b", re.I)
_ID_SUFFIXES = ("_id", "_ids")
_IDENT_NAMES = ("sku", "sha", "number", "code", "key", "email", "repo", "handle")


def tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_\W]+", name.lower()) if t]


def singular(word: str) -> str:
    """English singular, good enough for field names (bookings -> booking, branches -> branch)."""
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
    id_prefix: str | None  # 'FLT' when the description shows an id like 'FLT-0012'

    @property
    def scalar_type(self) -> str:
        return self.type[6:-1] if self.type.startswith("array<") else self.type

    @property
    def identifier(self) -> bool:
        """Names one thing: an id, a code, an email, a key (not a filter, count or free text)."""
        if self.enum or self.scalar_type == "boolean" or self.name in PAGING:
            return False
        last = tokens(self.name)[-1] if tokens(self.name) else ""
        return (self.name.endswith(_ID_SUFFIXES) or singular(last) in _IDENT_NAMES
                or self.id_prefix is not None)


@dataclass(frozen=True)
class OutField:
    """One leaf of a tool's output schema, e.g. `flights[].flight_id`."""

    path: str
    name: str
    type: str
    in_list: bool
    description: str

    @property
    def scalar_type(self) -> str:
        return self.type[6:-1] if self.type.startswith("array<") else self.type


@dataclass
class ToolFeatures:
    """A tool seen by the schema classifier."""

    spec: ToolSpec
    params: dict[str, Param]
    fields: list[OutField]
    param_entity: dict[str, str] = field(default_factory=dict)  # identifier param -> entity
    field_entity: dict[str, str] = field(default_factory=dict)  # field path -> entity
    primary: frozenset[str] = frozenset()  # paths of each object's own id (others are references)
    focus: frozenset[str] = frozenset()  # the entities this tool is about
    created: frozenset[str] = frozenset()  # entities a write makes (new id in its result)
    mentions: frozenset[str] = frozenset()  # entities its top-level non-id fields count/report

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def write(self) -> bool:
        return self.spec.write

    @property
    def required_entities(self) -> frozenset[str]:
        return frozenset(e for p, e in self.param_entity.items() if self.params[p].required)

    @property
    def removes(self) -> bool:
        """A write named for ending something (cancel, delete, close...): counts of it drop."""
        return self.write and bool(set(tokens(self.name)) & _REMOVE_VERBS)

    def echoes(self, out: OutField) -> bool:
        """True when `out` only repeats this tool's own input (not new information)."""
        p = self.params.get(out.name)
        if p is None:
            return False
        return p.required or not out.in_list


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
    kind, schema = _json_type(schema, defs)
    if kind.startswith("array<") and kind.endswith("object>") and depth < 3:
        yield from _walk(schema.get("items", {}), defs, prefix + "[]", True, depth)
        return
    props = schema.get("properties")
    if kind == "object" and props and depth < 3:
        for key, sub in props.items():
            yield from _walk(sub, defs, f"{prefix}.{key}" if prefix else key, in_list, depth + 1)
        return
    name = prefix.rsplit(".", 1)[-1].removesuffix("[]")
    yield OutField(prefix, name, kind, in_list, str(schema.get("description", "")))


def parameters(spec: ToolSpec) -> dict[str, Param]:
    """The tool's input parameters, in signature order."""
    schema = spec.input_schema
    defs = schema.get("$defs", {})
    out: dict[str, Param] = {}
    for name, sub in schema.get("properties", {}).items():
        kind, resolved = _json_type(sub, defs)
        desc = str(sub.get("description") or resolved.get("description") or "")
        enum = "enum" in resolved or "enum" in _resolve(resolved.get("items", {}), defs)
        prefix = _EXAMPLE_ID.search(desc)
        out[name] = Param(name, kind, name in spec.required, name in spec.sensitive, desc, enum,
                          prefix.group(1) if prefix else None)
    return out


def output_fields(spec: ToolSpec) -> list[OutField]:
    """The leaves of the tool's output schema (paging fields dropped)."""
    schema = spec.output_schema or {}
    if not schema:
        return []
    fields = list(_walk(schema, schema.get("$defs", {}), "", False, 0))
    return [f for f in fields if f.name and f.name not in PAGING]


def server_features(server: ServerSpec) -> dict[str, ToolFeatures]:
    """Features of every tool of one server, with entities resolved against the whole server."""
    feats = {t.name: ToolFeatures(t, parameters(t), output_fields(t)) for t in server.tools}
    vocab = _entity_vocabulary(feats.values())
    prefix_entity = _prefix_entities(feats.values(), vocab)
    name_vocab = _name_vocabulary(feats.values(), vocab) - ({server.name, singular(server.name)} - vocab)
    listed = {singular(part[:-2].rsplit("_", 1)[-1]) for f in feats.values() for o in f.fields
              for part in o.path.split(".")[:-1] if part.endswith("[]")}
    for f in feats.values():
        for p in f.params.values():
            if p.identifier:
                f.param_entity[p.name] = _entity_of(p.name, p.description, p.id_prefix, vocab,
                                                    prefix_entity)
        for o in f.fields:
            ent = _field_entity(o, vocab)
            if ent:
                f.field_entity[o.path] = ent
        f.primary = _primary_fields(f, listed)
        f.focus = _focus(f, name_vocab, vocab)
    numbered = {e for f in feats.values() for e in f.param_entity.values() if e.endswith("_number")}
    for f in feats.values():
        for path, entity in list(f.field_entity.items()):
            if entity == "number":  # a result's own `number`: whose, from what the tool is about
                owners = sorted(f"{x}_number" for x in f.focus if f"{x}_number" in numbered)
                if len(owners) == 1:
                    f.field_entity[path] = owners[0]
    for f in feats.values():
        f.created = _created(f)
        f.mentions = frozenset(
            singular(t) for o in f.fields if not o.in_list and "." not in o.path
            and not o.name.endswith(_ID_SUFFIXES) for t in tokens(o.name)[1:]
            if singular(t) in name_vocab
        )
    return feats


def _entity_vocabulary(feats: Any) -> set[str]:
    """Entities of the server: stems of `<x>_id` output fields and singular list names."""
    stems: set[str] = set()
    vocab: set[str] = set()
    for f in feats:
        for o in f.fields:
            if o.name.endswith("_id"):
                stems.add(o.name[:-3])
            last = tokens(o.name)[-1] if tokens(o.name) else ""
            if o.name in _IDENT_NAMES or singular(last) in ("email", "sku", "handle"):
                vocab.add(singular(last))
            for part in o.path.split(".")[:-1]:
                if part.endswith("[]"):
                    vocab.add(singular(part[:-2]))
    for stem in stems:  # from_account, previous_flight: a role on a known entity, not an entity
        parts = stem.split("_")
        if not any("_".join(parts[i:]) in stems for i in range(1, len(parts))):
            vocab.add(stem)
    return vocab


def _prefix_entities(feats: Any, vocab: set[str]) -> dict[str, str]:
    """'FLT' -> 'flight', learnt from parameters named exactly `<entity>_id` with an example id."""
    votes: dict[str, Counter[str]] = {}
    for f in feats:
        for p in f.params.values():
            if p.id_prefix and p.name.endswith("_id") and p.name[:-3] in vocab:
                votes.setdefault(p.id_prefix, Counter())[p.name[:-3]] += 1
    return {k: v.most_common(1)[0][0] for k, v in sorted(votes.items())}


def _name_vocabulary(feats: Any, vocab: set[str]) -> set[str]:
    """Entities plus nouns used by 2+ tool names but not by most (drops 'chat', 'wiki' prefixes)."""
    feats = list(feats)
    counts = Counter(t for f in feats for t in {singular(x) for x in tokens(f.name)} - VERBS)
    limit = max(2, int(0.4 * len(feats)))
    return vocab | {t for t, n in counts.items() if 2 <= n <= limit}


def _entity_of(name: str, description: str, prefix: str | None, vocab: set[str],
               prefix_entity: Mapping[str, str]) -> str:
    """The entity an identifier parameter names, best evidence first."""
    if prefix and prefix in prefix_entity:
        return prefix_entity[prefix]
    parts = tokens(name)
    if parts and parts[-1] in ("id", "ids"):
        parts = parts[:-1]
    if parts == ["number"]:  # "Pull request number within the repository" -> pull_request_number
        words = tokens(description)
        for size in (2, 1):
            phrase = "_".join(singular(w) for w in words[:size])
            if len(words) >= size and phrase in vocab:
                return f"{phrase}_number"
        return "number"
    if parts and singular(parts[-1]) in ("email", "number", "code", "sku", "sha", "key", "handle"):
        if "_".join(parts) in vocab:
            return "_".join(parts)
        return singular(parts[-1]) if parts[-1] != "number" else "_".join(parts)
    for start in range(len(parts)):  # strip role words: new_flight -> flight, reply_to_message
        stem = "_".join(parts[start:])
        if stem in vocab or singular(stem) in vocab:
            return stem if stem in vocab else singular(stem)
    words = tokens(description)
    for i, word in enumerate(words[:-1]):  # "User ids to add ..." -> user
        if words[i + 1] in ("id", "ids") and singular(word) in vocab:
            return singular(word)
    for word in words[:3]:
        if singular(word) in vocab:
            return singular(word)
    for word in parts:  # "repo" ~ "repository"
        for ent in sorted(vocab):
            if len(word) >= 4 and (ent.startswith(word) or word.startswith(ent)):
                return ent
    return "_".join(parts) or name


def _field_entity(o: OutField, vocab: set[str]) -> str | None:
    """The entity an output field identifies, or None when it is not an identifier."""
    if o.scalar_type not in ("string", "integer"):
        return None
    if o.name.endswith("_id"):
        parts = tokens(o.name[:-3])
        for start in range(len(parts)):
            stem = "_".join(parts[start:])
            if stem in vocab:
                return stem
        return o.name[:-3]
    match = _ENTITY_ID_DESC.search(o.description)
    if match and " id" in o.description.lower():  # "'owner/name', the repository's id."
        word = match.group(1).split()[-1].lower()
        for ent in sorted(vocab):
            if ent == word or (len(ent) >= 4 and word.startswith(ent)):
                return ent
        return word
    last = tokens(o.name)[-1] if tokens(o.name) else ""
    if singular(last) in ("email", "sku", "sha", "code", "key", "handle"):
        return singular(last)
    if last == "number" and o.scalar_type == "integer":
        parent = o.path.rsplit(".", 1)[0] if "." in o.path else ""
        owner = singular(parent.removesuffix("[]").rsplit(".", 1)[-1]) if parent else ""
        return f"{owner}_number" if owner else "number"
    if o.name.endswith("_number"):
        return o.name
    return None


def _primary_fields(f: ToolFeatures, listed: set[str]) -> frozenset[str]:
    """Each object's own id: the first identifier field of the result and of each nested object,
    unless it names another listed entity (`reactions[].user_id` is who reacted, not the reaction)."""
    seen: dict[str, str | None] = {}
    for o in f.fields:
        parent = o.path.rsplit(".", 1)[0] if "." in o.path else ""
        entity = f.field_entity.get(o.path)
        if parent in seen or entity is None:
            continue
        container = singular(parent.rsplit(".", 1)[-1].removesuffix("[]")) if parent else ""
        own = (not parent or entity == container or entity == container.rsplit("_", 1)[-1]
               or entity not in listed)
        seen[parent] = o.path if own else None
    return frozenset(p for p in seen.values() if p)


def _focus(f: ToolFeatures, name_vocab: set[str], vocab: set[str]) -> frozenset[str]:
    """Entities the tool is about: nouns of its name, plus its required ids when no noun of the
    name is an entity with an id (`select_seat` is about a seat of a booking); else its result's id."""
    words = tokens(f.name)
    found = {"_".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)
             if "_".join(words[i:j]) in name_vocab}
    found |= {singular(w) for w in words if singular(w) in name_vocab and w not in VERBS}
    if not found & vocab:
        found |= f.required_entities
    if found:
        return frozenset(found)
    top = [e for path, e in f.field_entity.items() if "." not in path and "[]" not in path]
    return frozenset(top[:1])


def _created(f: ToolFeatures) -> frozenset[str]:
    """For a write: the entity whose fresh id its result returns (a transfer makes a transaction)."""
    if not f.write:
        return frozenset()
    for o in f.fields:
        if "." in o.path or o.in_list:
            continue
        ent = f.field_entity.get(o.path)
        if ent and o.path in f.primary and o.name not in f.params:
            return frozenset({ent})
        if ent:
            break  # the result's own id is an input: it changed an existing thing
    return frozenset()
