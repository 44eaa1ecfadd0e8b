"""Banking MCP server (finance): the reference server; `prove serve --stdio banking` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.banking import tools
from prove_servers.banking.state import BankState, initial_state

SERVER = ServerSpec.build(
    name="banking",
    family="finance",
    description="Retail bank: customers, accounts, transactions, transfers, payees, cards.",
    state_model=BankState,
    initial_state=initial_state,
    tools_module=tools,
)
