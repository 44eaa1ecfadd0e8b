"""Expenses MCP server (finance): company expense management; `prove serve --stdio expenses` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.expenses import tools
from prove_servers.expenses.state import ExpenseState, initial_state

SERVER = ServerSpec.build(
    name="expenses",
    family="finance",
    description="Company expenses: employees, expense reports and items, policy, approvals, corporate cards, payouts.",
    state_model=ExpenseState,
    initial_state=initial_state,
    tools_module=tools,
)
