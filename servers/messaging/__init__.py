"""Messaging MCP server (social): chats, groups, messages; `prove serve --stdio messaging` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.messaging import tools
from prove_servers.messaging.state import ChatState, initial_state

SERVER = ServerSpec.build(
    name="messaging",
    family="social",
    description="Chat app: users, contacts and blocks, direct and group chats, messages, reactions, pins.",
    state_model=ChatState,
    initial_state=initial_state,
    tools_module=tools,
)
