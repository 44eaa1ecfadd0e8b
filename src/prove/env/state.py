"""Server state base class, canonical hashing and seeded helpers shared by every PROVE server."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ServerState", "Record", "canonical_json", "state_hash", "Counter", "largest_id",
           "CowDict", "CowMeter", "cow_copy", "writing", "record_size"]


class Record(BaseModel):
    """Base of every entity a server stores (an account, a booking): unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class ServerState(BaseModel):
    """Base of every server's state: a simulated clock and the ids `new_id` has issued.

    Subclasses add dicts of entities keyed by id. No wall clock, no global random, no uuid4:
    `now` is a field and new ids come from `new_id`, so state is a pure function of seed + calls.
    A seeded state issues no ids (its `counters` are empty; `initial_state` never writes them): the
    first `new_id` of a kind continues from the largest seeded `<prefix>-<n>`. `counters` stays in
    the state and its hash, since it decides the next id: a write that creates a record and a write
    that deletes it leave the tables as they were, yet the next id differs, so the hash does too.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    now: str = Field(description="Simulated current time, ISO 8601 (UTC, no offset).")
    counters: dict[str, int] = Field(
        default_factory=dict,
        description="The last number `new_id` issued per id kind; kept by `new_id` alone, never by hand.")

    def new_id(self, prefix: str) -> str:
        """Next id of a kind, e.g. new_id('TXN') -> 'TXN-0042'.

        The first id of a kind continues from the largest `<prefix>-<n>` anywhere in the state (a
        seeded id, or one a record refers to), and later ones from the last issued, so a new id
        never reuses an existing or deleted one.
        """
        if prefix not in self.counters:
            self.counters[prefix] = largest_id(self, prefix)
        n = self.counters[prefix] + 1
        self.counters[prefix] = n
        return f"{prefix}-{n:04d}"

    def now_dt(self) -> datetime:
        return datetime.fromisoformat(self.now)

    def advance(self, minutes: int = 1) -> str:
        """Move the simulated clock forward (writes that take time call it) and return the new time."""
        self.now = (self.now_dt() + timedelta(minutes=minutes)).isoformat(timespec="minutes")
        return self.now


def largest_id(state: BaseModel, prefix: str) -> int:
    """The largest n of an id `<prefix>-<n>` among the keys and strings of `state` (0 if none)."""
    head = prefix + "-"
    best = 0
    stack: list[Any] = [state]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            stack.extend(item.__dict__.values())
        elif isinstance(item, dict):  # dict.keys/values: a CowDict copies nothing for a look
            stack.extend(dict.keys(item))
            stack.extend(dict.values(item))
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
        elif isinstance(item, str) and item.startswith(head) and item[len(head):].isdigit():
            best = max(best, int(item[len(head):]))
    return best


_IMMUTABLE = (str, int, float, bool, type(None))
PICKLE_TO_MEMORY = 6
"""Bytes in memory per byte of an entity's pickle (measured 5.3-5.9 over four servers' entities)."""
_WRITING = [False]  # True while a write tool runs (the hub is single-threaded; see `writing`)


@contextmanager
def writing() -> Iterator[None]:
    """Mark a write tool's run: CowDicts copy a shared entry before handing it out."""
    before = _WRITING[0]
    _WRITING[0] = True
    try:
        yield
    finally:
        _WRITING[0] = before


def record_size(obj: Any, *, fields_set: bool = False) -> int:
    """Approximate bytes of one entry and what it references (a copy-on-write copy's cost), each
    object counted once; ``fields_set`` also counts each pydantic model's set of set fields."""
    seen: set[int] = set()
    stack = [obj]
    total = 0
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, BaseModel):
            stack.append(item.__dict__)
            if fields_set and item.__pydantic_fields_set__ is not None:
                stack.append(item.__pydantic_fields_set__)
        elif isinstance(item, dict):
            stack.extend(dict.keys(item))
            stack.extend(dict.values(item))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return total


class CowMeter:
    """The bytes a copy-on-write view holds beyond its base, and its tables."""

    __slots__ = ("bytes", "tables")

    def __init__(self) -> None:
        self.bytes = 0
        self.tables: list[CowDict] = []

    def release(self) -> None:
        """After a write: entries it copied but left equal to the base go back to being shared."""
        for table in self.tables:
            if table.lent:
                table.release()


