"""PROVE in OpenEnv's terms (``openenv-core`` 0.3): an ``Environment`` per live episode, its FastAPI
app, a rubric, a client, and a ``rollout_func`` for TRL's ``GRPOTrainer``.

    python -m prove.integrations.openenv --rows results/synth/train.parquet --env-url http://127.0.0.1:8765

    from prove.integrations.openenv import ProveAction, ProveEnv
    with ProveEnv(base_url="http://127.0.0.1:8000").sync() as env:
        obs = env.reset(row="prove-multi_turn-000003:0").observation   # the row's chat and tools
        env.step(ProveAction(tool_name="get_balance", arguments={"account_id": "ACC-0001"}))
        done = env.step(ProveAction())        # no tool: the turn ends; reward = prove.reward

    trainer = GRPOTrainer(model, reward_funcs=[reward_from_env], train_dataset=trl_dataset(rows),
                          rollout_func=make_rollout_func(URL, openai_model_step(BASE_URL, MODEL)))

``ProveEnvironment.reset(row=...)`` opens a fresh PROVE episode at the row's seed with its prefix
replayed (``prove.integrations.turn.Turn``: every OpenEnv session is its own episode id, so two
rollouts of a row never share state); ``step`` runs one tool call and returns the text the model
reads back; the action without a tool ends the turn, and ``ProveRubric`` scores it with
``prove.reward`` (``Turn.score``, any configuration or ablation by name) into the observation's
``reward``, with every component and the call log beside it. The server (``create_prove_app``,
``openenv.yaml``'s ``app``) serves the rows of one export over OpenEnv's WebSocket protocol.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from openenv.core.rubrics.trajectory import TrajectoryRubric
from pydantic import Field

from prove.integrations.turn import Turn, TurnRow, new_episode_id, prove_servers, run_sync
from prove.proc import ChildServer, free_port
from prove.reward import get_config

__all__ = ["ProveAction", "ProveObservation", "ProveState", "ProveRubric", "ProveEnvironment",
           "create_prove_app", "ProveEnv", "ModelStep", "openai_model_step", "scripted_model_step",
           "Rollout", "play", "trl_dataset", "make_rollout_func", "reward_from_env", "ROW_KEY", "OpenEnvServer",
           "main"]

ROW_KEY = "prove_row"
"""The key of a TRL prompt's first message that names its row (``trl_dataset`` writes it): TRL hands
``rollout_func`` only the prompts, and the row is what the episode is opened from."""



# -- OpenEnv's types ----------------------------------------------------------------------------
class ProveAction(Action):
    """One step of a turn: a tool call (``tool_name`` and ``arguments``, a dict or the JSON text the
    model wrote), or, with no ``tool_name``, the end of the turn (the model answered without a call)."""

    tool_name: str | None = Field(default=None, description="the tool to call; None ends the turn")
    arguments: dict[str, Any] | str = Field(default_factory=dict,
                                            description="the call's arguments (an object or its JSON text)")


class ProveObservation(Observation):
    """What the agent sees. After ``reset``: the row's conversation and offered tools. After a call:
    the tool's result as text and whether it succeeded. At the end (``done``): ``reward`` is the
    reward's ``score``, ``scores`` every component, ``calls`` the call log it scored, ``effect`` the
    hash of what the episode did to the records ("" when not read)."""

    row_id: str = Field(default="", description="<example_id>:<turn> of the row")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="the row's chat (reset)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="the offered tool schemas (reset)")
    result: str = Field(default="", description="the text the model reads back (step)")
    ok: bool | None = Field(default=None, description="whether the call succeeded (step)")
    scores: dict[str, float] = Field(default_factory=dict, description="prove.reward's components (done)")
    calls: list[dict[str, Any]] = Field(default_factory=list, description="the call log scored (done)")
    effect: str = Field(default="", description="the episode's effect hash (done)")


class ProveState(State):
    """The session's episode: its row, the calls made so far, the reward config, whether it ended."""

    row_id: str = ""
    calls: int = 0
    reward_config: str = "prove"
    done: bool = False


