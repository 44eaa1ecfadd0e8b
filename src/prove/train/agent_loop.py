"""``prove_tool_agent``: VERL's tool agent loop, plus PROVE's episode bookkeeping and a true call log.

Registered with VERL under ``AGENT_NAME`` (training rows carry ``agent_name: prove_tool_agent``;
``configs/train/agent_loops.yaml`` makes every rollout worker import it). A thin subclass of
``ToolAgentLoop`` that changes nothing about generation and tokenisation. It

* offers the row's own tool schemas (``extra_info["tools"]``, normalised) — what synthesis offered,
  after perturbation — and routes calls to the tools of that name;
* runs one turn's parallel calls one after another in the order the model wrote them (state
  changes in an episode are ordered) and logs every ``<tool_call>`` block of every assistant turn
  in that order in ``extra_fields["tool_calls"]``, including the blocks that never reach a server,
  each as a failed call so validity, efficiency and the budget see it: a block the hermes
  parser drops (JSON that does not parse, no ``name``; VERL only logs a line), a
  trailing block cut off before ``</tool_call>``, calls beyond ``multi_turn.max_parallel_calls``
  in one turn (VERL neither runs nor logs them), the calls of a turn that ended the rollout on a
  limit (``max_assistant_turns``, ``max_user_turns``, ``response_length``: VERL never parses
  them), an unknown tool, and arguments that are not a JSON object;
* never cuts a prompt silently: one longer than ``rollout.prompt_length`` raises under
  ``data.truncation: error`` (VERL's loop would cut it from the left, dropping the system prompt
  with the tool schemas) and is cut on the configured side, with a warning, otherwise;
* reads the episode's effect on the records when the trajectory ends (``extra_fields
  ["effect_hash"]``, what the reward's state-verified ``outcome`` compares with the row's
  ``expected_effect``), and closes the episode on the server however the trajectory ends;
* parses hermes blocks with :class:`ProveHermesToolParser`: VERL's hermes parser drops a block
  with a ``name`` and no ``arguments`` (or ``"arguments": null``), which the reward's text parse
  (``prove.calls.parse_tool_calls``) counts as a call with ``{}``; here it is that call, and it
  runs (a tool without required parameters needs no arguments).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall, HermesToolParser
from verl.tools.schemas import ToolResponse

from prove.rows import AGENT_NAME
from prove.train.chat_template import token_builder
from prove.train.schema import row_schemas
from prove.train.session import (
    EFFECT_KEY,
    TOOL_LOG_KEY,
    close_episode,
    episode_effect,
    failed_entry,
    refuse_arguments,
)
from prove.train.tool import spec_for

__all__ = ["ProveAgentLoop", "ProveHermesToolParser", "hermes_blocks", "refuse_arguments", "Block"]

logger = logging.getLogger(__name__)

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)  # VERL's hermes regex
_MAX_RAW_CHARS = 500  # of a dropped block, kept in its log entry


class Block:
    """One ``<tool_call>`` block of an assistant turn: ``call`` is what the loop's hermes parser
    (:class:`ProveHermesToolParser`) makes of it, or None when it drops it (then ``error`` says why)."""

    __slots__ = ("raw", "call", "error")

    def __init__(self, raw: str, call: FunctionCall | None, error: str | None) -> None:
        self.raw, self.call, self.error = raw, call, error

    def failed(self, error: str | None = None) -> dict[str, Any]:
        """This block as a failed call in the log (``error`` overrides the block's own)."""
        if self.call is not None:
            arguments = _loads(self.call.arguments)
            return failed_entry(self.call.name, self.call.arguments if arguments is None else arguments,
                                error or self.error or "not run")
        decoded = _loads(self.raw)
        name = decoded.get("name") if isinstance(decoded, dict) else None
        return failed_entry(name if isinstance(name, str) else "", self.raw[:_MAX_RAW_CHARS],
                            error or self.error or "malformed tool call")


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _parse_block(raw: str) -> Block:
    """VERL's hermes rule (``HermesToolParser.extract_tool_calls``) but for one case: JSON with a
    ``name`` becomes a ``FunctionCall`` (arguments re-dumped as JSON), its ``arguments`` absent or
    null read as ``{}`` as the reward's text parse reads them (VERL drops such a block); anything
    else is dropped."""
    try:
        decoded = json.loads(raw)
        name, arguments = decoded["name"], decoded.get("arguments")
        arguments = {} if arguments is None else arguments
        return Block(raw, FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False)), None)
    except Exception as exc:  # what VERL's parser catches; the reason goes into the log
        reason = f"{type(exc).__name__}: {exc}"
    return Block(raw, None, f"malformed <tool_call> (the hermes parser dropped it: {reason[:200]}); "
                            'write <tool_call>{"name": ..., "arguments": {...}}</tool_call>')


