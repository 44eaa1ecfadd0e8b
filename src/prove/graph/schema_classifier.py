"""The offline, deterministic pair classifier: declared entity joins, read/write, what tools are about.

    from prove.graph.schema_classifier import SchemaClassifier; SchemaClassifier().judge(a, b)

Explicit A -> B is an exact producer -> consumer join (`prove.graph.features.joins`): a result
field of A declares entity kind K and a parameter of B declares K (`flights[].flight_id` ->
`new_flight_id`, both "flight"). The join is kept when the field is new information:
  - not A's own input echoed back (A takes a K id and the field is that id, or A's required input);
  - a write's result feeds only the id of what it created (`book_flight` -> `booking_id`);
  - a reference inside a record (a transaction's `account_id`) feeds only reads, and a reference
    in a list's items only lookups, not listings (`accounts[].customer_id` -> `get_bank_customer`, not
    -> `list_payees`: listings are the tools that return a Page); a list of ids (`free_seats`) is
    a list of candidates and feeds writes too.
With several joins the required parameter first, then B's parameter order, then A's field order.
The judgement carries the join: the parameter (`argument`), the field and the kind.
Implicit A -> B: A is a write and B reads (or checks as a precondition) what A changed: they are
about the same entity, A creates an entity B is about, or B's result counts/reports A's entity
(`open_issues`, `active_bookings`); not a write on what A cancelled or deleted (it would fail).
Explicit wins over implicit; otherwise none. Cross-server pairs are none by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.graph.features import Join, ToolFeatures, joins, server_features
from prove.graph.relations import Judgement

__all__ = ["SchemaClassifier", "feeding_joins"]


def feeding_joins(a: ToolFeatures, b: ToolFeatures) -> list[Join]:
    """The joins of (A, B) whose field carries new information into B, best first."""
    fields = {o.path: (i, o) for i, o in enumerate(a.fields)}
    order = {name: i for i, name in enumerate(b.params)}
    kept = []
    for j in joins(a, b):
        pos, o = fields[j.field]
        p = b.params[j.param]
        if "any" not in (p.scalar_type, o.scalar_type) and p.scalar_type != o.scalar_type:
            continue
        if a.echoes(o):
            continue
        if a.write and not (o.entity in a.created and o.path in a.primary):
            continue  # a write's result feeds only the id of what it created
        if o.path not in a.primary and not o.type.startswith("array<"):
            if b.write:
                continue  # a reference inside a record (a transaction's account) feeds only reads
            if o.in_list and b.pages:
                continue  # a reference in a list's items feeds lookups, not listings by it
        kept.append((not p.required, order[p.name], pos, j))
    return [j for *_, j in sorted(kept, key=lambda k: k[:3])]


class SchemaClassifier:
    """Deterministic pair classifier over declared schemas; features are computed once per server."""

    name = "schema"

    def __init__(self) -> None:
        self._features: dict[str, dict[str, ToolFeatures]] = {}

    def _server(self, server: str, spec: ServerSpec | None = None) -> dict[str, ToolFeatures]:
        if server not in self._features:
            if spec is None:
                from prove.env.registry import load_registry

                spec = load_registry().server(server)
            self._features[server] = server_features(spec)
        return self._features[server]

    def use_server(self, spec: ServerSpec) -> None:
        """Compute features from this ServerSpec (instead of looking it up in the registry)."""
        self._features.pop(spec.name, None)
        self._server(spec.name, spec)

    def features(self, spec: ToolSpec) -> ToolFeatures:
        """The features of one tool (its server's are computed on first use)."""
        return self._server(spec.server)[spec.name]

    def judge(self, a: ToolSpec, b: ToolSpec) -> Judgement:
        """The relation of the ordered pair (a, b)."""
        if a.server != b.server or a.name == b.name:
            why = "different servers" if a.server != b.server else "same tool"
            return Judgement(a.name, b.name, "none", None, why, self.name, a.server)
        feats = self._server(a.server)
        fa, fb = feats[a.name], feats[b.name]
        found = feeding_joins(fa, fb)
        if found:
            j = found[0]
            return Judgement(a.name, b.name, "explicit", j.param,
                             f"{a.name} returns {j.field}, which {b.name} takes as {j.param}",
                             self.name, a.server, j.field, j.kind)
        why = self._implicit(fa, fb)
        if why is not None:
            return Judgement(a.name, b.name, "implicit", None, why, self.name, a.server)
        return Judgement(a.name, b.name, "none", None, "no shared data or state", self.name, a.server)

    async def classify(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]:
        return [self.judge(a, b) for a, b in pairs]

    def classify_sync(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]:
        return [self.judge(a, b) for a, b in pairs]

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
