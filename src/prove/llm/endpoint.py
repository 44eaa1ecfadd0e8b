"""An OpenAI-compatible server's address: what a served model, the teacher and every benchmark talk to.

    from prove.llm.endpoint import Endpoint
    ep = Endpoint("http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible server: its base URL (ends in /v1) and the model id to request."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    chat_template_kwargs: dict[str, Any] | None = None
    """Chat-template variables every request to this model carries (the profile's thinking mode:
    ``prove.llm.families.chat_template_kwargs``); None: the server's own defaults."""

    @property
    def root(self) -> str:
        """The URL without the trailing /v1 (some clients want the bare host)."""
        return self.base_url.removesuffix("/").removesuffix("/v1")
