"""PROVE tools inside VERL: a ``BaseTool`` that routes every call to its episode's live server.

Loaded by VERL from the YAML ``prove.train.tool_config`` writes (``multi_turn.tool_config_path``);
not meant to be constructed by hand. Needs verl (the ``train`` extra).

* Schema: ``config["schema"]`` (the JSON string the generated YAML writes, normalised by
  ``prove.train.schema``) must validate against VERL's ``OpenAIFunctionToolSchema``; the tool keeps
  it in ``ProveToolSchema``, a subclass that also keeps ``items``, nested properties, defaults and
  bounds in the prompt. VERL's own ``tool_schema`` key is refused: its loader would already have
  dropped those keys.
* Routing: the episode id is the trajectory's ``agent_data.request_id`` (one per GRPO sample);
  seed and prefix come from the row's ``tools_kwargs["prove"]["create_kwargs"]`` (one key for
  every row, see ``prove.rows``). Calls go over HTTP with the episode in ``_meta`` and a
  timeout; tool errors come back to the model as text.
* Log: each call's entry (``prove.train.session.log_entry``) is returned as the call's metrics;
  ``ProveAgentLoop`` (``prove_tool_agent``, the only loop this tool runs under: it also closes the
  episode) writes it into ``extra_fields["tool_calls"]`` in the order the model emitted the calls.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import (
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    ToolResponse,
)

from prove.rows import PROVE_KWARGS_KEY, EpisodeSpec, episode_spec
from prove.train.session import call_in_episode

__all__ = ["ProveTool", "ProveToolSchema", "EnvTarget", "spec_for"]


class ProvePropertySchema(OpenAIFunctionPropertySchema):
    """VERL's property schema, keeping the JSON-Schema keys it would drop (items, bounds, ...)."""

    model_config = ConfigDict(extra="allow")


class ProveParametersSchema(OpenAIFunctionParametersSchema):
    model_config = ConfigDict(extra="allow")
    properties: dict[str, ProvePropertySchema]


class ProveFunctionSchema(OpenAIFunctionSchema):
    parameters: ProveParametersSchema


class ProveToolSchema(OpenAIFunctionToolSchema):
    """An ``OpenAIFunctionToolSchema`` (VERL's type checks pass) whose dump keeps every key."""

    function: ProveFunctionSchema


class EnvTarget:
    """Where a trajectory's episode lives (kept on ``agent_data`` so the loop can close it)."""

    def __init__(self, urls: list[str], timeout: float) -> None:
        self.urls, self.timeout = urls, timeout


def spec_for(tools_kwargs: Any) -> EpisodeSpec:
    """The episode of a row: ``tools_kwargs["prove"]["create_kwargs"]``."""
    entry = tools_kwargs.get(PROVE_KWARGS_KEY) if isinstance(tools_kwargs, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("create_kwargs"), dict):
        return episode_spec(entry["create_kwargs"])
    raise ValueError(
        f"row has no PROVE episode in tools_kwargs[{PROVE_KWARGS_KEY!r}]['create_kwargs']; "
        "build rows with prove.rows"
    )


class ProveTool(BaseTool):
    """One PROVE tool for VERL (see the module doc)."""

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
        # BaseTool.__init__ only stores these three and prints the schema: with 343 tools per
        # rollout worker (and again in the dataset) that print is noise, so set them here.
        schema = config.get("schema")
        if tool_schema is not None or not isinstance(schema, str):
            raise ValueError("ProveTool needs config.schema as the JSON string prove.train.tool_config "
                             "writes (not VERL's tool_schema key); regenerate the tool YAML with it")
        schema = json.loads(schema)
        OpenAIFunctionToolSchema.model_validate(schema)  # VERL's own class must accept it
        self.config = config
        self.tool_schema = ProveToolSchema.model_validate(schema)
        self.name = self.tool_schema.function.name
        urls = config.get("env_urls") or config.get("env_url")
        self.env = EnvTarget([urls] if isinstance(urls, str) else list(urls or []),
                             float(config.get("timeout", 30.0)))
        if not self.env.urls:
            raise ValueError(f"ProveTool {self.name}: config.env_urls is empty")

    def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
        return self.tool_schema

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict]:
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            raise ValueError("ProveTool needs VERL's agent_data (verl >= 0.9 passes it to execute)")
        spec = spec_for(agent_data.tools_kwargs)
        if getattr(agent_data, "prove_env", None) is None:
            agent_data.prove_env = self.env
            agent_data.prove_replay = []
        text, entry = await call_in_episode(
            self.env.urls, self.name, parameters, episode_id=agent_data.request_id, spec=spec,
            replay=agent_data.prove_replay, timeout=self.env.timeout,
        )
        return ToolResponse(text=text), 0.0, entry