# -- the rubric ---------------------------------------------------------------------------------
class ProveRubric(TrajectoryRubric):
    """``prove.reward`` as an OpenEnv rubric: 0.0 for every call, the turn's score at its end (all
    credit to the last step). ``reward`` is an ablation name (``prove.reward.ABLATIONS``) or a
    ``RewardConfig``; the environment binds each episode's ``Turn`` on reset."""

    def __init__(self, reward: Any = "prove") -> None:
        super().__init__(intermediate_reward=0.0)
        self.config = get_config(reward)
        self.name = reward if isinstance(reward, str) else "custom"
        self.turn: Turn | None = None
        self.last_scores: dict[str, float | int] = {}
        self.last_effect = ""
        """The episode's effect hash the last score was judged on ("" when the row records none)."""

    def bind(self, turn: Turn) -> None:
        self.turn = turn
        self.reset()

    def reset(self) -> None:
        super().reset()
        self.last_scores, self.last_effect = {}, ""

    async def forward(self, action: Any, observation: Any) -> float:  # type: ignore[override]
        self._trajectory.append((action, observation))
        if not getattr(observation, "done", False):
            return self.intermediate_reward
        if self.turn is None:
            raise RuntimeError("ProveRubric has no episode: the environment binds one on reset")
        self.last_effect = await self.turn.effect() if self.turn.row.expected_effect else ""
        self.last_scores = await self.turn.score(self.config, self.last_effect or None)
        return float(self.last_scores["score"])

    def score_trajectory(self, trajectory: list[tuple[Any, Any]]) -> float:
        if not self.last_scores:
            raise RuntimeError("the turn has not ended: ProveRubric scores the step that ends it")
        return float(self.last_scores["score"])

    def compute_step_rewards(self) -> list[float]:
        if not self._trajectory or not self.last_scores:
            return [self.intermediate_reward] * len(self._trajectory)
        return [self.intermediate_reward] * (len(self._trajectory) - 1) + [float(self.last_scores["score"])]

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "reward": self.name}


# -- the environment ----------------------------------------------------------------------------
def _turn_rows(rows: Sequence[Mapping[str, Any] | TurnRow]) -> dict[str, TurnRow]:
    out: dict[str, TurnRow] = {}
    for raw in rows:
        row = raw if isinstance(raw, TurnRow) else TurnRow.from_row(raw)
        if row.id in out:
            raise ValueError(f"two rows share the id {row.id!r} (<example_id>:<turn>); pass one export's rows")
        out[row.id] = row
    if not out:
        raise ValueError("no rows: pass a training-rows parquet from synthesis (prove.rows.read_rows)")
    return out


