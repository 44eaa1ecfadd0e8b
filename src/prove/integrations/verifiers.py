"""PROVE in PrimeIntellect's verifiers 0.4 (its v1 stack): the rows as a taskset, the row's tools as a
tool server over a live PROVE episode, ``prove.reward`` as the task's reward, and the env that runs them.

    pip install verifiers==0.4.0 ./environments/prove_env     # its own venv: verifiers pins mcp==2.0.0
    vf-eval prove-env --env.taskset.rows results/synth/val.parquet -m <model> \\
        --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var OPENAI_API_KEY -n 5 -r 2 --no-push

Terms (``verifiers.v1``): ``ProveTaskset`` loads a rows parquet (``prove.rows``) into one ``ProveTask`` per
row, its ``ProveData.row`` the row itself; the prompt is the row's conversation. ``ProveToolset`` is the
taskset's tool server (one process per eval, verifiers' MCP boundary): it offers each rollout exactly its
row's tools and runs every call in that rollout's own PROVE episode through ``prove.integrations.turn.Turn``
(opened lazily at the row's seed with its prefix replayed, id ``verifiers-<trace id>``, so two rollouts of
one row never share state). The call log rides verifiers' per-rollout ``State``. The task's ``@vf.reward``
``prove`` is ``Turn.score`` under ``--env.taskset.task.reward`` (any ``prove.reward`` ablation) on the
rollout's calls in the model's order, calls the chat loop refused itself (a tool the row does not offer,
arguments that are no JSON object) included as training logs them; every component and count is a
``prove_*`` metric, and the call log, effect and scores go to ``trace.info["prove"]``.
``ProveEnv`` is verifiers' single-agent env with verifiers' own ``null`` chat harness on the local
subprocess runtime as the default seat; it starts ``prove serve`` for the eval when no
``--env.taskset.task.env-url`` is given. ``load_environment`` builds the same env from Python.
This module imports verifiers (and its mcp 2.0.0) at the top: it runs in verifiers' venv, not PROVE's.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import verifiers.v1 as vf
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field, field_validator
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.runtimes import SubprocessConfig

from prove.env.client import SECRET_ENV
from prove.integrations.turn import Turn, TurnRow
from prove.reward import ABLATIONS, outcome_of
from prove.rows import read_rows

__all__ = [
    "ProveData", "ProveTaskConfig", "ProveTask", "ProveTasksetConfig", "ProveTaskset", "ProveState",
    "ProveToolset", "ProveEnvConfig", "ProveEnv", "load_environment", "rollout_log",
]

EPISODE_PREFIX = "verifiers-"


class ProveState(vf.State):
    """One rollout's PROVE episode as verifiers' state channel carries it between the task (host) and
    the tool server: which row and episode, and the calls made so far (``Turn.log`` / ``Turn.replay``)."""

    row: dict[str, Any] = Field(default_factory=dict)
    env_url: str = ""
    episode_id: str = ""
    timeout: float = 30.0
    log: list[dict[str, Any]] = Field(default_factory=list)
    replay: list[dict[str, Any]] = Field(default_factory=list)
    closed: bool = False

    def turn(self, row: TurnRow | None = None) -> Turn:
        """The rollout's ``Turn`` with the calls so far adopted (``row``: this state's row, already read)."""
        if not self.row or not self.env_url or not self.episode_id:
            raise RuntimeError("this rollout's PROVE state was never set up (ProveTask.setup did not run)")
        turn = Turn(row or TurnRow.from_row(self.row), self.env_url, episode_id=self.episode_id,
                    timeout=self.timeout)
        turn.adopt(self.log, self.replay)
        return turn


def _row_key(raw: dict[str, Any]) -> tuple[Any, ...]:
    info = raw.get("extra_info") or {}
    return (info.get("example_id"), info.get("turn"), info.get("seed"), info.get("prefix"), info.get("tools"),
            json.dumps((raw.get("reward_model") or {}).get("ground_truth"), sort_keys=True))


class ProveToolset(vf.Toolset[vf.SharedToolsetConfig, ProveState]):
    """The row's offered tools over verifiers' MCP boundary, each call run in the rollout's PROVE episode."""

    TOOL_PREFIX = None  # the model sees the row's tool names as training offers them
    ROWS_KEPT = 256

    def __init__(self, config: vf.SharedToolsetConfig) -> None:
        super().__init__(config)
        self._rows: OrderedDict[tuple[Any, ...], TurnRow] = OrderedDict()

    def row(self) -> TurnRow:
        """The calling rollout's row, read once per row (rows are immutable; every call would reparse
        its tool schemas otherwise)."""
        raw = self.state.row
        key = _row_key(raw)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = TurnRow.from_row(raw)
            while len(self._rows) > self.ROWS_KEPT:
                self._rows.popitem(last=False)
        return row

    def register(self, mcp: MCPServer) -> None:
        # The catalog differs per rollout (each row offers its own tools), so the protocol handlers are
        # replaced as verifiers' own NeMo Gym toolset does, rather than registering static tools.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        """The tools the rollout's row offers, with the schemas it was synthesised with."""
        row = self.row()
        return [Tool(name=fn["name"], description=fn.get("description") or None,
                     input_schema=fn.get("parameters") or {"type": "object", "properties": {}})
                for fn in (t.get("function", t) for t in row.tools)]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context | None = None) -> CallToolResult:
        """Run one call in the rollout's episode; the text is what PROVE's training rollouts return."""
        state = self.state
        turn = state.turn(self.row())
        text = await turn.call(name, arguments)
        state.log, state.replay = turn.log, turn.replay
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=not turn.log[-1]["ok"])


