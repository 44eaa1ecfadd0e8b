"""Episode store: lazily seeded, copy-on-write server states with idle expiry and an LRU cap.

An episode is (episode id, seed, optional prefix of calls). Every episode of one seed reads the
same frozen initial state of each server until its first write to that server, which unpickles a
private copy (copy-on-write), so opening an episode costs a dict entry, not a world.
"""

from __future__ import annotations

import pickle
import time
from collections import OrderedDict
from collections.abc import Callable

from prove.env.registry import Registry, ServerSpec
from prove.env.state import ServerState, state_hash

__all__ = ["Episode", "EpisodeStore", "BaseStates", "DEFAULT_EPISODE"]

DEFAULT_EPISODE = "default"


class BaseStates:
    """Seeded initial states of one server, built once per seed and shared read-only."""

    def __init__(self, server: ServerSpec, max_seeds: int = 256) -> None:
        self.server = server
        self.max_seeds = max_seeds
        self._cache: OrderedDict[int, tuple[ServerState, bytes, str]] = OrderedDict()

    def get(self, seed: int) -> tuple[ServerState, bytes, str]:
        entry = self._cache.get(seed)
        if entry is None:
            state = self.server.initial_state(seed)
            blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
            entry = (state, blob, state_hash(state))
            self._cache[seed] = entry
            if len(self._cache) > self.max_seeds:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(seed)
        return entry


class Episode:
    """One episode's view of every server: shared bases until written, then private copies."""

    __slots__ = ("episode_id", "seed", "states", "touched", "last_used", "n_calls")

    def __init__(self, episode_id: str, seed: int, now: float) -> None:
        self.episode_id = episode_id
        self.seed = seed
        self.states: dict[str, ServerState] = {}
        self.touched: set[str] = set()
        self.last_used = now
        self.n_calls = 0


class EpisodeStore:
    """Episodes by id, least recently used first; expires idle ones and caps the count."""

    def __init__(
        self,
        registry: Registry,
        *,
        max_episodes: int = 200_000,
        idle_seconds: float = 1800.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {max_episodes}")
        if idle_seconds <= 0:
            raise ValueError(f"idle_seconds must be > 0, got {idle_seconds}")
        self.registry = registry
        self.max_episodes = max_episodes
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.bases = {name: BaseStates(spec) for name, spec in registry.servers.items()}
        self._episodes: OrderedDict[str, Episode] = OrderedDict()
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
        if episode_id in self._episodes:
            raise ValueError(f"episode {episode_id!r} is already open")
        now = self.clock()
        self._expire(now)
        episode = Episode(episode_id, seed, now)
        self._episodes[episode_id] = episode
        while len(self._episodes) > self.max_episodes:
            self._episodes.popitem(last=False)
            self.evicted += 1
        return episode

    def close(self, episode_id: str) -> bool:
        return self._episodes.pop(episode_id, None) is not None

    def expire(self) -> int:
        """Drop episodes idle longer than `idle_seconds`; return how many."""
        return self._expire(self.clock())

    def _expire(self, now: float) -> int:
        cutoff = now - self.idle_seconds
        n = 0
        while self._episodes:
            oldest = next(iter(self._episodes.values()))
            if oldest.last_used >= cutoff:
                break
            self._episodes.popitem(last=False)
            n += 1
        self.expired += n
        return n

    def read_state(self, episode: Episode, server: str) -> ServerState:
        """The state a read sees: the episode's copy if it has written, else the shared base."""
        state = episode.states.get(server)
        return state if state is not None else self.bases[server].get(episode.seed)[0]

    def write_state(self, episode: Episode, server: str) -> ServerState:
        """The state a write mutates: a private copy, made on the first write (copy-on-write)."""
        state = episode.states.get(server)
        if state is None:
            state = pickle.loads(self.bases[server].get(episode.seed)[1])
            episode.states[server] = state
        return state

    def server_hash(self, episode: Episode, server: str) -> str:
        state = episode.states.get(server)
        return state_hash(state) if state is not None else self.bases[server].get(episode.seed)[2]
