"""Brokerage MCP server (finance): investing platform; `prove serve --stdio brokerage` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.brokerage import tools
from prove_servers.brokerage.state import BrokerageState, initial_state

SERVER = ServerSpec.build(
    name="brokerage",
    family="finance",
    description="Brokerage: investors, accounts, instruments, quotes, orders, watchlists, alerts, dividends.",
    state_model=BrokerageState,
    initial_state=initial_state,
    tools_module=tools,
)
