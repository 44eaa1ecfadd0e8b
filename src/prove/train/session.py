"""Rollout-side plumbing for PROVE tools: pooled env connections, one call, its log entry, close.

    text, entry = await call_in_episode(urls, "get_balance", {...}, episode_id=rid, spec=spec,
                                        replay=replay, timeout=30)
    effect = await episode_effect(urls, rid, spec=spec, replay=replay)   # its effect's hash
    await close_episode(urls, rid)

No VERL import (``prove.train.tool`` and ``prove.train.agent_loop`` wrap this for VERL). The only
process-wide state is the connection pool: one ``EnvClient`` per (URLs, event loop), shared by
every tool object of a rollout worker. Episode state lives on the server; what a rollout needs to
rebuild it after a server restart (seed, prefix, its own executed calls) travels with the
trajectory (``replay``), never in a global.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from prove.env.client import EnvClient, EnvClientError
from prove.rows import EpisodeSpec

__all__ = [
    "TOOL_LOG_KEY", "EFFECT_KEY", "MAX_ERROR_CHARS", "client_for", "close_clients", "call_in_episode",
    "episode_effect", "close_episode", "log_entry", "failed_entry", "refuse_arguments", "refuse_unoffered",
    "render",
]

logger = logging.getLogger(__name__)

TOOL_LOG_KEY = "tool_calls"
"""The trajectory's ``extra_fields`` key holding its call log (what ``prove.reward.verl`` reads)."""
EFFECT_KEY = "effect_hash"
"""The trajectory's ``extra_fields`` key holding its episode's effect hash ("" when unread)."""
MAX_ERROR_CHARS = 1000

_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, asyncio.Task]] = (
    weakref.WeakKeyDictionary()
)


async def _open(urls: list[str], timeout: float, token: str | None) -> EnvClient:
    client = EnvClient(urls, timeout=timeout, token=token)
    await client.__aenter__()
    return client


async def client_for(urls: Sequence[str], timeout: float = 30.0, token: str | None = None) -> EnvClient:
    """The open ``EnvClient`` for these URLs on the running event loop (opened once, on first use;
    concurrent first callers share the one opening). ``token``: the server's bearer token
    (default: ``$PROVE_ENV_TOKEN``, read by ``EnvClient``)."""
    pool = _POOLS.setdefault(asyncio.get_running_loop(), {})
    key = (tuple(urls), float(timeout), token)
    task = pool.get(key)
    if task is not None and task.done() and not task.cancelled() and task.exception() is None:
        return task.result()  # the common case: no await, no shield
    if task is None:  # registered before any await: every other caller finds this task
        task = pool[key] = asyncio.ensure_future(_open(list(urls), float(timeout), token))
    try:
        return await asyncio.shield(task)
    except BaseException:
        if task.done() and pool.get(key) is task:
            pool.pop(key)  # a failed opening is retried by the next call
        raise


async def close_clients() -> None:
    """Close this event loop's pooled connections (tests, notebooks; workers just exit)."""
    pool = _POOLS.pop(asyncio.get_running_loop(), {})
    for task in pool.values():
        if task.done() and not task.cancelled() and task.exception() is None:
            await task.result().__aexit__(None, None, None)


def render(logged: Mapping[str, Any]) -> str:
    """What the model reads back: the result as compact JSON, or ``Error: <message>``."""
    if logged.get("ok"):
        return json.dumps(logged.get("result"), ensure_ascii=False, separators=(",", ":"))
    return f"Error: {logged.get('error', 'the call failed')}"


def log_entry(logged: Mapping[str, Any]) -> dict[str, Any]:
    """The reward's view of a logged call: name, arguments, ok, and a short error. The result
    payload is left out: the reward does not read it and the log crosses Ray with the batch."""
    entry = {"name": logged.get("name"), "arguments": logged.get("arguments"), "ok": bool(logged.get("ok"))}
    if not entry["ok"]:
        entry["error"] = str(logged.get("error", ""))[:MAX_ERROR_CHARS]
    return entry


def failed_entry(name: Any, arguments: Any, error: str) -> dict[str, Any]:
    """A call that never reached a server (unknown name, arguments not JSON, infrastructure)."""
    return {"name": name, "arguments": arguments, "ok": False, "error": str(error)[:MAX_ERROR_CHARS]}