class ProveEnvironment(Environment[ProveAction, ProveObservation, ProveState]):
    """One OpenEnv session over PROVE's live servers: each ``reset(row=...)`` opens a fresh episode
    of that row (``Turn``), each ``step`` is one call in it or the end of the turn (module doc).

    ``rows``: training rows (``prove.rows`` dicts or ``TurnRow``), looked up by ``<example_id>:<turn>``
    or position; ``env_urls``: ``prove serve``'s URL(s); ``reward``: the default reward config
    (a ``reset`` may name another)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every instance is its own episode id on the server

    def __init__(self, rows: Sequence[Mapping[str, Any] | TurnRow] | Mapping[str, TurnRow],
                 env_urls: str | Sequence[str], reward: Any = "prove", timeout: float = 30.0) -> None:
        self.rows = dict(rows) if isinstance(rows, Mapping) else _turn_rows(rows)
        self.order = list(self.rows)
        self.env_urls = [env_urls] if isinstance(env_urls, str) else list(env_urls)
        self.default_reward = reward
        self.timeout = timeout
        super().__init__(rubric=ProveRubric(reward))
        self.turn: Turn | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # where this session's Turn runs
        self._state = ProveState()

    def _row(self, row: Any) -> TurnRow:
        if isinstance(row, bool) or row is None:
            raise ValueError(f"reset needs row=<example_id>:<turn> or a position 0..{len(self.order) - 1}; "
                             f"got {row!r}")
        if isinstance(row, int):
            if not 0 <= row < len(self.order):
                raise ValueError(f"row position {row} is out of range: this server has {len(self.order)} rows")
            return self.rows[self.order[row]]
        if str(row) not in self.rows:
            shown = ", ".join(self.order[:3]) + (", ..." if len(self.order) > 3 else "")
            raise ValueError(f"unknown row {row!r}; this server has {len(self.order)} rows ({shown})")
        return self.rows[str(row)]

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          row: str | int | None = None, reward: str | None = None,
                          **kwargs: Any) -> ProveObservation:
        if kwargs:
            raise ValueError(f"reset takes row, episode_id, seed and reward; got also {sorted(kwargs)}")
        chosen = self._row(row)
        if seed is not None and int(seed) != chosen.spec.seed:
            raise ValueError(f"row {chosen.id} opens its episode at seed {chosen.spec.seed} (where its ground "
                             f"truth holds); got seed={seed}. Leave seed out")
        await self._close_episode()
        rubric = ProveRubric(reward if reward is not None else self.default_reward)
        self.rubric = rubric
        self.loop = asyncio.get_running_loop()
        episode = episode_id or new_episode_id("openenv")
        self.turn = Turn(chosen, self.env_urls, episode_id=episode, timeout=self.timeout)
        rubric.bind(self.turn)
        self._state = ProveState(episode_id=episode, step_count=0, row_id=chosen.id, reward_config=rubric.name)
        return ProveObservation(row_id=chosen.id, messages=chosen.chat(), tools=[dict(t) for t in chosen.tools])

    async def step_async(self, action: ProveAction, timeout_s: float | None = None,
                         **kwargs: Any) -> ProveObservation:
        if self._state.done:
            raise RuntimeError(f"the turn of row {self._state.row_id} has ended; reset for a new episode")
        if self.turn is None:
            raise RuntimeError("step before reset: call reset(row=<example_id>:<turn>) first")
        self._state.step_count += 1
        if action.tool_name is None:
            obs = ProveObservation(row_id=self._state.row_id, done=True)
            obs.reward = await self._apply_rubric_async(action, obs)
            obs.scores = {k: float(v) for k, v in self.rubric.last_scores.items()}  # type: ignore[union-attr]
            obs.calls = [dict(e) for e in self.turn.log]
            obs.effect = self.rubric.last_effect  # type: ignore[union-attr]
            self._state.done = True
            await self._close_episode()
            return obs
        text = await self.turn.call(action.tool_name, action.arguments)
        self._state.calls = len(self.turn.log)
        obs = ProveObservation(row_id=self._state.row_id, result=text, ok=bool(self.turn.log[-1].get("ok")))
        obs.reward = await self._apply_rubric_async(action, obs)
        return obs

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ProveObservation:
        return run_sync(self.reset_async(seed=seed, episode_id=episode_id, **kwargs))

    def step(self, action: ProveAction, timeout_s: float | None = None, **kwargs: Any) -> ProveObservation:
        return run_sync(self.step_async(action, timeout_s=timeout_s, **kwargs))

    @property
    def state(self) -> ProveState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="prove", version=_version(),
            description=f"PROVE: {len(self.rows)} training rows over live stateful MCP tool servers, "
                        "rewarded by prove.reward (judge-free)")

    async def _close_episode(self) -> None:
        turn, self.turn = self.turn, None
        if turn is not None and (turn.log or turn.row.expected_effect):  # opened by a call or a read
            await turn.close()

    def close(self) -> None:
        """Close the open episode on the loop it ran on (OpenEnv calls this from a worker thread)."""
        if self.turn is None or self.loop is None or self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            if asyncio.get_running_loop() is self.loop:
                self.loop.create_task(self._close_episode())
                return
        asyncio.run_coroutine_threadsafe(self._close_episode(), self.loop).result(self.timeout)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prove")
    except PackageNotFoundError:
        return "0"


def create_prove_app(rows: Sequence[Mapping[str, Any] | TurnRow], env_urls: str | Sequence[str],
                     reward: Any = "prove", max_sessions: int = 64, timeout: float = 30.0) -> Any:
    """OpenEnv's FastAPI app (``create_app``: WebSocket sessions, /health, /schema, /metadata) serving
    ``rows`` over ``env_urls``; one ``ProveEnvironment`` per session, at most ``max_sessions`` open."""
    table = _turn_rows(rows)
    get_config(reward)  # an unknown name fails here, not in the first session

    def factory() -> ProveEnvironment:
        return ProveEnvironment(table, env_urls, reward=reward, timeout=timeout)

    return create_app(factory, ProveAction, ProveObservation, env_name="prove", max_concurrent_envs=max_sessions)


def __getattr__(name: str) -> Any:
    """``app``: the app ``openenv.yaml`` names, built from ``$PROVE_OPENENV_ROWS`` (a rows parquet) and
    ``$PROVE_ENV_URLS`` (comma-separated ``prove serve`` URLs), for ``uvicorn prove.integrations.openenv:app``."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from prove.rows import read_rows

    rows, urls = os.environ.get("PROVE_OPENENV_ROWS"), os.environ.get("PROVE_ENV_URLS")
    if not rows or not urls:
        raise RuntimeError("prove.integrations.openenv:app needs PROVE_OPENENV_ROWS (a rows parquet) and "
                           "PROVE_ENV_URLS (prove serve's URLs, comma-separated); or run "
                           "python -m prove.integrations.openenv --rows R --env-url U")
    app = create_prove_app(read_rows(rows), urls.split(","), reward=os.environ.get("PROVE_REWARD", "prove"))
    globals()["app"] = app
    return app


