"""Episode store: lazily seeded, copy-on-write server states with idle expiry, a count cap and a byte budget.

An episode is (episode id, seed, optional prefix of calls). Every episode of one seed reads the
same frozen initial state of each server. Its first write to a server makes it a view of that
state with its own tables (`prove.env.state.cow_copy`: hash arrays only, every entity still
shared), and each write deep-copies just the entities it touches, so opening an episode costs a
dict entry and a write costs what it changes, not a world. The store counts what every episode
holds in bytes (tables, copied and added entities, a fixed overhead) and, with `max_memory`, keeps
the total under that budget by evicting the least recently used idle episodes.

Losing an episode is never silent: the store remembers why an id went away (evicted by the cap or
the byte budget, expired when idle) for the last `max_gone` ids lost (default 500,000, about
70 bytes each), until the id is closed or opened again, so the hub refuses every call to it with
that reason instead of quietly reseeding it. An episode in use (a request in flight, or a call
within the last `busy_seconds`) is never evicted: at the cap with every episode in use, a new
episode (or a write that needs a copy) is refused (`StoreFull`) rather than someone else's state
destroyed.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from prove.env.registry import Registry, ServerSpec
from prove.env.state import CowMeter, ServerState, cow_copy, record_size, state_hash

__all__ = ["Episode", "EpisodeStore", "BaseStates", "DEFAULT_EPISODE", "StoreFull", "deep_size",
           "EPISODE_OVERHEAD", "MAX_GONE"]

DEFAULT_EPISODE = "default"
EPISODE_OVERHEAD = 2048
"""Bytes counted per open episode besides its copied states (bookkeeping, the last reply)."""
MAX_GONE = 500_000
"""How many lost ids the store remembers (about 70 bytes each: ~35 MB at the default)."""

_REASONS = ("evicted", "memory", "expired")


def deep_size(obj: Any) -> int:
    """Approximate bytes held by `obj` and everything it references (each object counted once)."""
    return record_size(obj, fields_set=True)


def _gone_key(episode_id: str) -> int:
    """A lost id in 8 bytes (what the store remembers, instead of the id itself)."""
    return int.from_bytes(hashlib.blake2b(episode_id.encode(), digest_size=8).digest(), "big")


class StoreFull(RuntimeError):
    """Every open episode is in use and the cap is reached: nothing may be evicted."""


class BaseStates:
    """Seeded initial states of one server, built once per seed and shared read-only."""

    def __init__(self, server: ServerSpec, max_seeds: int = 256) -> None:
        self.server = server
        self.max_seeds = max_seeds
        self._cache: OrderedDict[int, tuple[ServerState, bytes, str, int]] = OrderedDict()
        self.table_cost = 64 << 10  # what a write view's tables cost, as last measured

    def get(self, seed: int) -> tuple[ServerState, bytes, str, int]:
        """(frozen state, its pickle, its hash, the bytes a write view's tables cost)."""
        entry = self._cache.get(seed)
        if entry is None:
            state = self.server.initial_state(seed)
            blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
            self.table_cost = cow_copy(state)[1].bytes
            entry = (state, blob, state_hash(state), self.table_cost)
            self._cache[seed] = entry
            if len(self._cache) > self.max_seeds:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(seed)
        return entry


class Episode:
    """One episode's view of every server: shared bases until written, then private copies."""

    __slots__ = ("episode_id", "seed", "states", "touched", "last_used", "n_calls", "pins",
                 "token", "prefix_digest", "seq", "last", "bytes", "meters")

    def __init__(self, episode_id: str, seed: int, now: float, token: str | None = None,
                 prefix_digest: str = "") -> None:
        self.episode_id = episode_id
        self.seed = seed
        self.states: dict[str, ServerState] = {}
        self.touched: set[str] = set()
        self.last_used = now
        self.n_calls = 0
        self.pins = 0  # requests in flight on this episode; a pinned episode is never evicted
        self.token = token  # the owner's episode token; every later call must carry it
        self.prefix_digest = prefix_digest  # what it was opened from (a reopen must match)
        self.seq = 0  # sequenced calls applied since the open (`_meta.seq`)
        self.last: tuple[int, str, dict[str, Any]] | None = None  # (seq, call digest, reply)
        self.bytes = EPISODE_OVERHEAD
        self.meters: list[CowMeter] | None = None  # what each written server's view holds


class EpisodeStore:
    """Episodes by id, least recently used first; expires idle ones and caps the count."""

    def __init__(
        self,
        registry: Registry,
        *,
        max_episodes: int = 200_000,
        idle_seconds: float = 1800.0,
        busy_seconds: float = 60.0,
        max_memory: int | None = None,
        max_gone: int = MAX_GONE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {max_episodes}")
        if idle_seconds <= 0:
            raise ValueError(f"idle_seconds must be > 0, got {idle_seconds}")
        if busy_seconds < 0:
            raise ValueError(f"busy_seconds must be >= 0, got {busy_seconds}")
        if max_memory is not None and max_memory < 1 << 20:
            raise ValueError(f"max_memory must be at least 1 MiB (1048576 bytes), got {max_memory}")
        if max_gone < 1:
            raise ValueError(f"max_gone must be >= 1, got {max_gone}")
        self.max_memory = max_memory
        self.bytes = 0  # what the open episodes hold, as counted (see deep_size)
        self.registry = registry
        self.busy_seconds = busy_seconds
        self.max_episodes = max_episodes
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.bases = {name: BaseStates(spec) for name, spec in registry.servers.items()}
        self._episodes: OrderedDict[str, Episode] = OrderedDict()
        # Why an id went away (an index into _REASONS), keyed by an 8-byte digest of the id, until
        # it is closed or opened again; bounded: the oldest loss is forgotten first.
        self._gone: OrderedDict[int, int] = OrderedDict()
        self.max_gone = max_gone
        self.evicted = 0
        self.expired = 0

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: str) -> bool:
        return episode_id in self._episodes

    def get(self, episode_id: str) -> Episode | None:
        episode = self._episodes.get(episode_id)
        if episode is not None:
            episode.last_used = self.clock()
            self._episodes.move_to_end(episode_id)
        return episode

    def create(self, episode_id: str, seed: int) -> Episode:
        return self.insert(Episode(episode_id, seed, self.clock()))

    def insert(self, episode: Episode, *, replace: bool = False) -> Episode:
        """Add a (possibly already replayed) episode; evict the least recently used idle ones.

        `replace=True` swaps it in for the open episode of the same id (a rebuild), atomically.
        """
        episode_id = episode.episode_id
        old = self._episodes.get(episode_id)
        if old is not None and not replace:
            raise ValueError(f"episode {episode_id!r} is already open")
        now = self.clock()
        self._expire(now)
        old = self._episodes.get(episode_id)
        spare = 0 if old is None else 1
        keep = {episode_id}
        need = len(self._episodes) + 1 - spare - self.max_episodes
        extra = episode.bytes - (old.bytes if old is not None else 0)
        self._make_room(max(need, 0), extra, now, keep)
        if old is not None:
            del self._episodes[episode_id]
            self.bytes -= old.bytes
        episode.last_used = now
        self._episodes[episode_id] = episode
        self.bytes += episode.bytes
        self._gone.pop(_gone_key(episode_id), None)
        return episode

    def _make_room(self, count: int, nbytes: int, now: float, keep: set[str]) -> None:
        """Evict least recently used idle episodes until `count` slots and `nbytes` more fit."""
        over = 0 if self.max_memory is None else self.bytes + nbytes - self.max_memory
        if count <= 0 and over <= 0:
            return
        busy_since = now - self.busy_seconds
        victims: list[Episode] = []
        freed = 0
        for e in self._episodes.values():  # least recently used first: stop at the first busy one
            if len(victims) >= count and freed >= over:
                break
            if e.last_used >= busy_since:
                break
            if not e.pins and e.episode_id not in keep:
                victims.append(e)
                freed += e.bytes
        if len(victims) < count:
            raise StoreFull(
                f"the server is at its cap of {self.max_episodes} open episodes (prove serve "
                f"--max-episodes) and every one is in use (called within the last "
                f"{self.busy_seconds:g} s, --busy-seconds); close finished episodes or raise the cap"
            )
        if freed < over:
            raise StoreFull(
                f"the server is at its memory budget of {self.max_memory} bytes (prove serve "
                f"--max-memory; open episodes hold {self.bytes}, this needs {nbytes} more) and "
                f"every other episode is in use (called within the last {self.busy_seconds:g} s, "
                "--busy-seconds); close finished episodes or raise the budget"
            )
        for victim in victims:
            del self._episodes[victim.episode_id]
            self.bytes -= victim.bytes
            by_count = count > 0
            count -= 1
            self._forget(victim.episode_id, 0 if by_count else 1)
            self.evicted += 1

    def close(self, episode_id: str) -> bool:
        self._gone.pop(_gone_key(episode_id), None)
        episode = self._episodes.pop(episode_id, None)
        if episode is None:
            return False
        self.bytes -= episode.bytes
        return True

    def gone(self, episode_id: str) -> str | None:
        """Why `episode_id` is no longer open ("was evicted ...", "expired ..."), if it was lost."""
        code = self._gone.get(_gone_key(episode_id))
        if code is None:
            return None
        if code == 0:
            return (f"was evicted: the server keeps at most {self.max_episodes} open episodes "
                    "(prove serve --max-episodes) and this one was the least recently used")
        if code == 1:
            return (f"was evicted: the server keeps its episodes within {self.max_memory} bytes "
                    "(prove serve --max-memory) and this one was the least recently used")
        return f"expired after more than {self.idle_seconds:g} s idle (prove serve --idle-seconds)"

    def forgive(self, episode_id: str) -> None:
        """Forget that `episode_id` was lost (its loss has been reported)."""
        self._gone.pop(_gone_key(episode_id), None)

    def _forget(self, episode_id: str, code: int) -> None:
        key = _gone_key(episode_id)
        self._gone[key] = code
        self._gone.move_to_end(key)
        while len(self._gone) > self.max_gone:
            self._gone.popitem(last=False)

    def expire(self) -> int:
        """Drop episodes idle longer than `idle_seconds`; return how many."""
        return self._expire(self.clock())

    def _expire(self, now: float) -> int:
        cutoff = now - self.idle_seconds
        stale: list[Episode] = []
        for episode in self._episodes.values():  # least recently used first
            if episode.last_used >= cutoff:
                break
            if not episode.pins:
                stale.append(episode)
        for episode in stale:
            del self._episodes[episode.episode_id]
            self.bytes -= episode.bytes
            self._forget(episode.episode_id, 2)
        self.expired += len(stale)
        return len(stale)

    def read_state(self, episode: Episode, server: str) -> ServerState:
        """The state a read sees: the episode's copy if it has written, else the shared base."""
        state = episode.states.get(server)
        return state if state is not None else self.bases[server].get(episode.seed)[0]

    def write_state(self, episode: Episode, server: str) -> ServerState:
        """The state a write mutates: the episode's own view, made on its first write.

        The view shares every entity with the frozen base (`cow_copy`); the write copies only the
        entries it touches. Over `max_memory`, idle episodes are evicted to make room for the
        view, or `StoreFull` is raised (nothing copied, nothing run) when none can be. After the
        write, `settle` counts what it copied.
        """
        state = episode.states.get(server)
        if state is None:
            base = self.bases[server].get(episode.seed)[0]
            live = self._episodes.get(episode.episode_id) is episode  # not an open being replayed
            if live:
                self._make_room(0, self.bases[server].table_cost, self.clock(), {episode.episode_id})
            state, meter = cow_copy(base)
            episode.states[server] = state
            if episode.meters is None:
                episode.meters = []
            episode.meters.append(meter)
        return state

    def settle(self, episode: Episode) -> None:
        """Count the bytes `episode`'s writes have copied or added; evict idle others if over."""
        if episode.meters is None:
            return
        for meter in episode.meters:
            meter.release()
        now = EPISODE_OVERHEAD + sum(m.bytes for m in episode.meters)
        delta, episode.bytes = now - episode.bytes, now
        if self._episodes.get(episode.episode_id) is episode:
            self.bytes += delta
            if self.max_memory is not None and self.bytes > self.max_memory:
                try:
                    self._make_room(0, 0, self.clock(), {episode.episode_id})
                except StoreFull:  # the write ran; the budget is met again once others idle
                    pass

    def server_hash(self, episode: Episode, server: str) -> str:
        state = episode.states.get(server)
        return state_hash(state) if state is not None else self.bases[server].get(episode.seed)[2]