class CowDict(dict):
    """A state's table (entities by id) shared with a frozen base until a write touches an entry.

    Its own hash table holds the base's entries; an entry a write tool reads, iterates or pops
    is deep-copied first and handed out, and after the tool (`CowMeter.release`) a copy equal to
    its base entry is dropped again, so a write costs the entries it changed or added, never the
    whole state. Reads (outside `writing()`) see entries as they are. Serialisation and hashing
    read the table directly and see exactly the episode's state.
    """

    __slots__ = ("owned", "meter", "lent")

    def __init__(self, base: dict, meter: CowMeter) -> None:
        super().__init__(base)
        self.owned: set[Any] = set()
        self.meter = meter
        self.lent: dict[Any, tuple[Any, int]] = {}  # key -> (base entry, bytes) of this write's copies
        meter.tables.append(self)

    def _own(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if key in self.owned or not _WRITING[0]:
            return value
        self.owned.add(key)
        if isinstance(value, _IMMUTABLE):
            return value
        blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)  # faster than copy.deepcopy
        original, value = value, pickle.loads(blob)
        dict.__setitem__(self, key, value)
        size = PICKLE_TO_MEMORY * len(blob)
        self.lent[key] = (original, size)
        self.meter.bytes += size
        return value

    def release(self) -> None:
        for key, (original, size) in self.lent.items():
            if key in self.owned and dict.__contains__(self, key):
                current = dict.__getitem__(self, key)
                if type(current) is type(original) and current == original:
                    self.meter.bytes -= size
                    dict.__setitem__(self, key, original)
                    self.owned.discard(key)
        self.lent.clear()

    def __getitem__(self, key: Any) -> Any:
        return self._own(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._own(key) if dict.__contains__(self, key) else default

    def __iter__(self) -> Iterator[Any]:  # defined so dict(x) / {**x} go through keys() + []
        return dict.__iter__(self)

    def keys(self) -> Any:
        return dict.keys(self)

    def values(self) -> Any:
        if not _WRITING[0]:
            return dict.values(self)
        return [self._own(k) for k in list(dict.keys(self))]

    def items(self) -> Any:
        if not _WRITING[0]:
            return dict.items(self)
        return [(k, self._own(k)) for k in list(dict.keys(self))]

    def __setitem__(self, key: Any, value: Any) -> None:
        if _WRITING[0] and not isinstance(value, _IMMUTABLE):
            self.meter.bytes += PICKLE_TO_MEMORY * len(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        self.owned.add(key)
        self.lent.pop(key, None)  # replaced: whatever it holds now is the write's own
        dict.__setitem__(self, key, value)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self._own(key)
        self[key] = default
        return default

    def pop(self, key: Any, *default: Any) -> Any:
        if dict.__contains__(self, key):
            value = self._own(key)
            dict.__delitem__(self, key)
            self.owned.discard(key)
            self.lent.pop(key, None)
            return value
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        self.owned.discard(key)
        self.lent.pop(key, None)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def copy(self) -> dict:
        return {k: self._own(k) for k in list(dict.keys(self))}

    def __deepcopy__(self, memo: dict[int, Any]) -> dict:
        return copy.deepcopy(dict(dict.items(self)), memo)

    def __reduce__(self) -> Any:  # pickles as the plain dict it stands for
        return (dict, (dict(dict.items(self)),))


def cow_copy(base: ServerState) -> tuple[ServerState, CowMeter]:
    """An episode's private view of a frozen `base`: its own tables sharing the base's entries.

    Costs the tables' hash arrays, not the entities; returns it with its byte meter.
    """
    meter = CowMeter()
    state = base.model_copy()  # a new __dict__; every field still the base's object
    for name, value in list(state.__dict__.items()):
        if isinstance(value, dict):
            table = CowDict(value, meter)
            state.__dict__[name] = table
            meter.bytes += sys.getsizeof(table)
        elif not isinstance(value, _IMMUTABLE):
            state.__dict__[name] = copy.deepcopy(value)
            meter.bytes += record_size(state.__dict__[name])
    return state, meter


def canonical_json(obj: Any) -> str:
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_hash(state: BaseModel) -> str:
    """SHA-256 of the canonical JSON of a state."""
    return hashlib.sha256(canonical_json(state).encode()).hexdigest()


class Counter:
    """Seeded id numbering for initial_state builders: Counter('ACC')() -> 'ACC-0001', ..."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.n = prefix, 0

    def __call__(self) -> str:
        self.n += 1
        return f"{self.prefix}-{self.n:04d}"
