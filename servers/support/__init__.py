"""Customer support MCP server (commerce): `prove serve --stdio support` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.support import tools
from prove_servers.support.state import SupportState, initial_state

SERVER = ServerSpec.build(
    name="support",
    family="commerce",
    description="Retailer support desk: tickets, agents, SLAs, canned replies, returns (RMAs), refunds, CSAT.",
    state_model=SupportState,
    initial_state=initial_state,
    tools_module=tools,
)
