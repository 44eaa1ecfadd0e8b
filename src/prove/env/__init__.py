"""Live MCP environments: tool declaration, registry, episodes, the hub and its transports."""

from prove.env.episodes import DEFAULT_EPISODE, EpisodeStore
from prove.env.helpers import lookup, paginate, require
from prove.env.hub import EpisodeError, Hub, LoggedCall
from prove.env.registry import FAMILIES, Registry, ServerSpec, load_registry
from prove.env.state import Counter, ServerState, canonical_json, state_hash
from prove.env.tool import ToolError, ToolSpec, tool

__all__ = [
    "DEFAULT_EPISODE", "EpisodeStore", "lookup", "paginate", "require", "EpisodeError", "Hub",
    "LoggedCall", "FAMILIES", "Registry", "ServerSpec", "load_registry", "Counter", "ServerState",
    "canonical_json", "state_hash", "ToolError", "ToolSpec", "tool",
]
