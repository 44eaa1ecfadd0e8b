"""Wiki MCP server (knowledge): team spaces, page trees, revisions, comments; `prove serve --stdio wiki`."""

from prove.env.registry import ServerSpec
from prove_servers.wiki import tools
from prove_servers.wiki.state import WikiState, initial_state

SERVER = ServerSpec.build(
    name="wiki",
    family="knowledge",
    description="Team wiki: spaces, pages in trees, revisions, publishing, locks, comments, tags.",
    state_model=WikiState,
    initial_state=initial_state,
    tools_module=tools,
)