def refuse_arguments(name: str, raw: str) -> dict[str, Any] | None:
    """A failed entry for a call whose arguments (``raw``, JSON text) are not a JSON object — a
    tool must not get a string or a list; None when they are one."""
    try:
        arguments = json.loads(raw)
    except (ValueError, RecursionError):
        arguments = None
    if isinstance(arguments, dict):
        return None
    what = "are not JSON" if arguments is None else f"are a JSON {type(arguments).__name__}"
    return failed_entry(name, raw if arguments is None else arguments,
                        f"the arguments of {name} {what}; they must be a JSON object "
                        "of parameter names to values")


def refuse_unoffered(name: Any, arguments: Any) -> dict[str, Any]:
    """A failed entry for a call to a tool the row did not offer (it never reaches a server)."""
    return failed_entry(name, arguments, f"Unknown function {name!r}: not one of the offered tools")


async def call_in_episode(
    urls: Sequence[str],
    name: str,
    arguments: Mapping[str, Any],
    *,
    episode_id: str,
    spec: EpisodeSpec,
    replay: list[dict[str, Any]],
    timeout: float = 30.0,
    token: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run one tool call in the trajectory's episode; return (text for the model, log entry).

    The episode opens lazily on its first call from ``spec`` (seed + prefix in ``_meta``).
    ``replay`` is this trajectory's list of executed calls: the client appends to it and replays
    it if the server restarted. A tool error is a normal result (``ok: false``, text
    ``Error: ...``); a timeout or an unreachable server is logged the same way, so the model is
    told and the reward sees a failed call. If the server lost the episode (evicted, expired,
    restarted), the client rebuilds it from ``replay`` before the call runs.
    """
    client = await client_for(urls, timeout, token)
    handle = client.episode(episode_id, spec.seed, list(spec.prefix))
    handle.log = replay
    try:
        async with _deadline(timeout):
            logged = await handle.call(name, dict(arguments))
    except (TimeoutError, asyncio.TimeoutError):
        logged = {"name": name, "arguments": dict(arguments), "ok": False,
                  "error": f"the tool did not answer within {timeout:g}s"}
    except EnvClientError as exc:
        logger.warning("PROVE tool %s in episode %s failed: %s", name, episode_id, exc)
        logged = {"name": name, "arguments": dict(arguments), "ok": False, "error": str(exc)}
    return render(logged), log_entry(logged)


def _deadline(seconds: float) -> Any:
    """``asyncio.timeout`` (3.11+: no extra task per call), else a ``wait_for``-free stand-in."""
    if hasattr(asyncio, "timeout"):
        return asyncio.timeout(seconds)
    return _NoDeadline()  # Python 3.10: the HTTP client's own timeout bounds each request


class _NoDeadline:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


async def episode_effect(
    urls: Sequence[str],
    episode_id: str,
    *,
    spec: EpisodeSpec,
    replay: list[dict[str, Any]],
    timeout: float = 30.0,
    token: str | None = None,
) -> str:
    """The hash of what the trajectory's episode did to the records (``prove.env.effects``, every
    server it touched, its prefix included): what the reward's ``outcome`` compares with the row's
    ``expected_effect``. An episode no call reached (it opens lazily) is opened at seed + prefix
    first, so the caller closes it as usual. "" (and a warning) when the server cannot say: the
    outcome is then unknown, which a reward that weighs it refuses.
    """
    try:
        client = await client_for(urls, timeout, token)
        handle = client.episode(episode_id, spec.seed, list(spec.prefix))
        handle.log = replay
        async with _deadline(timeout):
            if not replay:
                await handle.rebuild()  # never opened, or opened by a call whose reply was lost
            return str((await handle.effect())["hash"])
    except (TimeoutError, asyncio.TimeoutError, EnvClientError) as exc:
        logger.warning("could not read the effect of PROVE episode %s: %s", episode_id, exc)
        return ""


async def close_episode(
    urls: Sequence[str], episode_id: str, timeout: float = 30.0, token: str | None = None
) -> bool:
    """Close an episode on its server; False (and a warning) if it could not be closed."""
    try:
        client = await client_for(urls, timeout, token)
        return await client.close(episode_id)
    except EnvClientError as exc:  # the server's idle expiry reclaims it
        logger.warning("could not close PROVE episode %s: %s", episode_id, exc)
        return False
