"""The in-process hub: call any tool by its global name inside an episode; returns a logged call.

Every door (in-process, streamable HTTP, stdio) dispatches through `Hub.call`, so the same calls
give the same results and state hashes whichever door they came through.

    hub = Hub()
    hub.open("ep-1", seed=7)
    hub.call("get_balance", {"account_id": "ACC-0001"}, episode_id="ep-1")
    # {"name": "get_balance", "arguments": {...}, "ok": True, "result": {...}}
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from prove.env.episodes import DEFAULT_EPISODE, Episode, EpisodeStore, StoreFull
from prove.env.registry import Registry, ServerSpec, load_registry
from prove.env.state import ServerState

__all__ = [
    "Hub", "EpisodeError", "EpisodeLost", "LoggedCall", "check_episode_id", "EPISODE_ID_RULE",
    "MAX_EPISODE_ID", "MAX_PREFIX", "MAX_DEPTH", "nesting_depth",
]

LoggedCall = dict[str, Any]

MAX_EPISODE_ID = 128
EPISODE_ID_RULE = (
    f"1-{MAX_EPISODE_ID} characters from A-Z a-z 0-9 . _ : - and '/', where '/' separates "
    "non-empty parts that are not '.' or '..'"
)
"""The one episode-id alphabet, enforced at every door (in-process, `_meta`, `/control/`)."""
_ID_PART = r"[A-Za-z0-9._:-]+"
_ID_RE = re.compile(rf"{_ID_PART}(?:/{_ID_PART})*")
MAX_PREFIX = 1024
"""Default cap on the calls one prefix may replay (`prove serve --max-prefix`)."""
MAX_DEPTH = 32
"""Deepest nesting of lists/objects accepted in a prefix or a control body."""
REPLAY_CHUNK = 32
"""Prefix calls replayed between two yields to the event loop (an open never stalls others)."""


class EpisodeError(ValueError):
    """A control-surface mistake (bad episode id, seed, prefix); never shown to a policy.

    `status` is the HTTP status the control routes answer with.
    """

    status = 400


class EpisodeLost(EpisodeError):
    """The episode was evicted, expired, or lost in a server restart: its state is gone."""

    status = 410


class EpisodeMissing(EpisodeError):
    status = 404


class EpisodeBusy(EpisodeError):
    status = 409


class HubFull(EpisodeError):
    status = 503


def check_episode_id(episode_id: Any) -> str:
    """`episode_id` if it follows `EPISODE_ID_RULE`, else an `EpisodeError` saying what is valid."""
    if (
        not isinstance(episode_id, str)
        or len(episode_id) > MAX_EPISODE_ID
        or _ID_RE.fullmatch(episode_id) is None
        or any(part in (".", "..") for part in episode_id.split("/"))
    ):
        raise EpisodeError(
            f"episode id must be a non-empty string of {EPISODE_ID_RULE}; got {episode_id!r:.160}"
        )
    return episode_id


_check_episode_id = check_episode_id


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise EpisodeError(f"seed must be an integer in [0, 2**63), got {seed!r:.80}")
    return seed


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply lists/dicts nest in `value` (iterative; stops counting past `limit`)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


class Hub:
    """Registry + episode store + dispatch. Not thread-safe: use it from one thread or event loop."""

    def __init__(
        self,
        registry: Registry | None = None,
        *,
        max_episodes: int = 200_000,
        idle_seconds: float = 1800.0,
        max_prefix: int = MAX_PREFIX,
        **store_kwargs: Any,
    ) -> None:
        if max_prefix < 0:
            raise ValueError(f"max_prefix must be >= 0, got {max_prefix}")
        self.registry = registry if registry is not None else load_registry()
        self.store = EpisodeStore(
            self.registry, max_episodes=max_episodes, idle_seconds=idle_seconds, **store_kwargs
        )
        self.max_prefix = max_prefix
        self._names = sorted(self.registry.tools)
        self._opening: set[str] = set()  # ids whose prefix is being replayed by open_async

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
        self,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        *,
        server: str | None = None,
    ) -> list[LoggedCall]:
        """Open an episode, replay `prefix` (earlier turns' calls) and return their logged calls.

        Each prefix entry must come out as it says (`"ok"`, default true): a call that fails (or
        one marked `"ok": false` that succeeds) fails the open and leaves nothing behind.
        `server` restricts the prefix to one server's tools (what a per-server endpoint does).
        """
        episode, calls = self._prepare(episode_id, seed, prefix, server)
        logged: list[LoggedCall] = []
        for _ in self._replay(episode, calls, logged):
            pass
        self._insert(episode)
        return logged

    async def open_async(
        self,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        *,
        server: str | None = None,
    ) -> int:
        """`open` for the event loop: yields between chunks of the replay; returns its length."""
        episode, calls = self._prepare(episode_id, seed, prefix, server)
        self._opening.add(episode.episode_id)
        try:
            for _ in self._replay(episode, calls, None):
                await asyncio.sleep(0)
        finally:
            self._opening.discard(episode.episode_id)
        self._insert(episode)
        return len(calls)

    def close(self, episode_id: str) -> bool:
        """Forget an episode (and that it was ever lost); True if it was open."""
        return self.store.close(check_episode_id(episode_id))

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
        resume: bool = False,
    ) -> LoggedCall:
        """Call tool `name` in an episode (opened lazily from seed + prefix); never raises ToolError.

        `server` restricts the call (and a lazy open's prefix) to one server's tools (what a
        per-server MCP endpoint does). `resume=True` says the caller has already made calls in
        this episode: if it is not open, the call fails (`EpisodeLost`) instead of reseeding it.
        A call to an episode that was evicted or expired fails the same way, once.
        """
        episode_id = DEFAULT_EPISODE if episode_id is None else check_episode_id(episode_id)
        episode = self._lookup(episode_id, seed, resume)
        if episode is None:
            self.open(episode_id, 0 if seed is None else seed, prefix, server=server)
            episode = self.store.get(episode_id)
            assert episode is not None
        return self._dispatch(episode, name, {} if arguments is None else arguments, server)

    async def acall(
        self,
        name: str,
        arguments: Any = None,
        *,
        episode_id: str | None = None,
        seed: int | None = None,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        server: str | None = None,
        resume: bool = False,
    ) -> LoggedCall:
        """`call` for the event loop: a lazy open replays its prefix without stalling others."""
        episode_id = DEFAULT_EPISODE if episode_id is None else check_episode_id(episode_id)
        episode = self._lookup(episode_id, seed, resume)
        if episode is None:
            await self.open_async(episode_id, 0 if seed is None else seed, prefix, server=server)
            episode = self.store.get(episode_id)
            if episode is None:  # evicted between the open and this call: say so, run nothing
                raise EpisodeLost(f"episode {episode_id!r} was evicted right after it was opened")
        return self._dispatch(episode, name, {} if arguments is None else arguments, server)

    def _lookup(self, episode_id: str, seed: int | None, resume: bool) -> Episode | None:
        """The open episode, None if it should be opened lazily, or an error if it was lost."""
        episode = self.store.get(episode_id)
        if episode is None:
            if episode_id in self._opening:
                raise EpisodeBusy(
                    f"episode {episode_id!r} is being opened by another request; retry once it is open"
                )
            reason = self.store.gone(episode_id)
            if reason is not None:
                self.store.forgive(episode_id)  # reported once; the next plain call reseeds it
                raise EpisodeLost(
                    f"episode {episode_id!r} {reason}; its state is gone and this call did not run. "
                    "Reopen it from its seed, prefix and the calls made since (EnvClient's episode "
                    "handle does this from its call log); a plain call now starts it afresh from its seed"
                )
            if resume:
                raise EpisodeLost(
                    f"episode {episode_id!r} is not open on this server (closed, or the server "
                    "restarted) but the caller has already made calls in it (_meta.resume); this "
                    "call did not run. Reopen it from its seed, prefix and the calls made since"
                )
            return None
        if seed is not None and _check_seed(seed) != episode.seed:
            raise EpisodeError(
                f"episode {episode_id!r} was opened with seed {episode.seed}; "
                f"this call carries seed {seed}"
            )
        return episode

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
        episode = self.store.get(check_episode_id(episode_id))
        if episode is None:
            reason = self.store.gone(episode_id)
            if reason is not None:
                raise EpisodeLost(f"episode {episode_id!r} is not open: it {reason}")
            raise EpisodeMissing(f"episode {episode_id!r} is not open (closed, expired or never opened)")
        return episode

    def _prepare(
        self, episode_id: Any, seed: Any, prefix: Any, server: str | None
    ) -> tuple[Episode, list[Mapping[str, Any]]]:
        """Check an open's inputs; a detached episode to replay into, and the prefix."""
        check_episode_id(episode_id)
        _check_seed(seed)
        calls = self._check_prefix(prefix, server)
        if episode_id in self.store:
            raise EpisodeBusy(f"episode {episode_id!r} is already open; close it first")
        if episode_id in self._opening:
            raise EpisodeBusy(f"episode {episode_id!r} is being opened by another request")
        return Episode(episode_id, seed, self.store.clock()), calls

    def _replay(
        self, episode: Episode, calls: list[Mapping[str, Any]], out: list[LoggedCall] | None
    ) -> Iterator[None]:
        """Run the prefix into `episode`; yield every REPLAY_CHUNK calls; fail on a wrong outcome."""
        for i, call in enumerate(calls):
            logged = self._dispatch(episode, call["name"], call.get("arguments", {}), None)
            expected = call.get("ok", True)
            if logged["ok"] is not expected:
                what = (f"failed: {logged.get('error', '')}" if expected
                        else "succeeded, but the prefix says it failed")
                raise EpisodeError(
                    f"prefix[{i}] {call['name']} {what:.600}; the episode was not opened "
                    "(every prefix call must come out as its 'ok' says, default true)"
                )
            if out is not None:
                out.append(logged)
            if i % REPLAY_CHUNK == REPLAY_CHUNK - 1:
                yield

    def _insert(self, episode: Episode) -> None:
        try:
            self.store.insert(episode)
        except StoreFull as exc:
            raise HubFull(str(exc)) from None
        except ValueError:  # opened by someone else while this prefix replayed
            raise EpisodeBusy(f"episode {episode.episode_id!r} is already open; close it first") from None

    def _check_prefix(self, prefix: Any, server: str | None = None) -> list[Mapping[str, Any]]:
        if prefix is None:
            return []
        if not isinstance(prefix, (list, tuple)):
            raise EpisodeError(f"prefix must be a list of calls, got {type(prefix).__name__}")
        if len(prefix) > self.max_prefix:
            raise EpisodeError(
                f"prefix has {len(prefix)} calls; this server replays at most {self.max_prefix} "
                "(prove serve --max-prefix)"
            )
        if nesting_depth(prefix, MAX_DEPTH + 2) > MAX_DEPTH + 2:
            raise EpisodeError(f"prefix nests more than {MAX_DEPTH} levels deep inside its calls")
        for i, call in enumerate(prefix):
            spec = self.registry.tools.get(call.get("name")) if isinstance(call, Mapping) else None
            if (
                spec is None
                or not isinstance(call.get("arguments", {}), Mapping)
                or not isinstance(call.get("ok", True), bool)
            ):
                raise EpisodeError(
                    f"prefix[{i}] must be {{'name': <known tool>, 'arguments': {{...}}, "
                    f"'ok': <bool, optional>}}, got {call!r:.120}"
                )
            if server is not None and spec.server != server:
                raise EpisodeError(
                    f"prefix[{i}] calls {spec.name!r} of server {spec.server!r}, but this is the "
                    f"{server!r} endpoint: a prefix sent to /{server}/mcp may only call {server}'s "
                    "tools; open an episode that spans servers with POST /control/episodes"
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
