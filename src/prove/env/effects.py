"""What calls did to a server's records: a canonical diff of two states (per table, the records
created, changed field by field, and deleted), and its hash.

    diff = state_diff(before, after)   # {"accounts": {"changed": {"ACC-0001": {"balance": [100.0, 50.0]}}}}
    effect_hash({"banking": diff})     # SHA-256 of the canonical JSON; EMPTY_EFFECT when nothing changed
    hub.effect("ep", ["banking"])      # {"banking": diff} of an episode against its seed's state

Only the entity tables count (dicts of `Record`s keyed by id): the simulated clock and the id
counters are bookkeeping, so a read, or a call that fails, never changes an effect. Every field of a
record counts, times set from the simulated clock included: two plans that make the same writes in
another order can stamp other times, and their effects then differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from prove.env.state import Record

__all__ = ["state_diff", "effect_hash", "tables", "EMPTY_EFFECT"]


def tables(state: BaseModel) -> dict[str, Mapping[str, Record]]:
    """The entity tables of a state: its fields that hold records keyed by id."""
    out: dict[str, Mapping[str, Record]] = {}
    for name in type(state).model_fields:
        value = getattr(state, name)
        if isinstance(value, Mapping) and all(isinstance(v, Record) for v in value.values()) \
                and name != "counters":
            out[name] = value
    return out


def _dump(record: Record) -> dict[str, Any]:
    return record.model_dump(mode="json")


def state_diff(before: BaseModel, after: BaseModel) -> dict[str, dict[str, Any]]:
    """Per table whose records differ: ``created`` {id: record}, ``changed`` {id: {field: [old,
    new]}}, ``deleted`` [ids]; tables and keys without a difference are left out (so {} means no
    effect). Ids and fields are sorted; the result is plain JSON."""
    old_tables, new_tables = tables(before), tables(after)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(set(old_tables) | set(new_tables)):
        old, new = old_tables.get(name, {}), new_tables.get(name, {})
        created = {k: _dump(new[k]) for k in sorted(set(new) - set(old))}
        deleted = sorted(set(old) - set(new))
        changed: dict[str, dict[str, list[Any]]] = {}
        for k in sorted(set(old) & set(new)):
            if old[k] is new[k]:
                continue  # untouched: copy-on-write views share the record object
            a, b = _dump(old[k]), _dump(new[k])
            fields = {f: [a.get(f), b.get(f)] for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)}
            if fields:
                changed[k] = fields
        entry = {key: value for key, value in (("created", created), ("changed", changed),
                                               ("deleted", deleted)) if value}
        if entry:
            out[name] = entry
    return out


def effect_hash(effect: Mapping[str, Any]) -> str:
    """SHA-256 of an effect's canonical JSON (servers' diffs; servers without any left out)."""
    kept = {server: diff for server, diff in effect.items() if diff}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


EMPTY_EFFECT = effect_hash({})
"""The hash of no effect at all (a conversation of reads)."""
