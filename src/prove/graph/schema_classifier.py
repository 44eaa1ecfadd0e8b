"""The offline, deterministic pair classifier: output fields vs parameters, read/write, entities.

    from prove.graph.schema_classifier import SchemaClassifier; SchemaClassifier().judge(a, b)

Explicit A -> B (A's result feeds B's `argument`): a field of A's output that is new information
(not A's own input echoed back) matches a parameter of B that names a thing
  - by entity: both identify the same entity (`flights[].flight_id` -> `new_flight_id`,
    `people[].email` -> `attendee_emails`, `full_name` "the repository's id" -> `repo`), or
  - by value: B's free-string parameter (a seat, a start time) and a list of candidates in A's
    result with that name (`free_seats` -> `seat`, `slots[].start` -> `start`),
with compatible JSON types. A write's result feeds only the id of what it created (`book_flight`
-> `booking_id`); a reference inside a record (a transaction's `account_id`) feeds only reads.
Paging fields, enums, booleans and numbers a user picks never count, nor a write's own data
fields (an account number to save is the user's, not a tool's).
Implicit A -> B: A is a write and B reads (or checks as a precondition) what A changed: they are
about the same entity, A creates an entity B is about, or B's result counts/reports A's entity
(`open_issues`, `active_bookings`); not a write on what A cancelled or deleted (it would fail).
Explicit wins over implicit; otherwise none. Cross-server pairs are none by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.graph.features import OutField, Param, ToolFeatures, server_features, singular, tokens
from prove.graph.relations import Judgement

__all__ = ["SchemaClassifier"]


def _types_match(p: Param, o: OutField) -> bool:
    if "any" in (p.scalar_type, o.scalar_type):
        return True
    return p.scalar_type == o.scalar_type


def _feedable(b: ToolFeatures, p: Param, vocab_entities: frozenset[str]) -> str | None:
    """'id' when B's parameter names a thing a tool can return, 'value' for a picked string, else None."""
    if p.identifier:
        entity = b.param_entity.get(p.name, "")
        if b.write and entity not in vocab_entities:
            return None  # a write's own data (account_number to save, a door code): the user's
        return "id"
    if p.sensitive and p.scalar_type == "string" and not p.enum:
        return "value"
    return None


def _match(a: ToolFeatures, b: ToolFeatures, p: Param, kind: str, o: OutField) -> int:
    """Strength of `o` (a field of A) as the source of `p` (a parameter of B): 0 = no match."""
    if not _types_match(p, o) or a.echoes(o):
        return 0
    if a.write and not (a.field_entity.get(o.path) in a.created and o.path in a.primary):
        return 0  # a write's result feeds only the id of what it created
    if kind == "id" and o.path not in a.primary and b.write:
        return 0  # a reference inside a record (a transaction's account) feeds only reads
    if kind == "id":
        ent_p, ent_o = b.param_entity.get(p.name), a.field_entity.get(o.path)
        if ent_p and ent_o:
            return 3 if ent_p == ent_o else 0
        if o.name == p.name or p.name.endswith("_" + o.name):
            return 2
        return 0
    # A picked value comes from a list of candidates: a list of strings (`free_seats`), items
    # without an id of their own (`slots[].start`), or the items' ids (`airports[].code`).
    parent = o.path.rsplit(".", 1)[0] if "." in o.path else ""
    own_id = any(x.startswith(parent + ".") for x in a.primary) if parent else False
    candidates = o.type.startswith("array<") or (o.in_list and (not own_id or o.path in a.primary))
    if not candidates:
        return 0
    last = singular(tokens(o.name)[-1]) if tokens(o.name) else ""
    if o.name == p.name or last == p.name:
        return 2
    if o.path in a.primary and o.name in tokens(p.description):  # origin: "IATA code" <- code
        return 1
    return 0


class SchemaClassifier:
    """Deterministic pair classifier over schemas; features are computed once per server."""

    name = "schema"

    def __init__(self) -> None:
        self._features: dict[str, dict[str, ToolFeatures]] = {}
        self._entities: dict[str, frozenset[str]] = {}

    def _server(self, server: str, spec: ServerSpec | None = None) -> dict[str, ToolFeatures]:
        if server not in self._features:
            if spec is None:
                from prove.env.registry import load_registry

                spec = load_registry().server(server)
            feats = server_features(spec)
            self._features[server] = feats
            self._entities[server] = frozenset(
                e for f in feats.values() for e in f.field_entity.values()
            )
        return self._features[server]

    def use_server(self, spec: ServerSpec) -> None:
        """Compute features from this ServerSpec (instead of looking it up in the registry)."""
        self._features.pop(spec.name, None)
        self._server(spec.name, spec)

    def judge(self, a: ToolSpec, b: ToolSpec) -> Judgement:
        """The relation of the ordered pair (a, b)."""
        if a.server != b.server or a.name == b.name:
            why = "different servers" if a.server != b.server else "same tool"
            return Judgement(a.name, b.name, "none", None, why, self.name, a.server)
        feats = self._server(a.server)
        fa, fb = feats[a.name], feats[b.name]
        found = self._explicit(fa, fb, self._entities[a.server])
        if found is not None:
            param, field = found
            return Judgement(a.name, b.name, "explicit", param,
                             f"{a.name} returns {field}, which {b.name} takes as {param}",
                             self.name, a.server)
        why = self._implicit(fa, fb)
        if why is not None:
            return Judgement(a.name, b.name, "implicit", None, why, self.name, a.server)
        return Judgement(a.name, b.name, "none", None, "no shared data or state", self.name, a.server)

    async def classify(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]:
        return [self.judge(a, b) for a, b in pairs]

    def classify_sync(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]:
        return [self.judge(a, b) for a, b in pairs]

    @staticmethod
    def _explicit(a: ToolFeatures, b: ToolFeatures, entities: frozenset[str]) -> tuple[str, str] | None:
        best: tuple[int, int, int, str, str] | None = None
        for order, p in enumerate(b.params.values()):
            kind = _feedable(b, p, entities)
            if kind is None:
                continue
            for o in a.fields:
                score = _match(a, b, p, kind, o)
                if score and (best is None or (score, p.required, -order) > best[:3]):
                    best = (score, p.required, -order, p.name, o.path)
        return None if best is None else (best[3], best[4])

    @staticmethod
    def _implicit(a: ToolFeatures, b: ToolFeatures) -> str | None:
        if not a.write:
            return None
        verb = "checks" if b.write else "reads"
        shared = sorted((a.focus | a.created) & b.focus)
        if shared and a.removes and b.write and not (a.created & b.focus):
            return None  # a write on what A cancelled/deleted fails: not a useful dependency
        if shared:
            return f"{a.name} changes {shared[0]} state that {b.name} {verb}"
        counts = a.created if a.created or not a.removes else a.focus
        counted = sorted(counts & b.mentions) if (a.created or a.removes) else []
        if counted and not b.write:
            return f"{b.name} reports {counted[0]} figures that {a.name} changes"
        return None
