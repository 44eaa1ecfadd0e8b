"""Live state sampling: probe a fresh episode with read tools for entities that really exist.

    sampler = LiveSampler(hub); ctx = sampler.context(["banking"], seed=7)
    ctx.candidates(param_source(spec, "to_account_id"))  # [(value, probe call index), ...]: '@account'

For each server of a chain, a fresh episode of the seed is opened and its read tools are called:
first every read without required parameters (list/search tools), then each read whose required
ids can be filled from those results (a second hop: transactions of an account, cards of an
account). Ids in the results are indexed by their declared entity kind (key ``@<kind>``, read off
the tool's output schema, `prove.env.types`), every other scalar by the field it sits under, each
with the probe call that produced it; the enum values of the tools' schemas are added. A
parameter is filled from what it declares (`param_source`): an id by its entity kind, a value by
the listing field it names (``x-listed``, `prove.env.types.text`); never by its name. The probe is a
pure function of (server, seed), so it is memoised per sampler; the episode is closed afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from prove.env.hub import Hub
from prove.env.registry import Registry
from prove.env.sampling import ValuePool
from prove.env.tool import ToolSpec
from prove.env.types import declared_entity, declared_listed, entity_values, state_schema
from prove.graph.features import PAGING
from prove.synth.records import derived_rng

__all__ = ["SamplingContext", "LiveSampler", "StateLinks", "walk_scalars", "schema_enum", "kind_key",
           "param_kind", "param_source"]


def kind_key(kind: str) -> str:
    """The key ids of an entity kind are stored under in `SamplingContext.values` ('@account')."""
    return f"@{kind}"


def param_kind(spec: ToolSpec, param: str) -> str | None:
    """The entity kind a parameter of `spec` declares, or None."""
    schema = spec.input_schema
    return declared_entity(schema.get("properties", {}).get(param, {}), schema.get("$defs"))


def param_source(spec: ToolSpec, param: str) -> str | None:
    """Where the sampled values for a parameter of `spec` are kept in `SamplingContext.values`:
    its declared entity kind ('@account'), else the listing field it declares (``x-listed``:
    'city'), else None (nothing sampled fills it)."""
    kind = param_kind(spec, param)
    if kind is not None:
        return kind_key(kind)
    return declared_listed(spec.input_schema.get("properties", {}).get(param, {}))


def walk_scalars(node: Any, path: str = "", key: str | None = None) -> Iterator[tuple[str, Any, str]]:
    """(field name, value, JSON path) of every string/number leaf (booleans skipped)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk_scalars(v, f"{path}.{k}" if path else k, k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_scalars(v, f"{path}[{i}]", key)
    elif key is not None and isinstance(node, (str, int, float)) and not isinstance(node, bool):
        yield key, node, path


def schema_enum(schema: dict[str, Any]) -> list[Any] | None:
    """The enum of a property schema (through anyOf-null and array items), or None."""
    if "enum" in schema:
        return list(schema["enum"])
    for option in schema.get("anyOf", ()):
        if option.get("type") != "null":
            found = schema_enum(option)
            if found:
                return found
    items = schema.get("items")
    if isinstance(items, dict):
        return schema_enum(items)
    return None


@dataclass
class SamplingContext:
    """Probe calls, the values they returned (by field) and schema enums; `now` per server."""

    calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments", "server"}
    values: dict[str, list[tuple[Any, int]]] = field(default_factory=dict)  # field -> [(v, call)]
    enums: dict[str, list[Any]] = field(default_factory=dict)  # "tool.param" -> values
    now: dict[str, str] = field(default_factory=dict)  # server -> simulated now
    attrs: dict[str, frozenset[str]] = field(default_factory=dict)  # id -> its object's short strings

    def _index_attrs(self, node: Any) -> None:
        if isinstance(node, dict):
            short = frozenset(v for v in node.values() if isinstance(v, str) and len(v) <= 40)
            for v in short:
                self.attrs[v] = self.attrs.get(v, frozenset()) | short
            for v in node.values():
                if isinstance(v, (dict, list)):
                    self._index_attrs(v)
        elif isinstance(node, list):
            for v in node:
                self._index_attrs(v)

    def add_result(self, call_index: int, result: Any, schema: dict[str, Any] | None = None) -> None:
        """Index a probe result: ids by their declared kind (from `schema`, the tool's output
        schema), every other scalar by its field name."""
        self._index_attrs(result)
        seen = {f: {repr(v) for v, _ in vs} for f, vs in self.values.items()}
        ids = [(kind_key(k), v) for k, v in entity_values(result, schema or {})]
        for name, value in [*ids, *((n, v) for n, v, _ in walk_scalars(result))]:
            if name in PAGING:
                continue
            bucket = self.values.setdefault(name, [])
            marks = seen.setdefault(name, set())
            if repr(value) not in marks:
                marks.add(repr(value))
                bucket.append((value, call_index))

    def candidates(self, source: str | None) -> list[tuple[Any, int]]:
        """The sampled values kept under `source` (`param_source`: '@<kind>' or a listing field);
        none for None."""
        return self.values.get(source, []) if source is not None else []

    def merged(self, other: SamplingContext) -> SamplingContext:
        out = SamplingContext(list(self.calls), {k: list(v) for k, v in self.values.items()},
                              dict(self.enums), dict(self.now), dict(self.attrs))
        offset = len(out.calls)
        out.calls.extend(other.calls)
        for name, vals in other.values.items():
            bucket = out.values.setdefault(name, [])
            have = {repr(v) for v, _ in bucket}
            bucket.extend((v, c + offset) for v, c in vals if repr(v) not in have)
        out.enums.update(other.enums)
        out.now.update(other.now)
        for key, found in other.attrs.items():
            out.attrs[key] = out.attrs.get(key, frozenset()) | found
        return out

    def to_json(self, fields: Iterable[str], used: Iterable[Any] = (), cap: int = 6) -> dict[str, Any]:
        """The part stored on an example: the probe calls, and per relevant field up to `cap`
        values (always keeping the ones the conversation used) as `[value, call index]`."""
        keep = {repr(v) for v in used}
        values: dict[str, list[list[Any]]] = {}
        for name in sorted(set(fields)):
            vals = self.values.get(name)
            if not vals:
                continue
            chosen = [v for v in vals if repr(v[0]) in keep]
            for v in vals:
                if len(chosen) >= cap:
                    break
                if v not in chosen:
                    chosen.append(v)
            values[name] = [[v, c] for v, c in chosen]
        return {"calls": self.calls, "values": values, "enums": dict(sorted(self.enums.items())),
                "now": dict(sorted(self.now.items()))}

    def relevant_fields(self, specs: Sequence[ToolSpec]) -> list[str]:
        """The sources (`param_source`) whose sampled values could fill a parameter of these tools."""
        return sorted({src for spec in specs for p in spec.params
                       if (src := param_source(spec, p)) is not None and src in self.values})

    def context_lines(self, specs: Sequence[ToolSpec], cap: int = 4) -> list[str]:
        """The values that could fill these tools' parameters as short prompt lines,
        "field: v1, v2 (from tool)", at most ``cap`` values a field."""
        lines = []
        for name in self.relevant_fields(specs):
            vals = self.values.get(name, [])[:cap]
            if vals:
                src = self.calls[vals[0][1]]["name"]
                label = f"{name[1:].replace('_', ' ')} ids" if name.startswith("@") else name
                lines.append(f"{label}: {', '.join(str(v) for v, _ in vals)} (from {src})")
        return lines


class LiveSampler:
    """Probes servers through a hub; one probe per (server, seed) and process."""

    def __init__(self, hub: Hub, second_hop: bool = True) -> None:
        self.hub = hub
        self.second_hop = second_hop
        self._memo: dict[tuple[str, int], SamplingContext] = {}

    def context(self, servers: Iterable[str], seed: int) -> SamplingContext:
        """The probes of `servers` merged (treat as read-only: it is shared and memoised)."""
        names = tuple(sorted(set(servers)))
        key = ("+".join(names), seed)
        if key not in self._memo:
            if len(names) == 1:
                return self.probe(names[0], seed)
            ctx = SamplingContext()
            for server in names:
                ctx = ctx.merged(self.probe(server, seed))
            self._memo[key] = ctx
        return self._memo[key]

    def probe(self, server: str, seed: int) -> SamplingContext:
        key = (server, seed)
        if key not in self._memo:
            self._memo[key] = self._probe(server, seed)
        return self._memo[key]

    def _probe(self, server: str, seed: int) -> SamplingContext:
        spec = self.hub.registry.server(server)
        episode = f"probe/{server}/{seed}"
        self.hub.close(episode)
        self.hub.open(episode, seed)
        ctx = SamplingContext()
        try:
            episode_obj = self.hub.store.get(episode)
            assert episode_obj is not None
            ctx.now[server] = str(getattr(self.hub.store.read_state(episode_obj, server), "now", ""))
            reads = [t for t in spec.tools if not t.write]
            for t in spec.tools:
                for name, schema in t.input_schema.get("properties", {}).items():
                    enum = schema_enum(schema)
                    if enum:
                        ctx.enums[f"{t.name}.{name}"] = enum
            for t in reads:
                if not t.required:
                    self._call(ctx, episode, server, t.name, {})
            self._state_fallback(ctx, episode, server, reads)
            if self.second_hop:
                rng = derived_rng("probe", server, seed)
                for t in reads:
                    if not t.required:
                        continue
                    args = {}
                    for p in t.required:
                        enum = ctx.enums.get(f"{t.name}.{p}")
                        if enum:
                            args[p] = enum[0]
                            continue
                        kind = param_kind(t, p)
                        cands = [v for v, _ in ctx.candidates(param_source(t, p))
                                 if isinstance(v, str) or (kind is not None and isinstance(v, int))]
                        if not cands:
                            break
                        args[p] = rng.choice(cands)
                    else:
                        self._call(ctx, episode, server, t.name, args)
        finally:
            self.hub.close(episode)
        return ctx

    def _state_fallback(self, ctx: SamplingContext, episode: str, server: str,
                        reads: Sequence[ToolSpec]) -> None:
        """Ids of a kind that no list/search tool returns (a vehicle app's user ids) are read off
        the state snapshot by their declared kind; the pseudo-call `state_snapshot` records that
        source."""
        missing = sorted({kind for t in reads for p in t.required
                          if (kind := param_kind(t, p)) is not None
                          and not ctx.candidates(kind_key(kind))})
        if not missing:
            return
        pool = ValuePool.of(self.hub, episode, server)
        found = {kind: pool.ids(kind) for kind in missing}
        found = {kind: vals for kind, vals in found.items() if vals}
        if not found:
            return
        ctx.calls.append({"name": "state_snapshot", "arguments": {}, "server": server})
        index = len(ctx.calls) - 1
        for kind, vals in found.items():
            ctx.values[kind_key(kind)] = [(v, index) for v in vals[:20]]

    def _call(self, ctx: SamplingContext, episode: str, server: str, name: str,
              args: dict[str, Any]) -> None:
        logged = self.hub.call(name, args, episode_id=episode)
        if logged["ok"]:
            ctx.calls.append({"name": name, "arguments": args, "server": server})
            ctx.add_result(len(ctx.calls) - 1, logged["result"],
                           self.hub.registry.tool(name).output_schema)


class StateLinks:
    """Which ids of a seed's initial state belong together: two ids are linked when one record of
    the state holds both (a reservation holds its guest's and its hotel's ids; another guest's is
    not linked to it). Ids are keyed ``"<kind>:<value>"``; built per (server, seed) on first use.
    The planner prefers ids linked to the conversation's; `prove.synth.quality` measures it."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._records: dict[tuple[str, int], dict[str, frozenset[int]]] = {}

    def records(self, server: str, seed: int) -> dict[str, frozenset[int]]:
        """'kind:id' -> the records (numbered) of the seed's initial state that hold it."""
        key = (server, seed)
        if key not in self._records:
            spec = self.registry.server(server)
            schema = state_schema(spec.state_model)
            holders: dict[str, set[int]] = {}
            n = 0
            for name, table in spec.initial_state(seed).model_dump(mode="json").items():
                sub = schema.get("properties", {}).get(name, {})
                if not isinstance(table, dict):
                    continue
                for record in table.values():
                    n += 1
                    for kind, value in entity_values(record, sub.get("additionalProperties", {}),
                                                     schema.get("$defs", {})):
                        holders.setdefault(f"{kind}:{value}", set()).add(n)
            self._records[key] = {k: frozenset(v) for k, v in holders.items()}
        return self._records[key]