class ProveHermesToolParser(HermesToolParser):
    """VERL's hermes parser with PROVE's block rule (``_parse_block``): a block with a ``name`` and
    no ``arguments`` is a call with ``{}``, as ``prove.calls.parse_tool_calls`` counts it for the
    reward, instead of a block VERL drops (so nothing ran while the reward credited a call).
    ``ProveAgentLoop`` uses it in place of VERL's when ``multi_turn.format`` is ``hermes``."""

    async def extract_tool_calls(self, responses_ids: list[int], tools: list[Any] | None = None
                                 ) -> tuple[str, list[FunctionCall]]:
        text = await asyncio.get_running_loop().run_in_executor(None, self.tokenizer.decode, responses_ids)
        if _OPEN not in text or _CLOSE not in text:
            return text, []
        blocks = [_parse_block(m.group(1)) for m in _BLOCK.finditer(text)]
        for block in blocks:
            if block.call is None:
                logger.warning("dropped a <tool_call> block: %s", block.error)
        return _BLOCK.sub("", text), [b.call for b in blocks if b.call is not None]


def hermes_blocks(text: str) -> list[Block]:
    """Every ``<tool_call>`` block of ``text`` in order, as :class:`ProveHermesToolParser` sees it, plus a
    trailing ``<tool_call>`` cut off before its ``</tool_call>`` (VERL ignores it; it counts as a
    malformed call here, as in ``prove.calls.parse_tool_calls``)."""
    blocks: list[Block] = []
    if _OPEN in text and _CLOSE in text:
        blocks = [_parse_block(m.group(1)) for m in _BLOCK.finditer(text)]
    last_close = text.rfind(_CLOSE)
    tail = text.find(_OPEN, last_close + len(_CLOSE) if last_close >= 0 else 0)
    if tail >= 0:
        blocks.append(Block(text[tail + len(_OPEN):], None,
                            "malformed <tool_call>: cut off before </tool_call>"))
    return blocks