# -- the client ---------------------------------------------------------------------------------
class ProveEnv(EnvClient[ProveAction, ProveObservation, ProveState]):
    """OpenEnv's client for a PROVE server (``ProveEnv(base_url=...)``; ``.sync()`` for blocking use).
    Each client is one WebSocket session, so one episode at a time."""

    def _step_payload(self, action: ProveAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ProveObservation]:
        obs = ProveObservation(**payload.get("observation", {}), done=payload.get("done", False),
                               reward=payload.get("reward"))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> ProveState:
        return ProveState(**payload)


# -- a model driving an episode -----------------------------------------------------------------
ModelStep = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]
"""(chat so far, offered tools) -> the assistant's next message (OpenAI shape: content, tool_calls
with JSON-text arguments)."""


def openai_model_step(base_url: str, model: str, *, api_key: str = "EMPTY", max_tokens: int = 64,
                      temperature: float = 0.0, timeout: float = 120.0, **extra: Any) -> ModelStep:
    """A ``ModelStep`` that asks an OpenAI-compatible server (vLLM's, any API) for the next assistant
    message, the row's tools offered. ``extra`` goes into each request (no ``seed`` for vLLM's CPU build,
    which dies on one)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout)

    def step(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        reply = client.chat.completions.create(model=model, messages=messages, tools=tools or openai.NOT_GIVEN,
                                               max_tokens=max_tokens, temperature=temperature, **extra)
        msg = reply.choices[0].message
        out: dict[str, Any] = {"role": "assistant", "content": msg.content or ""}
        if msg.tool_calls:
            out["tool_calls"] = [{"id": tc.id, "type": "function",
                                  "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
                                 for tc in msg.tool_calls]
        return out

    return step


def scripted_model_step(calls: Sequence[Mapping[str, Any]]) -> ModelStep:
    """A ``ModelStep`` that makes ``calls`` (``{"name", "arguments"}``, e.g. a row's ground truth) in its
    first message and then answers without a call: a known reward, for checks and benchmarks."""
    def step(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        if any(m.get("role") == "tool" for m in messages[user + 1:]):  # this turn's calls were made
            return {"role": "assistant", "content": "Done."}
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {
                "name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                else json.dumps(c["arguments"])}} for i, c in enumerate(calls)]}

    return step


@dataclass
class Rollout:
    """One played episode: the conversation (prompt, then what was generated and read back), the
    offered tools, and the final observation (reward, components, call log)."""

    row_id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    prompt_len: int
    final: ProveObservation
    turns: int = 0
    episode_id: str = field(default="")

    @property
    def reward(self) -> float:
        return float(self.final.reward or 0.0)


def play(env: Any, row: str | int, model_step: ModelStep, max_turns: int = 5, **reset: Any) -> Rollout:
    """Play one episode of ``row`` through an open sync ``ProveEnv`` (OpenEnv's reset/step loop): the
    model's tool calls are stepped in the order written and their results appended as tool messages,
    until it answers without a call or ``max_turns`` assistant messages were written; then the
    no-tool action ends the turn and returns the reward."""
    first = env.reset(row=row, **reset).observation
    messages = [dict(m) for m in first.messages]
    prompt_len = len(messages)
    turns = 0
    while turns < max_turns:
        turns += 1
        reply = model_step(messages, first.tools)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            break
        for tc in calls:
            fn = tc.get("function", tc)
            obs = env.step(ProveAction(tool_name=str(fn.get("name")), arguments=fn.get("arguments") or {})).observation
            messages.append({"role": "tool", "tool_call_id": tc.get("id", ""), "name": fn.get("name"),
                             "content": obs.result})
    final = env.step(ProveAction()).observation
    state = env.state()
    return Rollout(first.row_id, messages, list(first.tools), prompt_len, final, turns, state.episode_id or "")


# -- TRL ----------------------------------------------------------------------------------------
def trl_dataset(rows: Sequence[Mapping[str, Any]]) -> Any:
    """TRL's dataset for ``make_rollout_func``: ``prompt`` (the row's chat; its first message carries
    the row's id under ``ROW_KEY``), and ``ground_truth``, ``tools``, ``expected_effect`` for reward
    functions that score the call log themselves (``prove.reward.trl.make_trl_reward``)."""
    import datasets

    records = []
    for raw in rows:
        row = TurnRow.from_row(raw)
        chat = [{"role": m["role"], "content": m.get("content") or ""} for m in row.chat()]
        chat[0][ROW_KEY] = row.id
        records.append({"prompt": chat, "ground_truth": json.dumps(row.ground_truth),
                        "tools": json.dumps(list(row.tools)), "expected_effect": row.expected_effect})
    return datasets.Dataset.from_list(records)


def _row_of(prompt: Any) -> str:
    if isinstance(prompt, (list, tuple)) and prompt and isinstance(prompt[0], Mapping) and prompt[0].get(ROW_KEY):
        return str(prompt[0][ROW_KEY])
    raise ValueError(f"a prompt without its row: rollout_func reads the row id from the first message's "
                     f"{ROW_KEY!r} key, which prove.integrations.openenv.trl_dataset writes")


def _segments(tokenizer: Any, rollout: Rollout, template_kwargs: Mapping[str, Any]) -> tuple[list[int], list[int], list[int]]:
    """Prompt ids, completion ids and its mask (1: the model's tokens up to its EOS, 0: tool results and
    the template's glue between turns), rendered by the tokenizer's chat template message by message."""
    def text(messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        return tokenizer.apply_chat_template(messages, tools=rollout.tools or None, tokenize=False,
                                             add_generation_prompt=generation_prompt, **template_kwargs)

    def ids(s: str) -> list[int]:
        return list(tokenizer(s, add_special_tokens=False)["input_ids"])

    eos = tokenizer.eos_token_id
    shown = text(rollout.messages[:rollout.prompt_len], True)
    prompt_ids = ids(shown)
    completion: list[int] = []
    mask: list[int] = []
    for i in range(rollout.prompt_len, len(rollout.messages)):
        nxt = rollout.messages[i + 1]["role"] if i + 1 < len(rollout.messages) else None
        if rollout.messages[i]["role"] == "tool" and nxt == "tool":
            continue  # a run of tool results is one turn of the template: one segment
        full = text(rollout.messages[: i + 1], nxt == "assistant")
        if not full.startswith(shown):
            raise ValueError("the chat template does not render this conversation append-only; "
                             "use a template that does (prove.train.chat_template.HERMES_CHATML_TEMPLATE)")
        seg = ids(full[len(shown):])
        model = len(seg) if rollout.messages[i]["role"] == "assistant" else 0
        if model and eos in seg:  # the model's tokens end at its EOS; the template's glue after it is not its
            model = len(seg) - seg[::-1].index(eos)
            if nxt is None:
                seg = seg[:model]  # a rollout ends at the EOS, as generation does
        completion += seg
        mask += [1] * model + [0] * (len(seg) - model)
        shown = full
    return prompt_ids, completion, mask


def make_rollout_func(env_url: str, model_step: ModelStep, *, max_turns: int = 5,
                      template_kwargs: Mapping[str, Any] | None = None) -> Callable[[list[Any], Any], dict[str, Any]]:
    """TRL's ``rollout_func(prompts, trainer)`` over a PROVE OpenEnv server at ``env_url``: each prompt
    (a ``trl_dataset`` row, repeated per generation by TRL) is played as its own OpenEnv session
    (``play``) with ``model_step`` as the policy, and rendered into token ids by the trainer's
    tokenizer. Returns TRL's keys (``logprobs`` None: TRL computes them with the model it trains) with
    ``env_mask`` (tool results out of the loss), ``env_reward`` (OpenEnv's reward: ``reward_from_env``
    reads it), ``tool_calls`` and ``effect_hash`` (what ``prove.reward.trl.make_trl_reward`` scores).
    Training is on-policy only when ``model_step`` serves the weights being trained (a vLLM server
    whose weights are reloaded between steps); rollouts run one after another.
    ``prove.train.trl_engine`` is PROVE's own TRL engine, generating with the trained model itself."""
    kwargs = dict(template_kwargs or {})

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "env_mask", "env_reward",
                                                     "tool_calls", "effect_hash", "row_id")}
        for prompt in prompts:
            with ProveEnv(base_url=env_url).sync() as env:
                rollout = play(env, _row_of(prompt), model_step, max_turns)
            prompt_ids, completion_ids, mask = _segments(tokenizer, rollout, kwargs)
            for key, value in (("prompt_ids", prompt_ids), ("completion_ids", completion_ids), ("env_mask", mask),
                               ("env_reward", rollout.reward), ("tool_calls", rollout.final.calls),
                               ("effect_hash", rollout.final.effect), ("row_id", rollout.row_id)):
                out[key].append(value)
        return {**out, "logprobs": None}

    return rollout_func


def reward_from_env(completions: Sequence[Any], env_reward: Sequence[float] | None = None, **_: Any) -> list[float]:
    """A TRL reward function: the reward OpenEnv reported for each rollout (``make_rollout_func``)."""
    if env_reward is None or len(env_reward) != len(completions):
        raise ValueError("reward_from_env needs env_reward, one per completion: use make_rollout_func's rollout_func")
    return [float(r) for r in env_reward]


# -- serving ------------------------------------------------------------------------------------
class OpenEnvServer(ChildServer):
    """``python -m prove.integrations.openenv`` as a child process group on a free loopback port (tests,
    benchmarks): ``with OpenEnvServer(rows_parquet, [env_url]) as server: ProveEnv(base_url=server.url)``."""

    def __init__(self, rows: str | Path, env_urls: Sequence[str], *, reward: str = "prove", port: int | None = None,
                 host: str = "127.0.0.1", startup_timeout: float = 120.0) -> None:
        self.host, self.port = host, port or free_port(host)
        urls = [a for u in env_urls for a in ("--env-url", u)]
        super().__init__([sys.executable, "-m", "prove.integrations.openenv", "--rows", str(rows), *urls,
                          "--reward", reward, "--host", host, "--port", str(self.port)],
                         [f"http://{host}:{self.port}/health"], name="OpenEnv PROVE server",
                         startup_timeout=startup_timeout, stop_timeout=10.0)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def main(argv: list[str] | None = None) -> int:
    """``python -m prove.integrations.openenv --rows R [--env-url U]``: serve the rows' episodes."""
    import uvicorn

    from prove.reward import ABLATIONS
    from prove.rows import read_rows

    parser = argparse.ArgumentParser(prog="python -m prove.integrations.openenv", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", required=True, help="training rows (a parquet from synthesis: train.parquet)")
    parser.add_argument("--env-url", action="append", default=None,
                        help="prove serve's URL (repeat for workers); default: start one for this server")
    parser.add_argument("--reward", default="prove", choices=sorted(ABLATIONS),
                        help="the reward configuration (a reset may name another)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-sessions", type=int, default=64, help="concurrent OpenEnv sessions (episodes)")
    args = parser.parse_args(argv)
    rows = read_rows(Path(args.rows))

    def stop(signum: int, frame: object) -> None:  # uvicorn re-raises SIGTERM after its shutdown:
        raise SystemExit(128 + signum)              # unwind, so a prove serve started here stops too

    signal.signal(signal.SIGTERM, stop)
    with prove_servers(args.env_url) as urls:
        app = create_prove_app(rows, urls, reward=args.reward, max_sessions=args.max_sessions)
        print(f"# OpenEnv PROVE server: {len(rows)} rows, reward {args.reward}, prove serve {', '.join(urls)}, "
              f"ws://{args.host}:{args.port}/ws", file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
