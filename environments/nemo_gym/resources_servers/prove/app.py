"""NeMo Gym's ``prove`` resources server: PROVE's live episodes, tools and reward behind NeMo Gym's own
``SimpleResourcesServer`` (nemo-gym 0.4, Python >= 3.12), forwarded to PROVE's side over HTTP.

    cd environments/nemo_gym && ng_run "+config_paths=[resources_servers/prove/configs/prove.yaml,\\
        responses_api_models/vllm_model/configs/vllm_model.yaml]" +prove_url=http://127.0.0.1:8790 ...

It runs in NeMo Gym's Python; PROVE (3.11, mcp 2.3) runs in its own, as ``python -m
prove.integrations.nemo_gym serve`` (``prove_url``), which holds every episode: this server adds no PROVE
logic. ``/seed_session`` opens the session's episode from the row's ``prove_row`` (id ``nemo-gym-<NeMo Gym
session id>``: two rollouts are two sessions, so they never share state); ``POST /<tool>`` (how NeMo Gym's
simple agent calls a tool) runs the call in that episode and returns the text the model reads back;
``/verify`` hands PROVE the response's ``function_call`` items and returns ``prove.reward``'s score as
``reward`` (under the row's ``prove_reward``, else the server's ``reward``: ``prove`` or an ablation), and
its components and the call log as ``prove``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseSeedSessionRequest,
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    BaseVerifyResponse,
    SimpleResourcesServer,
)
from nemo_gym.server_utils import SESSION_ID_KEY, get_response_json, raise_for_status, request
from pydantic import ConfigDict

EPISODE_PREFIX = "nemo-gym-"  # prove.integrations.nemo_gym.EPISODE_PREFIX


class ProveResourcesServerConfig(BaseResourcesServerConfig):
    prove_url: str
    """``python -m prove.integrations.nemo_gym serve``'s URL."""
    reward: str = "prove"
    """The ``prove.reward`` configuration /verify scores with: ``prove`` or an ablation name."""


class ProveSeedSessionRequest(BaseSeedSessionRequest):
    model_config = ConfigDict(extra="allow")
    prove_row: dict[str, Any]
    """The training row (``prove.integrations.nemo_gym.export`` writes it into every dataset line)."""


class ProveSeedSessionResponse(BaseSeedSessionResponse):
    episode_id: str
    row_id: str


class ProveVerifyRequest(BaseVerifyRequest):
    model_config = ConfigDict(extra="allow")
    prove_reward: str | None = None
    """A row's own reward configuration (``export --reward``), else the server's ``reward``."""


class ProveVerifyResponse(BaseVerifyResponse):
    model_config = ConfigDict(extra="allow")
    prove: dict[str, Any]
    """What PROVE scored: reward configuration, episode id, call log, effect, every component."""


class ProveResourcesServer(SimpleResourcesServer):
    config: ProveResourcesServerConfig

    def setup_webserver(self) -> FastAPI:
        app = super().setup_webserver()
        # The row decides which tools exist, so every other POST is a tool call (one the row does not
        # offer reaches PROVE too, which refuses and logs it as training does).
        app.post("/{tool_name}")(self.call_tool)
        return app

    async def _prove(self, path: str, payload: dict[str, Any]) -> Any:
        response = await request("POST", f"{self.config.prove_url.rstrip('/')}{path}", json=payload)
        await raise_for_status(response)
        return await get_response_json(response)

    @staticmethod
    def _episode(request: Request) -> str:
        return f"{EPISODE_PREFIX}{request.session[SESSION_ID_KEY]}"

    async def seed_session(self, request: Request, body: ProveSeedSessionRequest) -> ProveSeedSessionResponse:
        got = await self._prove("/seed_session", {"episode_id": self._episode(request), "row": body.prove_row})
        return ProveSeedSessionResponse(episode_id=got["episode_id"], row_id=got["row_id"])

    async def call_tool(self, tool_name: str, request: Request) -> PlainTextResponse:
        arguments = (await request.body()).decode() or "{}"
        got = await self._prove("/call", {"episode_id": self._episode(request), "name": tool_name,
                                          "arguments": arguments})
        return PlainTextResponse(got["text"])

    async def verify(self, request: Request, body: ProveVerifyRequest) -> ProveVerifyResponse:
        calls = [{"name": item.name, "arguments": item.arguments}
                 for item in body.response.output if getattr(item, "type", None) == "function_call"]
        got = await self._prove("/verify", {"episode_id": self._episode(request), "calls": calls,
                                            "reward": body.prove_reward or self.config.reward})
        return ProveVerifyResponse(**body.model_dump(), reward=got["reward"], prove=got)


if __name__ == "__main__":
    ProveResourcesServer.run_webserver()