@register(AGENT_NAME)
class ProveAgentLoop(ToolAgentLoop):
    """See the module doc. One instance per trajectory (VERL instantiates a loop per sample)."""

    _agent_data: AgentData | None = None

    def __init__(self, *args: Any, hf_model_type: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, hf_model_type=hf_model_type, **kwargs)
        # VERL's generic builder drops the separator the template writes after the end-of-turn token
        # (Granite, Gemma, SmolLM2): prove.train.preflight.check_turn_boundaries checks this choice
        self.continuous_token_builder = token_builder(self.tokenizer, hf_model_type,
                                                      dict(self.apply_chat_template_kwargs or {}))
        if self.tool_parser_name == "hermes":  # a call without arguments runs, as the reward counts it
            self.tool_parser = ProveHermesToolParser(self.tokenizer)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        self._agent_data = None
        extra_info = kwargs.get("extra_info") or {}
        self._row_tools = extra_info.get("tools")
        self._row_id = extra_info.get("example_id") or kwargs.get("index")
        try:
            output = await super().run(sampling_params, **kwargs)
            output.extra_fields[EFFECT_KEY] = await self._read_effect()
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

    def _cap_text_prompt_length(self, prompt_ids: list[int]) -> list[int]:
        limit = self.rollout_config.prompt_length
        if len(prompt_ids) <= limit:
            return prompt_ids
        mode = self.data_config.get("truncation", "error")
        where = f"row {getattr(self, '_row_id', None)!r}: prompt of {len(prompt_ids)} tokens (its offered " \
                f"tool schemas included) exceeds rollout.prompt_length={limit}"
        if mode == "left":
            logger.warning("%s; data.truncation=left cuts its start (the system prompt with the tools)", where)
            return prompt_ids[-limit:]
        if mode == "right":
            logger.warning("%s; data.truncation=right cuts its end (the user turn)", where)
            return prompt_ids[:limit]
        if mode == "middle":
            logger.warning("%s; data.truncation=middle cuts its middle", where)
            return prompt_ids[: limit // 2] + prompt_ids[len(prompt_ids) - (limit - limit // 2):]
        raise ValueError(
            f"{where} and data.truncation={mode!r}. Set data.filter_overlong_prompts=true "
            "(ProveRLDataset drops such rows when it loads, and reports how many) or raise "
            "data.max_prompt_length; data.truncation=left|right|middle cuts instead.")

    async def _handle_generating_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any], ignore_termination: bool = False
    ) -> AgentState:
        agent_data.tool_calls = []  # VERL leaves the last turn's calls here when it stops early
        n_messages = len(agent_data.messages)
        state = await super()._handle_generating_state(agent_data, sampling_params, ignore_termination)
        if self.tool_parser_name != "hermes":  # block accounting follows the hermes format only
            self._plan_turn(agent_data, None, [])
            return state
        text = await asyncio.get_running_loop().run_in_executor(
            None, self.tokenizer.decode, agent_data.response_ids)
        blocks = hermes_blocks(text)
        parsed = len(agent_data.messages) > n_messages  # VERL parsed this turn's calls
        self._plan_turn(agent_data, None if parsed else self._limit_reached(agent_data), blocks)
        return state

    def _limit_reached(self, agent_data: AgentData) -> str:
        if len(agent_data.response_mask) >= self.response_length:
            return f"the rollout reached response_length={self.response_length} tokens"
        if self.max_assistant_turns and agent_data.assistant_turns >= self.max_assistant_turns:
            return f"the rollout reached multi_turn.max_assistant_turns={self.max_assistant_turns}"
        return f"the rollout reached multi_turn.max_user_turns={self.max_user_turns}"

    def _plan_turn(self, agent_data: AgentData, limit: str | None, blocks: list[Block]) -> None:
        """Log this turn's blocks in emission order: a failed entry for every block that will not
        run, a reserved slot (filled by ``_call_tool``) for every call VERL will run."""
        log = agent_data.extra_fields.setdefault(TOOL_LOG_KEY, [])
        slots: dict[int, int] = {}
        calls = list(agent_data.tool_calls)
        if limit is None and sum(b.call is not None for b in blocks) != len(calls):
            logger.warning("hermes blocks and VERL's parsed calls disagree (%d vs %d); logging VERL's",
                           sum(b.call is not None for b in blocks), len(calls))
            blocks = [Block("", call, None) for call in calls]
        if not blocks:  # non-hermes formats: VERL's own parsed calls
            blocks = [Block("", call, None) for call in calls]
        k = 0
        for block in blocks:
            if block.call is None:
                log.append(block.failed())
            elif limit is not None:
                log.append(block.failed(f"not run: {limit}"))
            else:
                if k < self.max_parallel_calls:
                    slots[id(calls[k])] = len(log)
                    log.append(None)
                else:
                    log.append(block.failed(
                        f"not run: more than {self.max_parallel_calls} calls in one assistant turn "
                        f"(multi_turn.max_parallel_calls={self.max_parallel_calls})"))
                k += 1
        agent_data.prove_slots = slots

    async def _call_tool(
        self, tool_call: FunctionCall, tools_kwargs: dict[str, Any], agent_data: AgentData
    ) -> tuple[ToolResponse, float, dict]:
        # Take the slot reserved for this call (or a new one) and a place in the episode's queue
        # before the first await: asyncio starts gathered calls in emission order.
        if self._agent_data is None:  # called outside run() (tests): still close this episode
            self._agent_data = agent_data
        log = agent_data.extra_fields.setdefault(TOOL_LOG_KEY, [])
        slot = getattr(agent_data, "prove_slots", {}).pop(id(tool_call), None)
        if slot is None:
            slot = len(log)
            log.append(None)
        previous = getattr(agent_data, "prove_turnstile", None)
        done = asyncio.Event()
        agent_data.prove_turnstile = done
        try:
            if previous is not None:
                await previous.wait()
            refused = self._refuse(tool_call, agent_data)
            if refused is not None:
                log[slot] = refused
                return ToolResponse(text=f"Error: {refused['error']}"), 0.0, refused
            response, reward, metrics = await super()._call_tool(tool_call, tools_kwargs, agent_data)
        finally:
            done.set()
        if isinstance(metrics, dict) and "ok" in metrics and "name" in metrics:
            log[slot] = metrics
        else:  # never reached a PROVE server: unknown tool, or the tool raised
            arguments = _loads(tool_call.arguments)
            log[slot] = failed_entry(tool_call.name, tool_call.arguments if arguments is None else arguments,
                                     response.text or "tool call failed")
        return response, reward, metrics

    def _refuse(self, tool_call: FunctionCall, agent_data: AgentData) -> dict[str, Any] | None:
        """A failed entry for a call to an offered tool whose arguments are not a JSON object
        (VERL would hand a string or list to the tool); None when the call may go ahead."""
        if tool_call.name not in getattr(agent_data, "_active_tools", self.tools):
            return None  # VERL answers "Unknown function ..."; logged below
        return refuse_arguments(tool_call.name, tool_call.arguments)

    async def _read_effect(self) -> str:
        """The trajectory's episode effect hash (``prove.train.session.episode_effect``); an
        episode no call reached is opened at the row's seed and prefix to be read (and closed)."""
        agent_data = self._agent_data
        if agent_data is None:
            raise RuntimeError("the trajectory ended before VERL handed its agent data to the loop")
        target = getattr(agent_data, "prove_env", None)
        if target is None:
            envs = [tool.env for tool in self.tools.values() if hasattr(tool, "env")]
            if not envs:
                raise RuntimeError("prove_tool_agent has no PROVE tool to read the episode through; "
                                   "build the tool config with prove.train.tool_config")
            target = agent_data.prove_env = envs[0]
            agent_data.prove_replay = []
        return await episode_effect(target.urls, agent_data.request_id, spec=spec_for(agent_data.tools_kwargs),
                                    replay=agent_data.prove_replay, timeout=target.timeout)

    async def _close_episode(self) -> None:
        agent_data = self._agent_data
        target = getattr(agent_data, "prove_env", None) if agent_data is not None else None
        if target is not None:
            await close_episode(target.urls, agent_data.request_id, target.timeout)
