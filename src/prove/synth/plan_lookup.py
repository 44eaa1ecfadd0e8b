"""Lookups for the planner: which listings find an entity by name, what to call them with, which
listed object the user names, and which ids belong with the conversation's.

    for r in Resolvers()(registry.server("banking"), "account"):   # Resolver(tool, id_field)
        for arguments in listing_arguments(registry.tool(r.tool), feats, known): ...
    pick_named(find_key(result, r.id_field), Pick(...), rng)        # Named(value, descriptor)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.graph.features import PAGING, Param, server_features
from prove.synth.plan_results import Descriptor, Hit, descriptor, find_key, strings

__all__ = ["Belonging", "CARRIED_KINDS", "Named", "Pick", "Resolver", "Resolvers", "carried",
           "listing_arguments", "name_unserved", "pick_named"]


CARRIED_KINDS: frozenset[str] = frozenset({
    # printed on a receipt, a confirmation email or a boarding pass: people quote these numbers
    "order", "trade_order", "booking", "reservation", "rental", "ticket", "product_return",
    "expense_report", "flight_number", "seat", "airport", "promo_code", "coupon",
    # what developers say by number or hash
    "pull_request", "issue", "commit", "pipeline_run", "revision_number",
    # an email address is one's own to give
    "customer_email", "guest_email", "user_email",
})
"""Entity kinds whose ids people carry (declared once, by the kinds' names in the servers'
`entity_id` declarations): a user may give these as written; a thing of any other kind (an
account, a page, a device, the user themself) is named, and a listing resolves it where one can."""


def carried(kind: str | None) -> bool:
    """Whether people carry ids of `kind` (``CARRIED_KINDS``)."""
    return kind in CARRIED_KINDS


@dataclass(frozen=True)
class Resolver:
    """A listing that shows things of one kind by name: the tool, and its listed objects' id field."""

    tool: str
    id_field: str


class Resolvers:
    """Per (server, entity kind): the listings that show things of that kind by name. A listing
    qualifies when it is a read that pages, is about the kind (`focus`: a review listing's objects
    start with the guest's id but describe reviews), each listed object's own id is of the kind,
    and it takes no id of that kind itself (the children of a page are not a way to find a page by
    name). Read once per server."""

    def __init__(self) -> None:
        self._by_server: dict[str, dict[str, list[Resolver]]] = {}
        self._owners: dict[str, dict[str, dict[str, str]]] = {}

    def own_kinds(self, server: ServerSpec, tool: str) -> dict[str, str]:
        """Of `tool`'s result: each object's path ("transactions[]", "" for the result itself) ->
        the kind its own id declares (`prove.graph.features` `primary`), never read off a key's name."""
        found = self._owners.get(server.name)
        if found is None:
            found = self._owners[server.name] = {
                f.name: {o.parent: o.entity for o in f.fields if o.path in f.primary and o.entity}
                for f in server_features(server).values()}
        return found.get(tool, {})

    def __call__(self, server: ServerSpec, kind: str) -> list[Resolver]:
        found = self._by_server.get(server.name)
        if found is None:
            found = self._by_server[server.name] = {}
            for f in server_features(server).values():
                if f.write or not f.pages:
                    continue
                for o in f.fields:
                    if o.entity and o.in_list and o.path in f.primary and o.entity not in f.kinds_in \
                            and o.entity in f.focus:
                        found.setdefault(o.entity, []).append(Resolver(f.name, o.name))
        return found.get(kind, [])


