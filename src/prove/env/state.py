"""Server state base class, canonical hashing and seeded helpers shared by every PROVE server."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ServerState", "Record", "canonical_json", "state_hash", "Counter"]


class Record(BaseModel):
    """Base of every entity a server stores (an account, a booking): unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class ServerState(BaseModel):
    """Base of every server's state: a simulated clock and per-kind id counters.

    Subclasses add dicts of entities keyed by id. No wall clock, no global random, no uuid4:
    `now` is a field and new ids come from `new_id`, so state is a pure function of seed + calls.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    now: str = Field(description="Simulated current time, ISO 8601 (UTC, no offset).")
    counters: dict[str, int] = Field(default_factory=dict, description="Next number per id kind.")

    def new_id(self, prefix: str) -> str:
        """Next id of a kind, e.g. new_id('TXN') -> 'TXN-0042'."""
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}-{n:04d}"

    def now_dt(self) -> datetime:
        return datetime.fromisoformat(self.now)

    def advance(self, minutes: int = 1) -> str:
        """Move the simulated clock forward (writes that take time call it) and return the new time."""
        self.now = (self.now_dt() + timedelta(minutes=minutes)).isoformat(timespec="minutes")
        return self.now


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
