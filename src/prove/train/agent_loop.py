"""``prove_tool_agent``: VERL's tool agent loop, plus PROVE's episode bookkeeping.

Registered with VERL under ``AGENT_NAME`` (training rows carry ``agent_name: prove_tool_agent``;
``configs/train/agent_loops.yaml`` makes every rollout worker import it). A thin subclass of
``ToolAgentLoop`` that changes nothing about generation and tokenisation. It

* offers the row's own tool schemas (``extra_info["tools"]``, normalised) — what synthesis offered,
  after perturbation — and routes calls to the tools of that name;
* runs one turn's parallel calls one after another in the order the model wrote them (state
  changes in an episode are ordered) and logs every call in that order in
  ``extra_fields["tool_calls"]``, including calls that never reach a server (unknown tool,
  arguments that are not JSON) so the reward sees the true call log;
* closes the trajectory's episode on the server when the trajectory ends, however it ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.schemas import ToolResponse

from prove.train.rows import AGENT_NAME
from prove.train.schema import row_schemas
from prove.train.session import TOOL_LOG_KEY, close_episode, failed_entry

__all__ = ["ProveAgentLoop"]

logger = logging.getLogger(__name__)


@register(AGENT_NAME)
class ProveAgentLoop(ToolAgentLoop):
    """See the module doc. One instance per trajectory (VERL instantiates a loop per sample)."""

    _agent_data: AgentData | None = None

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        self._agent_data = None
        self._row_tools = (kwargs.get("extra_info") or {}).get("tools")
        try:
            output = await super().run(sampling_params, **kwargs)
        finally:
            await self._close_episode()
        log = output.extra_fields.get(TOOL_LOG_KEY) or []
        output.extra_fields[TOOL_LOG_KEY] = [entry for entry in log if entry is not None]
        return output

    async def _handle_pending_state(self, agent_data: AgentData, sampling_params: dict[str, Any]) -> AgentState:
        self._agent_data = agent_data
        schemas = row_schemas(self._row_tools)
        if schemas:
            names = [s["function"]["name"] for s in schemas]
            unknown = [n for n in names if n not in self.tools]
            if unknown:
                logger.warning("row offers tools the tool config lacks: %s", unknown[:5])
            agent_data._active_tools = {n: self.tools[n] for n in names if n in self.tools}
            agent_data._active_tool_schemas = schemas
        return await super()._handle_pending_state(agent_data, sampling_params)

    async def _call_tool(
        self, tool_call: FunctionCall, tools_kwargs: dict[str, Any], agent_data: AgentData
    ) -> tuple[ToolResponse, float, dict]:
        # Reserve the log slot and take a place in the episode's queue before the first await:
        # asyncio starts gathered calls in emission order, so slots and execution follow it.
        if self._agent_data is None:  # called outside run() (tests): still close this episode
            self._agent_data = agent_data
        agent_data.prove_ordered_log = True  # the tool leaves logging to this loop
        log = agent_data.extra_fields.setdefault(TOOL_LOG_KEY, [])
        slot = len(log)
        log.append(None)
        previous = getattr(agent_data, "prove_turnstile", None)
        done = asyncio.Event()
        agent_data.prove_turnstile = done
        try:
            if previous is not None:
                await previous.wait()
            response, reward, metrics = await super()._call_tool(tool_call, tools_kwargs, agent_data)
        finally:
            done.set()
        if isinstance(metrics, dict) and "ok" in metrics and "name" in metrics:
            log[slot] = metrics
        else:  # never reached a PROVE server: unknown tool, bad JSON, or the tool raised
            try:
                arguments: Any = json.loads(tool_call.arguments)
            except (TypeError, ValueError):
                arguments = tool_call.arguments
            log[slot] = failed_entry(tool_call.name, arguments, response.text or "tool call failed")
        return response, reward, metrics

    async def _close_episode(self) -> None:
        agent_data = self._agent_data
        target = getattr(agent_data, "prove_env", None) if agent_data is not None else None
        if target is not None:
            await close_episode(target.urls, agent_data.request_id, target.timeout)
