"""Episode store: lazily seeded, copy-on-write server states with idle expiry and an LRU cap.

An episode is (episode id, seed, optional prefix of calls). Every episode of one seed reads the
same frozen initial state of each server until its first write to that server, which unpickles a
private copy (copy-on-write), so opening an episode costs a dict entry, not a world.

Losing an episode is never silent: the store remembers why an id went away (evicted by the cap or
expired when idle) until the id is closed or opened again, so the hub can refuse the next call to
it with that reason instead of quietly reseeding it. An episode in use (a request in flight, or a
call within the last `busy_seconds`) is never evicted: at the cap with every episode in use, a new
episode is refused (`StoreFull`) rather than someone else's state destroyed.
"""

from __future__ import annotations

import pickle
import time
from collections import OrderedDict
from collections.abc import Callable

from prove.env.registry import Registry, ServerSpec
from prove.env.state import ServerState, state_hash

__all__ = ["Episode", "EpisodeStore", "BaseStates", "DEFAULT_EPISODE", "StoreFull"]

DEFAULT_EPISODE = "default"


class StoreFull(RuntimeError):
    """Every open episode is in use and the cap is reached: nothing may be evicted."""


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

    __slots__ = ("episode_id", "seed", "states", "touched", "last_used", "n_calls", "pins")

    def __init__(self, episode_id: str, seed: int, now: float) -> None:
        self.episode_id = episode_id
        self.seed = seed
        self.states: dict[str, ServerState] = {}
        self.touched: set[str] = set()
        self.last_used = now
        self.n_calls = 0
        self.pins = 0  # requests in flight on this episode; a pinned episode is never evicted


class EpisodeStore:
    """Episodes by id, least recently used first; expires idle ones and caps the count."""

    def __init__(
        self,
        registry: Registry,
        *,
        max_episodes: int = 200_000,
        idle_seconds: float = 1800.0,
        busy_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {max_episodes}")
        if idle_seconds <= 0:
            raise ValueError(f"idle_seconds must be > 0, got {idle_seconds}")
        if busy_seconds < 0:
            raise ValueError(f"busy_seconds must be >= 0, got {busy_seconds}")
        self.registry = registry
        self.busy_seconds = busy_seconds
        self.max_episodes = max_episodes
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.bases = {name: BaseStates(spec) for name, spec in registry.servers.items()}
        self._episodes: OrderedDict[str, Episode] = OrderedDict()
        # Why an id went away, until it is closed or opened again (bounded: oldest forgotten first).
        self._gone: OrderedDict[str, str] = OrderedDict()
        self.max_gone = max(1024, min(max_episodes, 1_000_000))
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

    def insert(self, episode: Episode) -> Episode:
        """Add a (possibly already replayed) episode; evict the least recently used idle ones."""
        episode_id = episode.episode_id
        if episode_id in self._episodes:
            raise ValueError(f"episode {episode_id!r} is already open")
        now = self.clock()
        self._expire(now)
        if len(self._episodes) >= self.max_episodes:
            need = len(self._episodes) + 1 - self.max_episodes
            busy_since = now - self.busy_seconds
            victims: list[Episode] = []
            for e in self._episodes.values():  # least recently used first: stop at the first busy one
                if e.last_used >= busy_since or len(victims) == need:
                    break
                if not e.pins:
                    victims.append(e)
            if len(victims) < need:
                raise StoreFull(
                    f"the server is at its cap of {self.max_episodes} open episodes (prove serve "
                    f"--max-episodes) and every one is in use (called within the last "
                    f"{self.busy_seconds:g} s, --busy-seconds); close finished episodes or raise the cap"
                )
            for victim in victims[:need]:
                del self._episodes[victim.episode_id]
                self._forget(victim.episode_id, f"was evicted: the server keeps at most "
                             f"{self.max_episodes} open episodes and this one was the least recently used")
                self.evicted += 1
        episode.last_used = now
        self._episodes[episode_id] = episode
        self._gone.pop(episode_id, None)
        return episode

    def close(self, episode_id: str) -> bool:
        self._gone.pop(episode_id, None)
        return self._episodes.pop(episode_id, None) is not None

    def gone(self, episode_id: str) -> str | None:
        """Why `episode_id` is no longer open ("was evicted ...", "expired ..."), if it was lost."""
        return self._gone.get(episode_id)

    def forgive(self, episode_id: str) -> None:
        """Forget that `episode_id` was lost (its loss has been reported)."""
        self._gone.pop(episode_id, None)

    def _forget(self, episode_id: str, reason: str) -> None:
        self._gone[episode_id] = reason
        self._gone.move_to_end(episode_id)
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
            self._forget(episode.episode_id, f"expired after more than {self.idle_seconds:g} s idle "
                         "(prove serve --idle-seconds)")
        self.expired += len(stale)
        return len(stale)

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
