"""The in-process hub: call any tool by its global name inside an episode; returns a logged call.

Every door (in-process, streamable HTTP, stdio) dispatches through `Hub.call`, so the same calls
give the same results and state hashes whichever door they came through.

    hub = Hub()
    hub.open("ep-1", seed=7)
    hub.call("get_balance", {"account_id": "ACC-0001"}, episode_id="ep-1")
    # {"name": "get_balance", "arguments": {...}, "ok": True, "result": {...}}

Exactly-once and ownership (what `EnvClient`'s episode handle uses; a stock MCP client needs none
of it): an open may carry a `token` (the owner's secret); every later call, hash, close or reopen
of that episode must carry the same token, or it is refused (`EpisodeForbidden`). A call may carry
`seq`, its 1-based number among the calls made since the open: the hub runs call `seq` only when
it has applied `seq - 1`, answers a repeat of the call it ran last from its record instead of
running it again, and refuses any other number or a different call under a used number
(`EpisodeConflict`), so a call whose reply was lost can be retried safely. A call with `seq > 1`
or `resume` to an episode that is not open fails (`EpisodeLost`) however long ago it was lost.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import difflib
import hashlib
import json
import os
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from prove.env.effects import state_diff
from prove.env.episodes import DEFAULT_EPISODE, Episode, EpisodeStore, StoreFull
from prove.env.errors import ToolError, detail_of
from prove.env.registry import Registry, ServerSpec, load_registry
from prove.env.state import ServerState, writing

__all__ = [
    "Hub", "EpisodeError", "EpisodeLost", "EpisodeForbidden", "EpisodeConflict", "HubFull",
    "LoggedCall", "check_episode_id", "EPISODE_ID_RULE", "MAX_EPISODE_ID", "MAX_PREFIX",
    "MAX_DEPTH", "nesting_depth", "call_digest", "prefix_digest", "MAX_TOKEN", "parse_bytes",
    "MAX_MEMORY_ENV",
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


class EpisodeOpening(EpisodeBusy):
    """Another request is replaying this episode's prefix right now: ask again shortly (425)."""

    status = 425


class EpisodeConflict(EpisodeBusy):
    """The call's sequence number, call or open does not match what the episode has applied."""


class EpisodeForbidden(EpisodeError):
    """The request does not carry the episode's token (another owner, or a stale handle)."""

    status = 403


class HubFull(EpisodeError):
    """Capacity (episode cap or byte budget) with every episode in use: 503 on every route."""

    status = 503


MAX_MEMORY_ENV = "PROVE_MAX_MEMORY"
"""Byte budget of the episode store when `Hub(max_memory=...)` is not given (e.g. '2G')."""


