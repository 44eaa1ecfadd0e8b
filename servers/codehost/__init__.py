"""Code hosting MCP server (developer): repositories, branches, commits, issues, pull requests."""

from prove.env.registry import ServerSpec
from prove_servers.codehost import tools
from prove_servers.codehost.state import CodeHostState, initial_state

SERVER = ServerSpec.build(
    name="codehost",
    family="developer",
    description="Code hosting like GitHub: repositories, branches, commits, issues, pull requests, reviews.",
    state_model=CodeHostState,
    initial_state=initial_state,
    tools_module=tools,
)
