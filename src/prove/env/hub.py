"""The in-process hub: call any tool by its global name inside an episode; returns a logged call.

Every door (in-process, streamable HTTP, stdio) dispatches through `Hub.call`, so the same calls
give the same results and state hashes whichever door they came through.

    hub = Hub()
    hub.open("ep-1", seed=7)
    hub.call("get_balance", {"account_id": "ACC-0001"}, episode_id="ep-1")
    # {"name": "get_balance", "arguments": {...}, "ok": True, "result": {...}}
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from prove.env.episodes import DEFAULT_EPISODE, Episode, EpisodeStore
from prove.env.registry import Registry, ServerSpec, load_registry
from prove.env.state import ServerState

__all__ = ["Hub", "EpisodeError", "LoggedCall"]

LoggedCall = dict[str, Any]


class EpisodeError(ValueError):
    """A control-surface mistake (bad episode id, seed, prefix); never shown to a policy."""


def _check_episode_id(episode_id: Any) -> str:
    if not isinstance(episode_id, str) or not episode_id or len(episode_id) > 256:
        raise EpisodeError(
            f"episode id must be a non-empty string of at most 256 characters, got {episode_id!r}"
        )
    return episode_id


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise EpisodeError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    return seed


class Hub:
    """Registry + episode store + dispatch. Not thread-safe: use it from one thread or event loop."""

    def __init__(
        self,
        registry: Registry | None = None,
        *,
        max_episodes: int = 200_000,
        idle_seconds: float = 1800.0,
        **store_kwargs: Any,
    ) -> None:
        self.registry = registry if registry is not None else load_registry()
        self.store = EpisodeStore(
            self.registry, max_episodes=max_episodes, idle_seconds=idle_seconds, **store_kwargs
        )
        self._names = sorted(self.registry.tools)

    @classmethod
    def for_state(cls, server: ServerSpec, state: ServerState, **kwargs: Any) -> Hub:
        """A hub over one server whose initial state, for every seed, is a copy of `state`.

        For tests and notebooks that want a tiny hand-built world.
        """
        frozen = state.model_copy(deep=True)
        spec = dataclasses.replace(server, initial_state=lambda seed: frozen.model_copy(deep=True))
        return cls(Registry([spec]), **kwargs)

    # -- control surface (never offered to a policy) ---------------------------------------
    def open(
        self, episode_id: str, seed: int = 0, prefix: Sequence[Mapping[str, Any]] | None = None
    ) -> list[LoggedCall]:
        """Open an episode, replay `prefix` (earlier turns' calls) and return their logged calls."""
        _check_episode_id(episode_id)
        _check_seed(seed)
        calls = self._check_prefix(prefix)
        if episode_id in self.store:
            raise EpisodeError(f"episode {episode_id!r} is already open; close it first")
        episode = self.store.create(episode_id, seed)
        return [self._dispatch(episode, c["name"], c.get("arguments", {}), None) for c in calls]

    def close(self, episode_id: str) -> bool:
        """Forget an episode; True if it was open."""
        return self.store.close(episode_id)

    def is_open(self, episode_id: str) -> bool:
        return episode_id in self.store

    def server_hash(self, episode_id: str, server: str) -> str:
        episode = self._existing(episode_id)
        self.registry.server(server)
        return self.store.server_hash(episode, server)

    def state_hash(self, episode_id: str, servers: Iterable[str] | None = None) -> str:
        """SHA-256 over the per-server hashes of `servers` (default: the servers it has called)."""
        episode = self._existing(episode_id)
        names = sorted(set(servers) if servers is not None else episode.touched)
        for name in names:
            self.registry.server(name)
        per = {name: self.store.server_hash(episode, name) for name in names}
        return hashlib.sha256(json.dumps(per, sort_keys=True).encode()).hexdigest()

    def state(self, episode_id: str, server: str) -> dict[str, Any]:
        """The episode's state of one server as JSON (for notebooks and debugging)."""
        episode = self._existing(episode_id)
        return self.store.read_state(episode, server).model_dump(mode="json")

    # -- the one dispatch path -------------------------------------------------------------
    def call(
        self,
        name: str,
        arguments: Any = None,
        *,
        episode_id: str | None = None,
        seed: int | None = None,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        server: str | None = None,
    ) -> LoggedCall:
        """Call tool `name` in an episode (opened lazily from seed + prefix); never raises ToolError.

        `server` restricts the call to one server's tools (what a per-server MCP endpoint does).
        """
        episode_id = DEFAULT_EPISODE if episode_id is None else _check_episode_id(episode_id)
        episode = self.store.get(episode_id)
        if episode is None:
            self.open(episode_id, 0 if seed is None else seed, prefix)
            episode = self.store.get(episode_id)
            assert episode is not None
        elif seed is not None and _check_seed(seed) != episode.seed:
            raise EpisodeError(
                f"episode {episode_id!r} was opened with seed {episode.seed}; "
                f"this call carries seed {seed}"
            )
        return self._dispatch(episode, name, {} if arguments is None else arguments, server)

    def _dispatch(
        self, episode: Episode, name: Any, arguments: Any, server: str | None
    ) -> LoggedCall:
        spec = self.registry.tools.get(name) if isinstance(name, str) else None
        if spec is None or (server is not None and spec.server != server):
            return {"name": name, "arguments": arguments, "ok": False,
                    "error": self._unknown_tool(name, server)}
        episode.n_calls += 1
        episode.touched.add(spec.server)
        try:
            kwargs = spec.validate(arguments)
            if spec.write:
                state = self.store.write_state(episode, spec.server)
            else:
                state = self.store.read_state(episode, spec.server)
            result = spec.fn(state, **kwargs)
        except ToolError as exc:
            return {"name": name, "arguments": arguments, "ok": False, "error": str(exc)}
        return {"name": name, "arguments": arguments, "ok": True,
                "result": result.model_dump(mode="json")}

    # -- helpers ---------------------------------------------------------------------------
    def _existing(self, episode_id: str) -> Episode:
        episode = self.store.get(_check_episode_id(episode_id))
        if episode is None:
            raise EpisodeError(f"episode {episode_id!r} is not open (closed, expired or never opened)")
        return episode

    def _check_prefix(self, prefix: Any) -> list[Mapping[str, Any]]:
        if prefix is None:
            return []
        if not isinstance(prefix, (list, tuple)):
            raise EpisodeError(f"prefix must be a list of calls, got {type(prefix).__name__}")
        for i, call in enumerate(prefix):
            if not isinstance(call, Mapping) or call.get("name") not in self.registry.tools:
                raise EpisodeError(
                    f"prefix[{i}] must be {{'name': <known tool>, 'arguments': {{...}}}}, got {call!r:.120}"
                )
        return list(prefix)

    def _unknown_tool(self, name: Any, server: str | None) -> str:
        pool = (
            self._names if server is None else self.registry.server(server).tool_names()
        )
        where = f"on server '{server}'" if server else "in this environment"
        close = difflib.get_close_matches(str(name), pool, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown tool {str(name)!r:.80} {where}{hint} ({len(pool)} tools available)"