def parse_bytes(text: str, what: str = "size") -> int:
    """'2G', '512M', '64K' or a plain byte count as bytes; a ValueError naming `what` otherwise."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    try:
        if raw[-1:] in units:
            return int(float(raw[:-1]) * units[raw[-1]])
        return int(raw)
    except (ValueError, IndexError):
        raise ValueError(f"{what} must be a byte count like 2G, 512M, 64K or 1048576; "
                         f"got {text!r:.40}") from None


MAX_TOKEN = 128
MAX_STAGED = 256
"""Rebuilds in progress (chunked opens, `final=False`) kept at once; the oldest is dropped."""


def call_digest(name: Any, arguments: Any) -> str:
    """What identifies a call for exactly-once: a digest of its name and canonical arguments."""
    text = json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def prefix_digest(prefix: Sequence[Mapping[str, Any]] | None, start: str = "") -> str:
    """A chained digest of an open's prefix (name, arguments, expected outcome of each call);
    `start` continues the digest of the calls before (a replay sent in chunks)."""
    digest = start
    for c in prefix or ():
        text = json.dumps([digest, c.get("name"), c.get("arguments", {}), c.get("ok", True)],
                          sort_keys=True, separators=(",", ":"), default=str)
        digest = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    return digest


def _check_token(token: Any) -> str | None:
    if token is None:
        return None
    if not isinstance(token, str) or not 16 <= len(token) <= MAX_TOKEN or not token.isprintable():
        raise EpisodeError(f"episode token must be a string of 16-{MAX_TOKEN} printable characters, "
                           f"got {token!r:.40}")
    return token


def _check_seq(seq: Any) -> int | None:
    if seq is None:
        return None
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq < 2**53:
        raise EpisodeError(f"seq must be an integer >= 1 (the call's number since the open), "
                           f"got {seq!r:.40}")
    return seq


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
        max_memory: int | None = None,
        **store_kwargs: Any,
    ) -> None:
        if max_prefix < 0:
            raise ValueError(f"max_prefix must be >= 0, got {max_prefix}")
        if max_memory is None and os.environ.get(MAX_MEMORY_ENV):
            max_memory = parse_bytes(os.environ[MAX_MEMORY_ENV], MAX_MEMORY_ENV)
        self.registry = registry if registry is not None else load_registry()
        self.store = EpisodeStore(
            self.registry, max_episodes=max_episodes, idle_seconds=idle_seconds,
            max_memory=max_memory, **store_kwargs
        )
        self.max_prefix = max_prefix
        self._names = sorted(self.registry.tools)
        self._opening: set[str] = set()  # ids whose prefix is being replayed by open_async
        self._staged: OrderedDict[str, Episode] = OrderedDict()  # chunked rebuilds in progress

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
        token: str | None = None,
        replace: bool = False,
        seq: int = 0,
        append: bool = False,
        final: bool = True,
    ) -> list[LoggedCall]:
        """Open an episode, replay `prefix` (earlier turns' calls) and return their logged calls.

        Each prefix entry must come out as it says (`"ok"`, default true): a call that fails (or
        one marked `"ok": false` that succeeds) fails the open and leaves nothing behind.
        `server` restricts the prefix to one server's tools (what a per-server endpoint does).

        `token` makes the caller the episode's owner. Reopening an open id with the same token,
        seed and prefix is a no-op (a retried open); anything else is refused unless `replace`
        is set with the owner's token: then the episode is rebuilt off to the side and swapped in
        only once the whole replay succeeded (the live one is untouched until then). `seq` is the
        number of sequenced calls the replay stands for (a rebuilt log: the next call is seq+1).
        A replay longer than `max_prefix` goes in chunks: `final=False` keeps the build staged,
        `append=True` continues it, and the chunk with `final=True` swaps it in.
        """
        episode, calls = self._prepare(episode_id, seed, prefix, server, token, replace, seq, append)
        if episode is None:
            return []
        logged: list[LoggedCall] = []
        for _ in self._replay(episode, calls, logged):
            pass
        self._finish(episode, replace, final)
        return logged

    async def open_async(
        self,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        *,
        server: str | None = None,
        token: str | None = None,
        replace: bool = False,
        seq: int = 0,
        append: bool = False,
        final: bool = True,
    ) -> int:
        """`open` for the event loop: yields between chunks of the replay; returns its length."""
        episode, calls = self._prepare(episode_id, seed, prefix, server, token, replace, seq, append)
        if episode is None:
            return len(calls)
        self._opening.add(episode.episode_id)
        try:
            for _ in self._replay(episode, calls, None):
                await asyncio.sleep(0)
        finally:
            self._opening.discard(episode.episode_id)
        self._finish(episode, replace, final)
        return len(calls)

    def close(self, episode_id: str, token: str | None = None) -> bool:
        """Forget an episode (and that it was ever lost); True if it was open.

        An episode opened with a token is closed only by a request carrying that token.
        """
        episode_id = check_episode_id(episode_id)
        episode = self.store.get(episode_id)
        token = _check_token(token)
        if episode is not None and episode.token is not None:
            self._check_owner(episode, token)
        self._staged.pop(episode_id, None)
        return self.store.close(episode_id)

    def is_open(self, episode_id: str) -> bool:
        return episode_id in self.store

    def server_hash(self, episode_id: str, server: str, token: str | None = None) -> str:
        episode = self._existing(episode_id, token)
        self.registry.server(server)
        return self.store.server_hash(episode, server)

    def state_hash(
        self, episode_id: str, servers: Iterable[str] | None = None, token: str | None = None
    ) -> str:
        """SHA-256 over the per-server hashes of `servers` (default: the servers it has called)."""
        episode = self._existing(episode_id, token)
        names = sorted(set(servers) if servers is not None else episode.touched)
        for name in names:
            self.registry.server(name)
        per = {name: self.store.server_hash(episode, name) for name in names}
        return hashlib.sha256(json.dumps(per, sort_keys=True).encode()).hexdigest()

    def state(self, episode_id: str, server: str, token: str | None = None) -> dict[str, Any]:
        """The episode's state of one server as JSON (for notebooks and debugging)."""
        episode = self._existing(episode_id, token)
        return self.store.read_state(episode, server).model_dump(mode="json")

    def effect(
        self, episode_id: str, servers: Iterable[str] | None = None, token: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """What the episode's calls did to each of `servers` (default: those it has called): the
        canonical diff of its state against its seed's (prove.env.effects; {} per untouched one)."""
        episode = self._existing(episode_id, token)
        names = sorted(set(servers) if servers is not None else episode.touched)
        for name in names:
            self.registry.server(name)
        return {name: state_diff(self.store.bases[name].get(episode.seed)[0],
                                 self.store.read_state(episode, name)) for name in names}

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
        token: str | None = None,
        seq: int | None = None,
    ) -> LoggedCall:
        """Call tool `name` in an episode (opened lazily from seed + prefix); never raises ToolError.

        `server` restricts the call (and a lazy open's prefix) to one server's tools (what a
        per-server MCP endpoint does). `resume=True` says the caller has already made calls in
        this episode: if it is not open, the call fails (`EpisodeLost`) instead of reseeding it.
        A call to an episode that was evicted or expired fails the same way, every time while
        the store remembers the loss. `token` and `seq`: see the module docstring.
        """
        episode_id = DEFAULT_EPISODE if episode_id is None else check_episode_id(episode_id)
        if token is not None or seq is not None:
            token, seq = _check_token(token), _check_seq(seq)
        episode = self._lookup(episode_id, seed, prefix, resume, token, seq)
        if episode is None:
            self.open(episode_id, 0 if seed is None else seed, prefix, server=server, token=token)
            episode = self.store.get(episode_id)
            assert episode is not None
        return self._sequenced(episode, name, {} if arguments is None else arguments, server, seq)

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
        token: str | None = None,
        seq: int | None = None,
    ) -> LoggedCall:
        """`call` for the event loop: a lazy open replays its prefix without stalling others."""
        episode_id = DEFAULT_EPISODE if episode_id is None else check_episode_id(episode_id)
        if token is not None or seq is not None:
            token, seq = _check_token(token), _check_seq(seq)
        episode = self._lookup(episode_id, seed, prefix, resume, token, seq)
        if episode is None:
            await self.open_async(episode_id, 0 if seed is None else seed, prefix, server=server,
                                  token=token)
            episode = self.store.get(episode_id)
            if episode is None:  # evicted between the open and this call: say so, run nothing
                raise EpisodeLost(f"episode {episode_id!r} was evicted right after it was opened")
        episode.pins += 1
        try:
            return self._sequenced(episode, name, {} if arguments is None else arguments, server, seq)
        finally:
            episode.pins -= 1

    def _lookup(
        self, episode_id: str, seed: int | None, prefix: Any, resume: bool, token: str | None,
        seq: int | None,
    ) -> Episode | None:
        """The open episode, None if it should be opened lazily, or an error if it was lost."""
        episode = self.store.get(episode_id)
        if episode is None:
            if episode_id in self._opening:
                raise EpisodeOpening(
                    f"episode {episode_id!r} is being opened by another request; retry once it is open"
                )
            reason = self.store.gone(episode_id)
            if reason is not None:
                if episode_id == DEFAULT_EPISODE:  # a stock client cannot reopen: reported once
                    self.store.forgive(episode_id)
                raise EpisodeLost(
                    f"episode {episode_id!r} {reason}; its state is gone and this call did not run. "
                    "Reopen it explicitly (POST /control/episodes, Hub.open) from its seed, prefix "
                    "and the calls made since (EnvClient's episode handle does this from its call "
                    "log), or close it to start it afresh"
                )
            if resume or (seq is not None and seq > 1):
                what = "_meta.resume" if resume else f"_meta.seq {seq}"
                raise EpisodeLost(
                    f"episode {episode_id!r} is not open on this server (closed, or the server "
                    f"restarted) but the caller has already made calls in it ({what}); this "
                    "call did not run. Reopen it from its seed, prefix and the calls made since"
                )
            return None
        if episode.token != token:
            self._check_owner(episode, token)
        if seed is not None and _check_seed(seed) != episode.seed:
            raise EpisodeConflict(
                f"episode {episode_id!r} was opened with seed {episode.seed}; "
                f"this call carries seed {seed}"
            )
        if prefix is not None and not resume:
            calls = self._check_prefix(prefix)
            if prefix_digest(calls) != episode.prefix_digest:
                raise EpisodeConflict(
                    f"episode {episode_id!r} is already open from a different prefix than this "
                    f"call carries ({len(calls)} calls); its state is not what this prefix says. "
                    "Use a new episode id, or close this one first"
                )
        return episode

    def _check_owner(self, episode: Episode, token: str | None) -> None:
        if episode.token == token:
            return
        if episode.token is None:
            raise EpisodeForbidden(
                f"episode {episode.episode_id!r} was opened without an episode token, but this "
                "request carries one: it is not the episode this caller opened. Use a new "
                "episode id"
            )
        raise EpisodeForbidden(
            f"episode {episode.episode_id!r} belongs to another owner or was reopened since: "
            f"this request {'carries a different' if token else 'carries no'} episode token "
            "(_meta.token, or the Prove-Episode-Token header on /control/)"
        )

    def _sequenced(
        self, episode: Episode, name: Any, arguments: Any, server: str | None, seq: int | None
    ) -> LoggedCall:
        """Run a call once: by its `seq`, a repeat of the last call is answered from the record."""
        if seq is None:
            episode.seq += 1
            return self._dispatch(episode, name, arguments, server)
        digest = call_digest(name, arguments)
        if seq == episode.seq and episode.last is not None and episode.last[0] == seq:
            if episode.last[1] == digest:
                return copy.deepcopy(episode.last[2])
            raise EpisodeConflict(
                f"episode {episode.episode_id!r}: call #{seq} already ran a different call "
                f"(this one is {str(name)!r:.60}); the caller's log is behind the server's state. "
                "Rebuild the episode from the log (reopen with replace)"
            )
        if seq != episode.seq + 1:
            raise EpisodeConflict(
                f"episode {episode.episode_id!r} has applied {episode.seq} calls since it was "
                f"opened; this call says it is #{seq}. It did not run. Rebuild the episode from "
                "the caller's log (reopen with replace)"
            )
        logged = self._dispatch(episode, name, arguments, server)
        episode.seq = seq
        episode.last = (seq, digest, copy.deepcopy(logged))
        return logged

    def _dispatch(
        self, episode: Episode, name: Any, arguments: Any, server: str | None
    ) -> LoggedCall:
        spec = self.registry.tools.get(name) if isinstance(name, str) else None
        if spec is None or (server is not None and spec.server != server):
            error, close = self._unknown_tool(name, server)
            return {"name": name, "arguments": arguments, "ok": False, "error": error,
                    "detail": ToolError(error, reason="unknown_tool", rejected=(str(name)[:80],),
                                        choices=close).detail_for(None)}
        try:
            kwargs = spec.validate(arguments)
            if spec.write:
                try:
                    state = self.store.write_state(episode, spec.server)
                except StoreFull as exc:
                    raise HubFull(str(exc)) from None
            else:
                state = self.store.read_state(episode, spec.server)
            episode.n_calls += 1
            episode.touched.add(spec.server)
            if spec.write:
                with writing():
                    try:
                        result = spec.fn(state, **kwargs)
                    finally:
                        self.store.settle(episode)
            else:
                result = spec.fn(state, **kwargs)
        except McpToolError as exc:  # servers raise prove.env.errors.ToolError, a subclass
            return {"name": name, "arguments": arguments, "ok": False, "error": str(exc),
                    "detail": detail_of(exc, arguments if isinstance(arguments, Mapping) else None)}
        return {"name": name, "arguments": arguments, "ok": True,
                "result": result.model_dump(mode="json")}

    # -- helpers ---------------------------------------------------------------------------
    def _existing(self, episode_id: str, token: str | None = None) -> Episode:
        episode = self.store.get(check_episode_id(episode_id))
        if episode is None:
            reason = self.store.gone(episode_id)
            if reason is not None:
                raise EpisodeLost(f"episode {episode_id!r} is not open: it {reason}")
            raise EpisodeMissing(f"episode {episode_id!r} is not open (closed, expired or never opened)")
        token = _check_token(token)
        if episode.token is not None:  # an episode opened without a token is anyone's to read
            self._check_owner(episode, token)
        return episode

    def _prepare(
        self, episode_id: Any, seed: Any, prefix: Any, server: str | None, token: Any,
        replace: bool, seq: Any, append: bool,
    ) -> tuple[Episode | None, list[Mapping[str, Any]]]:
        """Check an open's inputs; a detached episode to replay into (None: already open as
        asked), and the prefix."""
        check_episode_id(episode_id)
        _check_seed(seed)
        token = _check_token(token)
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 2**53:
            raise EpisodeError(f"seq must be an integer >= 0, got {seq!r:.40}")
        calls = self._check_prefix(prefix, server)
        if episode_id in self._opening:
            raise EpisodeOpening(f"episode {episode_id!r} is being opened by another request; retry "
                                 "once it is open")
        if append:
            staged = self._staged.get(episode_id)
            if staged is None or staged.token != token or staged.seed != seed:
                raise EpisodeConflict(
                    f"no staged build of episode {episode_id!r} with this token and seed to "
                    "append to (start it with final=false and no append; at most "
                    f"{MAX_STAGED} builds are staged at once)"
                )
            del self._staged[episode_id]
            staged.seq = seq
            staged.prefix_digest = prefix_digest(calls, staged.prefix_digest)
            return staged, calls
        episode = self.store.get(episode_id)
        if episode is not None:
            if token is None or episode.token != token:
                if token is not None or episode.token is not None:
                    self._check_owner(episode, token)
                raise EpisodeBusy(f"episode {episode_id!r} is already open; close it first")
            if not replace:
                if episode.seed == seed and episode.prefix_digest == prefix_digest(calls):
                    return None, calls  # a retried open of what is open: nothing to do
                raise EpisodeConflict(
                    f"episode {episode_id!r} is already open with seed {episode.seed} and a "
                    "different prefix or seed than this open; reopen with replace to rebuild it"
                )
        fresh = Episode(episode_id, seed, self.store.clock(), token, prefix_digest(calls))
        fresh.seq = seq
        return fresh, calls

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

    def _finish(self, episode: Episode, replace: bool, final: bool) -> None:
        if not final:
            self._staged[episode.episode_id] = episode
            while len(self._staged) > MAX_STAGED:
                self._staged.popitem(last=False)
            return
        if replace:
            live = self.store.get(episode.episode_id)
            if live is not None and live.token != episode.token:  # reopened by someone meanwhile
                self._check_owner(live, episode.token)
        try:
            self.store.insert(episode, replace=replace)
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

    def _unknown_tool(self, name: Any, server: str | None) -> tuple[str, list[str]]:
        pool = (
            self._names if server is None else self.registry.server(server).tool_names()
        )
        where = f"on server '{server}'" if server else "in this environment"
        close = difflib.get_close_matches(str(name), pool, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown tool {str(name)!r:.80} {where}{hint} ({len(pool)} tools available)", close
