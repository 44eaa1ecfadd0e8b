"""Email MCP server (productivity): mailboxes, folders, mail, drafts, auto-reply; `prove serve --stdio email`."""

from prove.env.registry import ServerSpec
from prove_servers.email import tools
from prove_servers.email.state import EmailState, initial_state

SERVER = ServerSpec.build(
    name="email",
    family="productivity",
    description="Email service: mailboxes, folders, messages and threads, drafts, contacts, filters, auto-reply.",
    state_model=EmailState,
    initial_state=initial_state,
    tools_module=tools,
)