class ProveData(vf.TaskData):
    row: dict[str, Any]
    """The training row (``prove.rows``) exactly as the parquet holds it."""


class ProveTaskConfig(vf.TaskConfig):
    reward: str = "prove"
    """The ``prove.reward`` configuration: ``prove`` (the paper's) or an ablation name."""
    env_url: str | None = None
    """A running ``prove serve``; unset, ``ProveEnv`` starts one for the eval."""
    timeout: float = Field(30.0, gt=0)
    """Seconds per PROVE request."""

    @field_validator("reward")
    @classmethod
    def _known_reward(cls, value: str) -> str:
        if value not in ABLATIONS:
            raise ValueError(f"unknown reward config {value!r}; known: {', '.join(ABLATIONS)}")
        return value


async def rollout_log(state: ProveState, row: TurnRow, completion: vf.Messages) -> list[dict[str, Any]]:
    """The rollout's call log in the order the model made its calls. A call that reached the tool server
    is its logged entry; one that verifiers' chat loop answered itself (a tool the row does not offer,
    arguments that are no JSON object) is logged as PROVE's rollouts log it (``Turn.call`` refuses it
    without reaching a server), so the reward charges it as training does."""
    refusals = Turn(row, [], episode_id=state.episode_id)  # no server: a refused call never reaches one
    served = iter(state.log)
    log: list[dict[str, Any]] = []
    for message in completion:
        if not isinstance(message, vf.AssistantMessage):
            continue
        for call in message.tool_calls or []:
            try:
                args = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                args = None
            if call.name in row.tool_names and isinstance(args, dict):
                entry = next(served, None)
                if entry is None or entry["name"] != call.name:
                    raise RuntimeError(f"the tool server's log {[e['name'] for e in state.log]} does not match "
                                       f"the trace at call {call.name!r}")
                log.append(entry)
            else:
                await refusals.call(call.name, call.arguments)
                log.append(refusals.log[-1])
    rest = [e["name"] for e in served]
    if rest:
        raise RuntimeError(f"the tool server logged calls the trace does not show: {rest}")
    return log


class ProveTask(vf.Task[ProveData, ProveState, ProveTaskConfig]):
    """One row: its episode opens at setup (lazily, on the first call) and is scored by ``prove.reward``."""

    @property
    def key(self) -> str:
        return self.data.id or self.hash

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        if self.config.env_url is None:
            raise ValueError("no PROVE env server: set --env.taskset.task.env-url, or run under ProveEnv "
                             "(the taskset's env), which starts `prove serve` for the eval")
        state = cast(ProveState, trace.state)
        state.row = self.data.row
        state.env_url = self.config.env_url
        state.episode_id = f"{EPISODE_PREFIX}{trace.id}"
        state.timeout = self.config.timeout

    @vf.reward(weight=1.0)
    async def prove(self, trace: vf.Trace) -> float:
        """``prove.reward.score_turn`` over the rollout's calls (``Turn.score``), then the episode closes."""
        state = cast(ProveState, trace.state)
        row = TurnRow.from_row(self.data.row)
        prompt = self.data.prompt if isinstance(self.data.prompt, list) else []
        messages = trace.messages
        if [m.role for m in messages[:len(prompt)]] != [m.role for m in prompt]:
            raise RuntimeError(f"the trace of rollout {trace.id} does not open with the row's prompt "
                               f"({len(prompt)} messages): cannot tell the rollout's calls from the prompt's")
        log = await rollout_log(state, row, messages[len(prompt):])
        turn = state.turn()
        turn.log = log
        try:
            effect = await turn.effect() if row.expected_effect else ""
            scores = await turn.score(self.config.reward, effect or None)
        finally:
            await turn.close()
            state.closed = True
        trace.record_metrics({f"prove_{k}": float(v) for k, v in scores.items() if k != "score"})
        trace.info["prove"] = {"reward": self.config.reward, "episode_id": state.episode_id, "log": log,
                               "effect": effect, "expected_effect": row.expected_effect,
                               "outcome": outcome_of(effect, row.expected_effect) if row.expected_effect else None,
                               "scores": scores}
        return float(scores["score"])