@dataclass(frozen=True)
class Belonging:
    """Whether an id fits the conversation's world: one record of the seed's state holds it and
    an id the conversation uses (`StateLinks`: the guest's own reservation), or the listed object
    it comes from holds one, or a probe showed it beside one. Ids made during the conversation are
    not in the initial state; the probe and the listing cover those."""

    held: dict[str, frozenset[int]]  # 'kind:id' -> records of the seed's state holding it
    mine: frozenset[int]  # the records holding an id the conversation uses
    ids: set[str]  # the ids the conversation uses
    attrs: dict[str, frozenset[str]]  # probe: id -> the short strings shown beside it

    @classmethod
    def of(cls, held: dict[str, frozenset[int]], used: list[tuple[str, Any]],
           attrs: dict[str, frozenset[str]]) -> Belonging:
        """The world of the (entity kind, id) pairs a conversation uses, over one seed's records."""
        mine = frozenset().union(*(held.get(f"{k}:{v}", frozenset()) for k, v in used))
        return cls(held, mine, {str(v) for _, v in used}, attrs)

    def __call__(self, kind: str, value: Any, item: dict[str, Any] | None = None) -> bool:
        return bool(self.held.get(f"{kind}:{value}", frozenset()) & self.mine
                    or strings(item) & self.ids or self.attrs.get(str(value), frozenset()) & self.ids)

    def linked(self, kind: str) -> list[str]:
        """The ids of `kind` in the seed's state that one record links to the conversation's."""
        prefix = f"{kind}:"
        return sorted(k[len(prefix):] for k, recs in self.held.items()
                      if k.startswith(prefix) and recs & self.mine)


def listing_arguments(listing: ToolSpec, feats: dict[str, Param], known: dict[str, Any]
                      ) -> list[dict[str, Any]]:
    """The arguments to call a listing with, scoped by the ids the conversation knows (entity kind
    -> id): every parameter it can fill, then only the required ones when that differs; none when
    a required parameter names a kind the conversation has no id of."""
    scoped = {q: known[f.entity] for q, f in feats.items()
              if q not in PAGING and f.entity in known and f.type in ("string", "integer")}
    if not set(listing.required) <= set(scoped):
        return []
    required = {q: scoped[q] for q in listing.required}
    return [scoped] + ([required] if set(scoped) - set(listing.required) else [])


@dataclass(frozen=True)
class Pick:
    """What decides which listed id the user names: the parameter's entity kind and JSON type
    ('string' or 'integer'), the call's other arguments (a second id of the kind differs from
    them), the world it should belong to, and the values the fork already rejected (as repr)."""

    kind: str
    json_type: str
    args: dict[str, Any]
    belongs: Belonging | None
    bad: set[str]
    allowed: frozenset[str] | None = None  # an error listed the valid ids (as repr): one of them


@dataclass(frozen=True)
class Named:
    """A listed id the user gives by name: the id and the field they name it by."""

    value: Any
    descriptor: Descriptor


def pick_named(hits: list[Hit], pick: Pick, rng: Any) -> Named | None:
    """One of a listing's ids (`hits` of its id field) that the user can name: listed in an object
    a field tells apart from its siblings, of the parameter's type, not rejected, preferably not
    already an argument and belonging to the conversation's world; drawn among the first eight."""
    wanted = str if pick.json_type == "string" else int
    hits = [h for h in hits if h.item is not None and isinstance(h.value, wanted)
            and repr(h.value) not in pick.bad and (pick.allowed is None or repr(h.value) in pick.allowed)]
    hits = [h for h in hits if h.value not in pick.args.values()] or hits
    if pick.belongs is not None:
        hits = [h for h in hits if pick.belongs(pick.kind, h.value, h.item)] or hits
    for h in rng.sample(hits[:8], min(len(hits), 8)):
        descr = descriptor(h.item, h.siblings or [], h.value)
        if descr is not None:
            return Named(h.value, descr)
    return None


def name_unserved(hub: Any, server: ServerSpec, resolvers: Resolvers, params: Any, kind: str,
                  json_type: str, known: dict[str, Any], episode: str, rng: Any, value: Any
                  ) -> Named | None:
    """`value` (an id of `kind`) as a request no tool will serve names it (an off-topic request):
    by what tells its object apart in a listing of its kind called on `episode` (scoped by `known`,
    entity kind -> id, as for a lookup); None when no listing shows it apart from the others.
    No call is recorded: the request is refused, so nothing resolves the name."""
    pick = Pick(kind, json_type, {}, None, set(), frozenset({repr(value)}))
    for resolver in resolvers(server, kind):
        listing = hub.registry.tool(resolver.tool)
        for rargs in listing_arguments(listing, params(listing), known):
            logged = hub.call(resolver.tool, rargs, episode_id=episode)
            if logged["ok"]:
                named = pick_named(find_key(logged["result"], resolver.id_field), pick, rng)
                if named is not None:
                    return named
    return None
