"""One PROVE turn as a live episode an outside framework drives: read a row, call tools, score, close.

    from prove.integrations.turn import Turn, TurnRow
    from prove.rows import read_rows

    row = TurnRow.from_row(read_rows("results/synth/val.parquet")[0])
    turn = Turn(row, ["http://127.0.0.1:8765"], episode_id="myframework-0")
    text = await turn.call("get_balance", {"account_id": "ACC-0001"})   # what the model reads back
    result = await turn.score("prove")     # prove.reward.score_turn over the call log (+ state verdict)
    await turn.close()

Every adapter in ``prove.integrations`` (OpenEnv, SkyRL-Gym, verifiers) is this class in its
framework's terms: the episode opens lazily at the row's seed with its earlier turns' ground-truth
calls replayed (``prove.train.session``, the plumbing training's own rollouts use), each call's log
entry is what ``prove.reward`` scores, and the effect of the episode on the records is compared with
the row's ``expected_effect`` for the reward's ``outcome`` component. Episode ids are the caller's:
two rollouts of one row must pass two ids (``episode_id`` below), which is what keeps their state
apart. Sync frameworks call ``run_sync``: one event loop thread per process owns the connections.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import sys
import threading
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from prove.reward import get_config, outcome_of, score_turn
from prove.rows import EpisodeSpec, decode_messages, episode_spec, openai_messages
from prove.train.session import (
    call_in_episode,
    close_episode,
    episode_effect,
    refuse_arguments,
    refuse_unoffered,
    render,
)

__all__ = ["TurnRow", "Turn", "run_sync", "new_episode_id", "prove_servers"]

T = TypeVar("T")


_EPISODES = itertools.count()


def new_episode_id(prefix: str) -> str:
    """``<prefix>-<host>-<pid>-<n>``: an episode id no other rollout of this process or host shares
    (a counter: no clock, no uuid), for adapters whose framework names no episode of its own."""
    return f"{prefix}-{socket.gethostname()}-{os.getpid()}-{next(_EPISODES)}"


@dataclass(frozen=True)
class TurnRow:
    """What an adapter needs of a training row (``prove.rows``): the conversation so far, the
    offered tools, the ground truth, and how to open the episode."""

    example_id: str
    turn: int
    kind: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    ground_truth: dict[str, Any]
    spec: EpisodeSpec
    expected_effect: str = ""
    split: str = "train"

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TurnRow:
        """A row as ``prove.rows.turn_row`` writes it (or read back from parquet)."""
        try:
            info = row["extra_info"]
            kwargs = info["tools_kwargs"]["prove"]["create_kwargs"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a PROVE training row (no extra_info.tools_kwargs.prove.create_kwargs: "
                             f"{exc!r}); rows come from prove.rows.turn_row or synthesis' parquet") from None
        tools = info.get("tools") or "[]"
        gt = row["reward_model"]["ground_truth"]
        return cls(
            example_id=str(info.get("example_id", "")),
            turn=int(info.get("turn", 0)),
            kind=str(info.get("kind", "multi_turn")),
            messages=tuple(decode_messages(row["prompt"])),
            tools=tuple(json.loads(tools) if isinstance(tools, str) else tools),
            ground_truth=json.loads(gt) if isinstance(gt, str) else dict(gt),
            spec=episode_spec(kwargs),
            expected_effect=str(info.get("expected_effect") or ""),
            split=str(info.get("split", "train")),
        )

    @property
    def id(self) -> str:
        """``<example_id>:<turn>``: unique per row of an export."""
        return f"{self.example_id}:{self.turn}"

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", t).get("name") for t in self.tools]

    def chat(self) -> list[dict[str, Any]]:
        """The conversation as an OpenAI-compatible chat API takes it (arguments as JSON strings)."""
        return openai_messages(self.messages)


@dataclass
class Turn:
    """A live episode for one row: calls logged as the reward reads them, then scored and closed."""

    row: TurnRow
    env_urls: Sequence[str]
    episode_id: str
    timeout: float = 30.0
    token: str | None = None
    log: list[dict[str, Any]] = field(default_factory=list)
    """The reward's view of every call made (name, arguments, ok, error)."""
    replay: list[dict[str, Any]] = field(default_factory=list)
    """The calls the server executed (what rebuilds the episode if the server lost it)."""

    def __post_init__(self) -> None:
        if isinstance(self.env_urls, str):
            self.env_urls = [self.env_urls]
        self.env_urls = list(self.env_urls)

    async def call(self, name: Any, arguments: Any) -> str:
        """Run one call in this turn's episode; returns the text the model reads back. ``arguments``:
        a dict or its JSON text. A call that cannot run (a tool the row did not offer, arguments that
        are no JSON object) is logged as failed without reaching a server, worded as training's
        rollouts word it (``prove.train.session``)."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        refused = (refuse_unoffered(name, arguments) if name not in self.row.tool_names
                   else refuse_arguments(str(name), raw))
        if refused is not None:
            self.log.append(refused)
            return render(refused)
        text, entry = await call_in_episode(self.env_urls, name, json.loads(raw), episode_id=self.episode_id,
                                            spec=self.row.spec, replay=self.replay, timeout=self.timeout,
                                            token=self.token)
        self.log.append(entry)
        return text

    def adopt(self, log: Sequence[Mapping[str, Any]], replay: Sequence[Mapping[str, Any]]) -> None:
        """Take over the calls another process made in this episode (same id), e.g. a tool server
        that ran them, so ``score`` and ``close`` here see them."""
        self.log = [dict(e) for e in log]
        self.replay = [dict(c) for c in replay]

    async def effect(self) -> str:
        """The hash of what the episode did to the records ("" when the server cannot say)."""
        return await episode_effect(self.env_urls, self.episode_id, spec=self.row.spec, replay=self.replay,
                                    timeout=self.timeout, token=self.token)

    async def score(self, reward: str | Any = "prove", effect: str | None = None) -> dict[str, float | int]:
        """``prove.reward.score_turn`` on this turn's call log, its ground truth and offered tools
        under ``reward`` (an ablation name or a ``RewardConfig``); the state verdict is read from
        the live episode when the row records its expected effect, unless the caller passes the
        ``effect`` it has just read (``Turn.effect``), which saves a round trip."""
        config = get_config(reward)
        outcome = None
        if self.row.expected_effect:
            outcome = outcome_of(effect if effect is not None else await self.effect(), self.row.expected_effect)
        return score_turn(self.log, self.row.ground_truth, list(self.row.tools), config, outcome)

    async def close(self) -> bool:
        return await close_episode(self.env_urls, self.episode_id, self.timeout, self.token)


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run a coroutine on this process's PROVE event loop thread (started on first use) and wait:
    how a synchronous framework's ``step`` calls a ``Turn``. The connection pool lives on that
    one loop, so every sync caller shares it."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            _LOOP = asyncio.new_event_loop()
            threading.Thread(target=_LOOP.run_forever, name="prove-integrations", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _LOOP).result(timeout)


@contextmanager
def prove_servers(urls: Sequence[str] | None) -> Iterator[list[str]]:
    """The environment servers an adapter's command serves episodes from: ``urls`` when given
    (``--env-url``), else a ``prove serve`` started for the block and stopped after it."""
    if urls:
        yield list(urls)
        return
    from prove.env.launch import EnvServer

    with EnvServer() as server:
        print(f"# prove serve started at {server.url}", file=sys.stderr)
        yield [server.url]