class ProveTasksetConfig(vf.TasksetConfig):
    rows: Path | None = None
    """A training-rows parquet (``prove.rows``: synthesis writes <out>/train.parquet and val.parquet)."""
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()
    task: ProveTaskConfig = ProveTaskConfig()


class ProveTaskset(vf.Taskset[ProveTask, ProveTasksetConfig]):
    """One task per row of the parquet, in file order."""

    def __init__(self, config: ProveTasksetConfig) -> None:
        super().__init__(config)
        # A rollout's episode is opened by the tool server process and scored and closed by this one:
        # both must hold the same episode secret (``prove.env.client``), which the tool server, started
        # after this, inherits from the environment.
        os.environ.setdefault(SECRET_ENV, secrets.token_hex(32))

    @classmethod
    def toolsets(cls, config: ProveTasksetConfig) -> list[vf.Toolset]:
        return [ProveToolset(config.tools)]

    def load(self) -> Iterator[ProveTask]:
        from verifiers.v1.dialects.chat import ChatDialect

        if self.config.rows is None:
            raise ValueError("no rows: pass --env.taskset.rows <parquet> (synthesis writes <out>/train.parquet "
                             "and val.parquet)")
        dialect = ChatDialect()
        rows = read_rows(self.config.rows.expanduser())
        if not rows:
            raise ValueError(f"{self.config.rows} holds no rows")
        for raw in rows:
            row = TurnRow.from_row(raw)
            prompt = dialect.parse_request({"messages": row.chat()}).messages
            yield ProveTask(ProveData(id=row.id, name=row.id, prompt=prompt, row=raw), self.config.task)


class ProveEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(harness=NullHarnessConfig(id="null"), runtime=SubprocessConfig(),
                                           max_turns=8)
    """The seat: verifiers' ``null`` chat loop (the row's tools only) on the local runtime, 8 model turns."""


class ProveEnv(vf.Env[ProveEnvConfig]):
    """verifiers' single-agent env over ``ProveTaskset``; owns a ``prove serve`` when none is given."""

    _server: Any = None

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)

    async def start(self) -> None:
        task = cast(ProveTasksetConfig, self.taskset.config).task
        if task.env_url is not None:
            return
        from prove.env.launch import EnvServer

        self._server = await asyncio.to_thread(EnvServer().start)
        task.env_url = self._server.url

    async def stop(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        cast(ProveTasksetConfig, self.taskset.config).task.env_url = None
        await asyncio.to_thread(server.stop)

    async def finalize(self, task: vf.Task, episode: vf.Episode) -> None:
        """Close the episode of a rollout whose scoring never ran (it failed before the reward)."""
        for trace in episode.traces:
            state = trace.state
            if isinstance(state, ProveState) and state.episode_id and not state.closed:
                await state.turn().close()
                state.closed = True



def load_environment(rows: str | Path, env_url: str | None = None, reward: str = "prove",
                     **agent: Any) -> ProveEnv:
    """The env ``vf-eval prove-env`` runs, built from Python (``agent``: ``vf.AgentConfig`` fields such as
    ``max_turns``)."""
    config = ProveEnvConfig.model_validate({
        "taskset": {"id": "prove-env", "rows": str(rows), "task": {"reward": reward, "env_url": env_url}},
        **({"agent": agent} if agent else {}),
    })
    return cast(ProveEnv, vf.load_environment(config))


if __name__ == "__main__":
    ProveToolset.run()
